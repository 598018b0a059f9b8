package classify

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// toy is a separable problem: questions about weather, requests for food, and a numeric cue
// that alone separates a third class.
func toy() []Example {
	var ex []Example
	weather := []string{"will it rain tomorrow?", "is it sunny today?", "how cold is it outside?", "any snow this week?", "what's the forecast?", "is a storm coming?"}
	food := []string{"order a pizza please", "get me some sushi", "I want a burger", "book a table for dinner", "order noodles for two", "bring me a salad"}
	for i := range weather {
		ex = append(ex,
			Example{Input: Input{Text: weather[i]}, Label: "weather"},
			Example{Input: Input{Text: food[i]}, Label: "food"},
			Example{Input: Input{Text: fmt.Sprintf("item %d", i), Extra: map[string]float64{"is_number": 1}}, Label: "number"},
		)
	}
	return ex
}

func toyOptions() Options {
	o := DefaultOptions()
	o.MinCount = 1
	o.CalibrationFolds = 0
	return o
}

func TestTrainLearnsSeparableProblem(t *testing.T) {
	t.Parallel()
	m, err := Train(toy(), toyOptions())
	require.NoError(t, err)
	require.Equal(t, []string{"food", "number", "weather"}, m.Labels())
	for _, ex := range toy() {
		label, probs := m.Predict(ex.Input)
		require.Equal(t, ex.Label, label, ex.Input.Text)
		require.InDelta(t, 1, probs[0]+probs[1]+probs[2], 1e-9)
	}
	tests := []struct {
		in   Input
		want string
	}{
		{Input{Text: "is it going to rain?"}, "weather"},
		{Input{Text: "order sushi for dinner"}, "food"},
		{Input{Text: "item 99", Extra: map[string]float64{"is_number": 1}}, "number"},
	}
	for _, tt := range tests {
		label, _ := m.Predict(tt.in)
		require.Equal(t, tt.want, label, tt.in.Text)
	}
}

func TestTrainIsDeterministic(t *testing.T) {
	t.Parallel()
	opts := toyOptions()
	opts.BatchSize = 4 // shuffled mini-batches: the seed must fix their order
	var files []string
	for range 2 {
		m, err := Train(toy(), opts)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, m.Save(&buf))
		files = append(files, buf.String())
	}
	require.Equal(t, files[0], files[1])
}

func TestTrainRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ex   []Example
		opts func(*Options)
	}{
		{"one label", []Example{{Input: Input{Text: "a"}, Label: "x"}}, func(*Options) {}},
		{"hash bits", toy(), func(o *Options) { o.HashBits = 30 }},
		{"epochs", toy(), func(o *Options) { o.Epochs = 0 }},
		{"learning rate", toy(), func(o *Options) { o.LearningRate = 0 }},
		{"negative l2", toy(), func(o *Options) { o.L2 = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := toyOptions()
			tt.opts(&o)
			_, err := Train(tt.ex, o)
			require.Error(t, err)
		})
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	t.Parallel()
	opts := toyOptions()
	opts.CalibrationFolds = 3
	m, err := Train(toy(), opts)
	require.NoError(t, err)
	require.NotEqual(t, 1.0, m.Temperature(), "calibration should move the temperature")

	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	loaded, err := LoadBytes(buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, m.Labels(), loaded.Labels())
	require.Equal(t, m.Options(), loaded.Options())
	require.Equal(t, m.Temperature(), loaded.Temperature())

	inputs := []Input{{Text: "will it snow?"}, {Text: "pizza"}, {Text: "item 3", Extra: map[string]float64{"is_number": 1}}, {Text: "unseen words only"}, {}}
	for _, ex := range toy() {
		inputs = append(inputs, ex.Input)
	}
	for _, in := range inputs {
		l1, p1 := m.Predict(in)
		l2, p2 := loaded.Predict(in)
		require.Equal(t, l1, l2, in.Text)
		require.Equal(t, p1, p2, in.Text) // identical, not just close
	}

	var again bytes.Buffer
	require.NoError(t, loaded.Save(&again))
	require.Equal(t, buf.String(), again.String())
}

func TestSavedModelIsSparseAndRounded(t *testing.T) {
	t.Parallel()
	m, err := Train(toy(), toyOptions())
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	require.Less(t, len(m.weights), 1000, "only buckets seen in training are kept")
	for _, w := range m.weights {
		for _, x := range w {
			require.Equal(t, round(x), x, "weights are kept to %d significant digits", significantDigits)
		}
	}
}

func TestMinCountPrunes(t *testing.T) {
	t.Parallel()
	all, err := Train(toy(), toyOptions())
	require.NoError(t, err)
	opts := toyOptions()
	opts.MinCount = 2
	pruned, err := Train(toy(), opts)
	require.NoError(t, err)
	require.Less(t, len(pruned.weights), len(all.weights))
}

func TestLoadRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, json string }{
		{"not json", "nope"},
		{"version", `{"version": 2, "labels": ["a","b"], "options": {"hash_bits": 18, "epochs": 1, "learning_rate": 1}, "temperature": 1, "bias": [0,0]}`},
		{"bias", `{"version": 1, "labels": ["a","b"], "options": {"hash_bits": 18, "epochs": 1, "learning_rate": 1}, "temperature": 1, "bias": [0]}`},
		{"bucket row", `{"version": 1, "labels": ["a","b"], "options": {"hash_bits": 18, "epochs": 1, "learning_rate": 1}, "temperature": 1, "bias": [0,0], "buckets": [[1, 0.5]]}`},
		{"bucket range", `{"version": 1, "labels": ["a","b"], "options": {"hash_bits": 8, "epochs": 1, "learning_rate": 1}, "temperature": 1, "bias": [0,0], "buckets": [[256, 0.5, 1]]}`},
		{"temperature", `{"version": 1, "labels": ["a","b"], "options": {"hash_bits": 18, "epochs": 1, "learning_rate": 1}, "temperature": 0, "bias": [0,0]}`},
		{"unknown field", `{"version": 1, "labels": ["a","b"], "options": {"hash_bits": 18, "epochs": 1, "learning_rate": 1}, "temperature": 1, "bias": [0,0], "weights": []}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadBytes([]byte(tt.json))
			require.Error(t, err)
		})
	}
}

func TestTokenize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"Why doesn't it work?", []string{"why", "doesn't", "it", "work", "?"}},
		{"run `go test` now", []string{"run", "`", "go", "test", "`", "now"}},
		{"v1.8 uses utf-8.", []string{"v1.8", "uses", "utf-8", "."}},
		{"Error: {x}", []string{"error", ":", "{", "x", "}"}},
		{"  ", nil},
		{"I 'm", []string{"i", "'", "m"}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, Tokenize(tt.in), tt.in)
	}
}

func TestFeaturizeNormalisesBlocks(t *testing.T) {
	t.Parallel()
	opts := DefaultOptions()
	opts.ContextWeight = 0.5
	tests := []struct {
		name string
		in   Input
		want float64 // squared norm: 1 per main block, ContextWeight² per context
	}{
		{"words and chars", Input{Text: "hello hello world"}, 2},
		{"with context", Input{Text: "hello", Context: map[string]string{"prev": "earlier turn"}}, 2.25},
		{"empty", Input{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var sq float64
			// Sum per bucket may merge blocks that collide; none do in these short texts.
			sparse, _ := featurize(tt.in, opts)
			for _, f := range sparse {
				sq += f.value * f.value
			}
			require.InDelta(t, tt.want, sq, 1e-9)
		})
	}
}

func TestSharedContextsChangeNoFeature(t *testing.T) {
	t.Parallel()
	a, b := DefaultOptions(), DefaultOptions()
	b.HashBits, b.ContextWeight = 12, 0.3 // another model reading the same inputs
	var shared Contexts
	sentence := "don't log the token, and keep the data in the EU, and rotate the key"
	for _, clause := range []string{"don't log the token", "keep the data in the EU", "rotate the key"} {
		for _, opts := range []Options{a, b} {
			in := Input{Text: clause, Context: map[string]string{"s": sentence, "prev": "which key?"}}
			want, _ := featurize(in, opts)
			in.Contexts = &shared
			got, _ := featurize(in, opts)
			require.Equal(t, want, got, "%q with options %+v", clause, opts)
		}
	}
	require.Len(t, shared.blocks, 4, "one block per context text and options")
}

func TestFoldsStratifiedAndDisjoint(t *testing.T) {
	t.Parallel()
	var labels []string
	for i := range 103 {
		labels = append(labels, []string{"a", "b", "b", "c", "c", "c"}[i%6])
	}
	const k = 5
	folds := Folds(labels, nil, k, 7)
	require.Len(t, folds, len(labels))
	perFold := map[string][]int{}
	for i, f := range folds {
		require.GreaterOrEqual(t, f, 0)
		require.Less(t, f, k)
		if perFold[labels[i]] == nil {
			perFold[labels[i]] = make([]int, k)
		}
		perFold[labels[i]][f]++
	}
	for label, counts := range perFold {
		require.LessOrEqual(t, slices.Max(counts)-slices.Min(counts), 1, "label %s: %v", label, counts)
	}
	// Every item is in exactly one fold: the folds partition the items.
	seen := map[int]bool{}
	for f := range k {
		for i, fi := range folds {
			if fi == f {
				require.False(t, seen[i])
				seen[i] = true
			}
		}
	}
	require.Len(t, seen, len(labels))

	require.Equal(t, folds, Folds(labels, nil, k, 7), "same seed, same folds")
	require.NotEqual(t, folds, Folds(labels, nil, k, 8), "the seed shuffles")
}

func TestFoldsKeepGroupsTogether(t *testing.T) {
	t.Parallel()
	var labels, groups []string
	for i := range 60 {
		labels = append(labels, []string{"x", "y"}[i%2])
		groups = append(groups, fmt.Sprintf("conversation-%d", i/4))
	}
	groups[0], groups[1] = "", "" // ungrouped items are groups of their own
	folds := Folds(labels, groups, 3, 1)
	byGroup := map[string]int{}
	for i, g := range groups {
		if g == "" {
			continue
		}
		if f, ok := byGroup[g]; ok {
			require.Equal(t, f, folds[i], "group %s split", g)
		}
		byGroup[g] = folds[i]
	}
	sizes := make([]int, 3)
	for _, f := range folds {
		sizes[f]++
	}
	require.LessOrEqual(t, slices.Max(sizes)-slices.Min(sizes), 4, "folds %v", sizes)
}

func TestCrossValidate(t *testing.T) {
	t.Parallel()
	ex := append(toy(), toy()...)
	preds, err := CrossValidate(ex, 3, toyOptions())
	require.NoError(t, err)
	require.Len(t, preds, len(ex))
	correct := 0
	for i, p := range preds {
		require.Len(t, p.Probs, 3)
		require.Equal(t, p.Probs[slices.Index(p.Labels, p.Label)], p.Confidence())
		if p.Label == ex[i].Label {
			correct++
		}
	}
	require.Greater(t, correct, len(ex)*3/4)

	_, err = CrossValidate(ex, 1, toyOptions())
	require.Error(t, err)
}

// TestCrossValidateWith checks the two choices it gives callers: which examples the fold
// models train on, and what a held-out example is predicted from.
func TestCrossValidateWith(t *testing.T) {
	t.Parallel()
	ex := append(toy(), toy()...)

	// Leaving every "food" example out of training leaves it out of every fold model's labels.
	noFood := func(_ int, idx []int) []int {
		return slices.DeleteFunc(idx, func(i int) bool { return ex[i].Label == "food" })
	}
	preds, err := CrossValidateWith(ex, 3, toyOptions(), noFood, nil)
	require.NoError(t, err)
	for _, p := range preds {
		require.NotContains(t, p.Labels, "food")
	}

	// Predicting every held-out example from one input gives one answer per fold model, and
	// held-out weather questions read as food requests.
	food := Input{Text: "order a pizza please"}
	preds, err = CrossValidateWith(ex, 3, toyOptions(), nil, func(int) Input { return food })
	require.NoError(t, err)
	for i, p := range preds {
		require.Equal(t, "food", p.Label, "example %d", i)
	}

	// Without choices it is CrossValidate.
	want, err := CrossValidate(ex, 3, toyOptions())
	require.NoError(t, err)
	got, err := CrossValidateWith(ex, 3, toyOptions(), nil, nil)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	// gold: a a a b b c; pred: a a b b c c
	// a: tp 2, predicted 2, support 3 -> P 1, R 2/3, F1 0.8
	// b: tp 1, predicted 2, support 2 -> P 1/2, R 1/2, F1 1/2
	// c: tp 1, predicted 2, support 1 -> P 1/2, R 1, F1 2/3
	r, err := Evaluate([]string{"a", "b", "c"},
		[]string{"a", "a", "a", "b", "b", "c"},
		[]string{"a", "a", "b", "b", "c", "c"})
	require.NoError(t, err)
	require.Equal(t, [][]int{{2, 1, 0}, {0, 1, 1}, {0, 0, 1}}, r.Confusion)
	require.InDelta(t, 4.0/6, r.Accuracy, 1e-12)
	want := []ClassMetrics{
		{Label: "a", Precision: 1, Recall: 2.0 / 3, F1: 0.8, Support: 3, Predicted: 2},
		{Label: "b", Precision: 0.5, Recall: 0.5, F1: 0.5, Support: 2, Predicted: 2},
		{Label: "c", Precision: 0.5, Recall: 1, F1: 2.0 / 3, Support: 1, Predicted: 2},
	}
	for i, w := range want {
		got := r.Classes[i]
		require.Equal(t, w.Label, got.Label)
		require.InDelta(t, w.Precision, got.Precision, 1e-12)
		require.InDelta(t, w.Recall, got.Recall, 1e-12)
		require.InDelta(t, w.F1, got.F1, 1e-12)
		require.Equal(t, w.Support, got.Support)
		require.Equal(t, w.Predicted, got.Predicted)
	}
	require.InDelta(t, (0.8+0.5+2.0/3)/3, r.MacroF1, 1e-12)

	var buf bytes.Buffer
	require.NoError(t, r.WriteText(&buf))
	require.Contains(t, buf.String(), "precision")
	require.Contains(t, buf.String(), "0.800")
	require.Contains(t, buf.String(), "gold a")
	require.Regexp(t, `(?m)^\s*a\s+1\.000\s+0\.667\s+0\.800\s`, buf.String(), "label, precision, recall, F1 first")
}

// Wilson intervals as published (Newcombe 1998, table I: 81/263 gives 0.2553-0.3662; 0/10
// gives 0-0.2775).
func TestWilson(t *testing.T) {
	t.Parallel()
	w := Wilson(81, 263)
	require.InDelta(t, 0.2553, w.Lo, 1e-4)
	require.InDelta(t, 0.3662, w.Hi, 1e-4)
	w = Wilson(0, 10)
	require.InDelta(t, 0, w.Lo, 1e-12)
	require.InDelta(t, 0.2775, w.Hi, 1e-4)
	w = Wilson(10, 10)
	require.InDelta(t, 0.7225, w.Lo, 1e-4)
	require.InDelta(t, 1, w.Hi, 1e-12)
}

func TestBootstrap(t *testing.T) {
	t.Parallel()
	// The mean of 100 coin flips, 50 heads: the interval is about 0.5 ± 0.1.
	mean := func(idx []int) float64 {
		s := 0
		for _, i := range idx {
			s += i % 2
		}
		return float64(s) / float64(len(idx))
	}
	ci := Bootstrap(100, mean)
	require.InDelta(t, 0.40, ci.Lo, 0.02)
	require.InDelta(t, 0.60, ci.Hi, 0.02)
	require.Equal(t, ci, Bootstrap(100, mean), "reproducible")
}

func TestEvaluateEdgeCases(t *testing.T) {
	t.Parallel()
	r, err := Evaluate([]string{"a", "b"}, []string{"a", "a"}, []string{"a", "a"})
	require.NoError(t, err)
	b := r.Classes[1]
	require.Equal(t, [5]float64{0, 0, 0, 0, 0}, [5]float64{b.Precision, b.Recall, b.F1, float64(b.Support), float64(b.Predicted)},
		"no support and no predictions: all zero")
	require.Equal(t, Interval{0, 1}, b.RecallCI, "and nothing known about them")

	_, err = Evaluate([]string{"a"}, []string{"a"}, []string{"a", "a"})
	require.Error(t, err)
	_, err = Evaluate([]string{"a"}, []string{"a"}, []string{"z"})
	require.Error(t, err)
}

func TestFitTemperature(t *testing.T) {
	t.Parallel()
	// Scores that are right 3 times in 4 with a margin of 4: the calibrated probability of the
	// top label should come out near 0.75, i.e. the scores are overconfident and T > 1.
	var scores [][]float64
	var gold []int
	for i := range 400 {
		scores = append(scores, []float64{4, 0})
		gold = append(gold, map[bool]int{true: 0, false: 1}[i%4 != 0])
	}
	temp := fitTemperature(scores, gold)
	p := softmax([]float64{4, 0}, temp)[0]
	require.InDelta(t, 0.75, p, 1e-3)
}
