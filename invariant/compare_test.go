package invariant

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/classify"
)

// dropGroups leaves out whole conversations, at least 5% of the messages, the same ones for the
// same seed and fold, others for another seed, and nothing for seed 0.
func TestDropGroups(t *testing.T) {
	t.Parallel()
	var tr []Example
	size := map[string]int{}
	for i := range 41 { // 61 messages: 5% is 3.05, so at least 4 go
		tr = append(tr, Example{ID: fmt.Sprintf("a-%d", i)})
	}
	for c := range 5 {
		for j := range 4 {
			tr = append(tr, Example{ID: fmt.Sprintf("r-%d-%d", c, j), Source: fmt.Sprintf("real:conv%d#%d", c, j)})
		}
	}
	for _, ex := range tr {
		size[group(ex)]++
	}
	want := int(math.Ceil(0.05 * float64(len(tr))))

	require.Equal(t, tr, dropGroups(tr, 0, 0), "seed 0 drops nothing")
	wholeConversation := false
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 30; seed++ {
		for fold := range 2 {
			got := dropGroups(tr, seed, fold)
			require.Equal(t, got, dropGroups(tr, seed, fold), "deterministic")
			left := map[string]int{}
			for _, ex := range got {
				left[group(ex)]++
			}
			dropped := len(tr) - len(got)
			require.GreaterOrEqual(t, dropped, want)
			require.Less(t, dropped, want+4, "stops once enough are gone")
			for g, n := range size {
				require.Contains(t, []int{0, n}, left[g], "group %s dropped whole or not at all", g)
				if n > 1 && left[g] == 0 {
					wholeConversation = true
				}
			}
			seen[fmt.Sprint(got)] = true
		}
	}
	require.True(t, wholeConversation, "some seed drops a conversation of 4 turns")
	require.Greater(t, len(seen), 20, "seeds and folds drop different messages")
}

// The same options paired over perturbations differ by exactly nothing, also against a run saved
// and read back as another tree's would be; options that train different models do not.
func TestCompare(t *testing.T) {
	t.Parallel()
	d := data(t)
	d.Rows, d.Extra = d.Rows[:90], d.Extra[:30]

	base, err := Perturbed(d, TrainOptions(), 2, 2, nil)
	require.NoError(t, err)
	require.Len(t, base.Seeds, 2)
	require.NotEqual(t, base.Seeds[0], base.Seeds[1], "the perturbations train different models")
	path := filepath.Join(t.TempDir(), "b.json")
	require.NoError(t, base.Save(path))
	saved, err := LoadPredictions(path, d, 2, 2)
	require.NoError(t, err)
	require.Equal(t, base, saved, "predictions round-trip")

	again, err := Perturbed(d, TrainOptions(), 2, 2, nil)
	require.NoError(t, err)
	same, err := Compare(d, saved, again)
	require.NoError(t, err)
	require.Len(t, same.Base, 2)
	for m := range Metrics {
		require.Equal(t, []float64{0, 0}, same.Diffs(m), Metrics[m].Name)
	}
	require.Equal(t, 0.0, same.MicroF1Diff.Lo)
	require.Equal(t, 0.0, same.MicroF1Diff.Hi)
	require.NotEqual(t, same.Base[0], same.Base[1])

	cand := TrainOptions()
	cand.L2 *= 100
	c, err := Perturbed(d, cand, 2, 2, nil)
	require.NoError(t, err)
	require.Equal(t, cand, c.Options)
	diff, err := Compare(d, saved, c)
	require.NoError(t, err)
	require.Equal(t, same.Base, diff.Base, "the baseline does not depend on the candidate")
	moved := false
	for m := range Metrics {
		for _, x := range diff.Diffs(m) {
			moved = moved || x != 0
		}
	}
	require.True(t, moved, "a candidate with 100 times the L2 penalty scores differently")
	require.LessOrEqual(t, diff.MicroF1Diff.Lo, diff.MicroF1Diff.Hi)
}

// The interval of the safety spans found on the extra rows is [0, 0] against the same spans, however
// the other rows differ; a candidate that finds every gold safety span of the extra rows in one
// perturbation, against a baseline that finds none there, gains half of them over two, and its
// interval lies above 0.
func TestCompareSafetyExtra(t *testing.T) {
	t.Parallel()
	d := data(t)
	all := append(slices.Clip(d.Rows), d.Extra...)
	spans := func(safetyFrom int) Perturbation {
		p := Perturbation{CV619: make([][]Span, len(d.Rows)), All: make([][]Span, len(all))}
		for i := safetyFrom; i < len(all); i++ {
			for _, l := range all[i].Labels {
				if l.Type == Safety {
					p.All[i] = append(p.All[i], Span{Type: l.Type, Text: l.Span, Start: l.Start, End: l.End})
				}
			}
		}
		return p
	}
	preds := func(seeds ...Perturbation) Predictions {
		return Predictions{Version: classify.PredictionsVersion, Rows: ids(d.Rows), Extra: ids(d.Extra), Hash: rowsHash(d),
			K: len(seeds), Folds: 5, Seeds: seeds}
	}
	gold := 0
	for _, ex := range d.Extra {
		for _, l := range ex.Labels {
			if l.Type == Safety {
				gold++
			}
		}
	}
	require.Greater(t, gold, 10)

	// Against its own predictions, and against others with the same spans on the extra rows.
	own := preds(spans(0), spans(len(d.Rows)))
	c, err := Compare(d, own, own)
	require.NoError(t, err)
	require.Equal(t, classify.Interval{}, c.SafetyExtraDiff)
	c, err = Compare(d, own, preds(spans(len(d.Rows)), spans(0)))
	require.NoError(t, err)
	require.Equal(t, classify.Interval{}, c.SafetyExtraDiff, "the same spans on the extra rows")

	c, err = Compare(d, preds(spans(len(all)), spans(len(d.Rows))), preds(spans(0), spans(0)))
	require.NoError(t, err)
	at := slices.IndexFunc(Metrics, func(m Metric) bool { return m.Name == "safety spans extra" })
	require.Equal(t, []float64{float64(gold), 0}, c.Diffs(at))
	mean := float64(gold) / 2
	require.Greater(t, c.SafetyExtraDiff.Lo, 0.0)
	require.Less(t, c.SafetyExtraDiff.Lo, mean)
	require.Greater(t, c.SafetyExtraDiff.Hi, mean)
}

// Predictions pair only with the messages, K and folds they were made of; a detector that reads
// another P(DEBUGGING) (other mode data) is scored on the same messages and pairs.
func TestPredictionsMatch(t *testing.T) {
	t.Parallel()
	d := data(t)
	d.Rows, d.Extra = d.Rows[:4], d.Extra[:2]
	p := Predictions{Version: classify.PredictionsVersion, Rows: ids(d.Rows), Extra: ids(d.Extra), Hash: rowsHash(d), K: 1, Folds: 2,
		Seeds: []Perturbation{{CV619: make([][]Span, 4), All: make([][]Span, 6)}}}
	require.NoError(t, match(p, d, 1, 2))
	other := d
	other.Debugging = func(string) float64 { return 1 }
	require.NoError(t, match(p, other, 1, 2))

	edited := d
	edited.Rows = slices.Clone(d.Rows)
	edited.Rows[1].Text += " Never log the token."
	relabelled := d
	relabelled.Extra = slices.Clone(d.Extra)
	relabelled.Extra[0].Labels = nil
	added := d
	added.Extra = append(slices.Clip(d.Extra), d.Rows[0])
	short := p
	short.Seeds = []Perturbation{{CV619: make([][]Span, 4), All: make([][]Span, 5)}}
	for _, c := range []struct {
		p         Predictions
		d         Data
		k, folds  int
		complaint string
	}{
		{p, edited, 1, 2, "the same ids but other contents"},
		{p, relabelled, 1, 2, "the same ids but other contents"},
		{p, added, 1, 2, "4 rows and 2 extra rows, this data has 4 and 3 (" + d.Rows[0].ID + " is not in them)"},
		{p, d, 2, 2, "1 perturbations of 2-fold cross-validations, not 2 of 2 folds"},
		{p, d, 1, 5, "not 1 of 5 folds"},
		{short, d, 1, 2, "spans of 4 and 5 messages"},
	} {
		err := match(c.p, c.d, c.k, c.folds)
		require.ErrorIs(t, err, classify.ErrOtherPredictions)
		require.ErrorContains(t, err, c.complaint)
	}

	path := filepath.Join(t.TempDir(), "p.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 2, "rows": 3}`), 0o644))
	_, err := LoadPredictions(path, d, 1, 2)
	require.ErrorIs(t, err, classify.ErrOtherPredictions)
	require.ErrorContains(t, err, "format version 2, this build reads version 1")
}
