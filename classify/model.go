package classify

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"github.com/ragd/ragd/wordvec"
)

// Options are a model's hyperparameters. The featurization ones are saved with the model and
// must not change between training and prediction; the training ones are saved for the record.
type Options struct {
	// HashBits is the size of the hashed feature space: 2^HashBits buckets.
	HashBits int `json:"hash_bits"`
	// CharNGrams adds character 3- to 5-grams of the main text's words.
	CharNGrams bool `json:"char_ngrams"`
	// ContextWeight scales each context block (after its own L2 normalisation) relative to the
	// main text, whose blocks have norm 1.
	ContextWeight float64 `json:"context_weight"`
	// WordVectors is the weight of the dense word-vector block (wordVectors): the mean vector of
	// the main text's words in package wordvec's table, L2-normalised, times this weight. 0 means
	// no block, and a model without it reads and scores as before the option existed.
	WordVectors float64 `json:"word_vectors,omitempty"`

	// MinCount drops hashed features seen in fewer training examples: they cannot generalise,
	// and they are most of a model file's size.
	MinCount int `json:"min_count"`
	// L2 is the regularisation strength: the loss is the mean cross-entropy plus L2/2 times the
	// squared norm of the weights (biases are not regularised).
	L2 float64 `json:"l2"`
	// Epochs is the number of passes over the training data.
	Epochs int `json:"epochs"`
	// BatchSize is the mini-batch size; 0 means full batch.
	BatchSize int `json:"batch_size"`
	// LearningRate is AdaGrad's base step.
	LearningRate float64 `json:"learning_rate"`
	// Seed fixes the order of mini-batches and the assignment of cross-validation folds, so
	// training is reproducible to the bit.
	Seed uint64 `json:"seed"`
	// BalanceClasses weighs each example by n / (labels × examples of its label), so that every
	// label counts as much in the loss as the others however many examples it has: a model
	// trained on extra data of uneven labels keeps the prior of balanced data.
	BalanceClasses bool `json:"balance_classes,omitempty"`
	// CalibrationFolds, when at least 2, fits a softmax temperature on out-of-fold scores from
	// that many folds of the training data, so that probabilities can be compared with a
	// threshold. Otherwise the temperature is 1.
	CalibrationFolds int `json:"calibration_folds"`
}

// DefaultOptions returns options that work for short chat turns and a few hundred examples.
func DefaultOptions() Options {
	return Options{
		HashBits:         18,
		CharNGrams:       true,
		ContextWeight:    0.5,
		MinCount:         2,
		L2:               1e-3,
		Epochs:           200,
		BatchSize:        0,
		LearningRate:     0.5,
		Seed:             1,
		CalibrationFolds: 5,
	}
}

func (o Options) validate() error {
	switch {
	case o.HashBits < 8 || o.HashBits > 24:
		return fmt.Errorf("classify: HashBits %d outside [8, 24]", o.HashBits)
	case o.Epochs <= 0:
		return fmt.Errorf("classify: Epochs %d must be positive", o.Epochs)
	case o.LearningRate <= 0:
		return fmt.Errorf("classify: LearningRate %g must be positive", o.LearningRate)
	case o.L2 < 0 || o.ContextWeight < 0 || o.BatchSize < 0:
		return errors.New("classify: L2, ContextWeight and BatchSize must not be negative")
	case !(o.WordVectors >= 0) || math.IsInf(o.WordVectors, 1):
		return fmt.Errorf("classify: WordVectors %g must be a finite number, not negative", o.WordVectors)
	}
	return nil
}

// Example is one labelled training input.
type Example struct {
	Input Input
	Label string
	// Group keeps related examples (turns of one conversation, near-duplicates) in the same
	// cross-validation fold. Empty means the example is a group of its own.
	Group string
}

// Model is a trained multinomial logistic regression over hashed text features and named
// extra features. It is safe for concurrent use.
type Model struct {
	labels      []string
	opts        Options
	temperature float64
	bias        []float64
	weights     map[uint32][]float64 // bucket -> one weight per label
	extra       map[string][]float64 // extra feature name -> one weight per label
	// dense holds one weight per label for each dimension of the word-vector block; nil
	// when Options.WordVectors is 0.
	dense [][]float64
}

// Labels returns the model's labels, in the order of Predict's probabilities.
func (m *Model) Labels() []string { return slices.Clone(m.labels) }

// Options returns the options the model was trained with.
func (m *Model) Options() Options { return m.opts }

// Temperature returns the softmax temperature fitted by calibration (1 without it).
func (m *Model) Temperature() float64 { return m.temperature }

// Predict returns the most probable label and the probabilities of all labels, in the order of
// Labels.
func (m *Model) Predict(in Input) (string, []float64) {
	probs := softmax(m.scores(in), m.temperature)
	return m.labels[argmax(probs)], probs
}

// scores returns the linear scores (logits at temperature 1) of each label.
func (m *Model) scores(in Input) []float64 {
	s := slices.Clone(m.bias)
	sparse, dense := featurize(in, m.opts)
	for _, f := range sparse {
		if w, ok := m.weights[f.bucket]; ok {
			for c := range s {
				s[c] += f.value * w[c]
			}
		}
	}
	for _, name := range sortedKeys(in.Extra) {
		if w, ok := m.extra[name]; ok {
			v := in.Extra[name]
			for c := range s {
				s[c] += v * w[c]
			}
		}
	}
	for j, v := range dense {
		for c := range s {
			s[c] += v * m.dense[j][c]
		}
	}
	return s
}

// Train fits a model to the examples. The same examples and options always give the same
// model, to the bit.
func Train(examples []Example, opts Options) (*Model, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	labels := labelSet(examples)
	if len(labels) < 2 {
		return nil, fmt.Errorf("classify: need at least 2 labels, have %d", len(labels))
	}
	m := fit(examples, labels, opts)
	m.temperature = 1
	if opts.CalibrationFolds >= 2 {
		inner := opts
		inner.CalibrationFolds = 0
		folds := Folds(exampleLabels(examples), exampleGroups(examples), opts.CalibrationFolds, opts.Seed)
		scores := outOfFold(examples, labels, folds, inner)
		gold := make([]int, len(examples))
		for i, ex := range examples {
			gold[i] = slices.Index(labels, ex.Label)
		}
		m.temperature = round(fitTemperature(scores, gold))
	}
	return m, nil
}

// outOfFold returns, for every example, the scores of a model trained without its fold.
func outOfFold(examples []Example, labels []string, folds []int, opts Options) [][]float64 {
	scores := make([][]float64, len(examples))
	for f := range slices.Max(folds) + 1 {
		var train, test []int
		for i, fi := range folds {
			if fi == f {
				test = append(test, i)
			} else {
				train = append(train, i)
			}
		}
		sub := make([]Example, len(train))
		for j, i := range train {
			sub[j] = examples[i]
		}
		m := fit(sub, labels, opts)
		for _, i := range test {
			scores[i] = m.scores(examples[i].Input)
		}
	}
	return scores
}

// fit trains the weights with AdaGrad on the mean cross-entropy plus the L2 penalty, and
// returns a model with weights rounded as they will be saved, so that a model in memory and
// the same model loaded from its file predict identically.
func fit(examples []Example, labels []string, opts Options) *Model {
	nc := len(labels)
	labelIndex := make(map[string]int, nc)
	for i, l := range labels {
		labelIndex[l] = i
	}

	// Featurize once; keep buckets seen in at least MinCount examples.
	feats := make([][]feature, len(examples))
	dense := make([][]float64, len(examples))
	df := map[uint32]int{}
	for i, ex := range examples {
		feats[i], dense[i] = featurize(ex.Input, opts)
		for _, f := range feats[i] {
			df[f.bucket]++
		}
	}
	var buckets []uint32
	for b, n := range df {
		if n >= max(opts.MinCount, 1) {
			buckets = append(buckets, b)
		}
	}
	slices.Sort(buckets)
	col := make(map[uint32]int, len(buckets))
	for i, b := range buckets {
		col[b] = i
	}
	extraNames := extraSet(examples)
	nd := 0 // dense columns, after the buckets and extras
	if opts.WordVectors != 0 {
		nd = wordvec.Dim
	}
	nf := len(buckets) + len(extraNames) + nd

	// Rows as sparse (column, value) pairs over buckets then extras.
	type entry struct {
		col int
		val float64
	}
	rows := make([][]entry, len(examples))
	gold := make([]int, len(examples))
	for i, ex := range examples {
		gold[i] = labelIndex[ex.Label]
		for _, f := range feats[i] {
			if c, ok := col[f.bucket]; ok {
				rows[i] = append(rows[i], entry{c, f.value})
			}
		}
		for j, name := range extraNames {
			if v, ok := ex.Input.Extra[name]; ok && v != 0 {
				rows[i] = append(rows[i], entry{len(buckets) + j, v})
			}
		}
		for j, v := range dense[i] {
			if v != 0 {
				rows[i] = append(rows[i], entry{len(buckets) + len(extraNames) + j, v})
			}
		}
	}

	w := make([]float64, nf*nc) // w[col*nc + class]
	b := make([]float64, nc)
	gw := make([]float64, nf*nc)
	gb := make([]float64, nc)
	aw := make([]float64, nf*nc) // AdaGrad accumulators
	ab := make([]float64, nc)
	const eps = 1e-8

	order := make([]int, len(examples))
	for i := range order {
		order[i] = i
	}
	weight := make([]float64, nc)
	for c := range weight {
		weight[c] = 1
	}
	if opts.BalanceClasses {
		count := make([]int, nc)
		for _, g := range gold {
			count[g]++
		}
		for c, n := range count {
			if n > 0 {
				weight[c] = float64(len(gold)) / float64(nc*n)
			}
		}
	}
	batch := opts.BatchSize
	if batch == 0 || batch > len(examples) {
		batch = len(examples)
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15))
	s := make([]float64, nc)
	for range opts.Epochs {
		if batch < len(examples) {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		for start := 0; start < len(order); start += batch {
			idx := order[start:min(start+batch, len(order))]
			clear(gw)
			clear(gb)
			for _, i := range idx {
				copy(s, b)
				for _, e := range rows[i] {
					for c := range nc {
						s[c] += e.val * w[e.col*nc+c]
					}
				}
				p := softmax(s, 1)
				p[gold[i]]--
				if wi := weight[gold[i]]; wi != 1 {
					for c := range p {
						p[c] *= wi
					}
				}
				for _, e := range rows[i] {
					for c := range nc {
						gw[e.col*nc+c] += e.val * p[c]
					}
				}
				for c := range nc {
					gb[c] += p[c]
				}
			}
			inv := 1 / float64(len(idx))
			for k := range w {
				g := gw[k]*inv + opts.L2*w[k]
				if g == 0 {
					continue
				}
				aw[k] += g * g
				w[k] -= opts.LearningRate * g / (math.Sqrt(aw[k]) + eps)
			}
			for c := range nc {
				g := gb[c] * inv
				ab[c] += g * g
				b[c] -= opts.LearningRate * g / (math.Sqrt(ab[c]) + eps)
			}
		}
	}

	m := &Model{
		labels:  labels,
		opts:    opts,
		bias:    roundAll(b),
		weights: make(map[uint32][]float64, len(buckets)),
		extra:   make(map[string][]float64, len(extraNames)),
	}
	m.temperature = 1
	for i, bk := range buckets {
		if row := roundAll(w[i*nc : (i+1)*nc]); !allZero(row) {
			m.weights[bk] = row
		}
	}
	for j, name := range extraNames {
		i := len(buckets) + j
		m.extra[name] = roundAll(w[i*nc : (i+1)*nc])
	}
	for j := range nd {
		i := len(buckets) + len(extraNames) + j
		m.dense = append(m.dense, roundAll(w[i*nc:(i+1)*nc]))
	}
	return m
}

// fitTemperature finds the temperature T minimising the mean negative log-likelihood of
// softmax(scores/T), by golden-section search over ln T in [ln 0.05, ln 20]. The NLL is convex
// in 1/T, so the search finds the one minimum.
func fitTemperature(scores [][]float64, gold []int) float64 {
	nll := func(logT float64) float64 {
		t := math.Exp(logT)
		var sum float64
		for i, s := range scores {
			sum -= math.Log(max(softmax(s, t)[gold[i]], 1e-300))
		}
		return sum / float64(len(scores))
	}
	lo, hi := math.Log(0.05), math.Log(20)
	phi := (math.Sqrt(5) - 1) / 2
	a, b := hi-phi*(hi-lo), lo+phi*(hi-lo)
	fa, fb := nll(a), nll(b)
	for range 100 {
		if fa < fb {
			hi, b, fb = b, a, fa
			a = hi - phi*(hi-lo)
			fa = nll(a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + phi*(hi-lo)
			fb = nll(b)
		}
	}
	return math.Exp((lo + hi) / 2)
}

// softmax returns the probabilities of scores at temperature t.
func softmax(scores []float64, t float64) []float64 {
	p := make([]float64, len(scores))
	top := slices.Max(scores)
	var sum float64
	for i, s := range scores {
		p[i] = math.Exp((s - top) / t)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// argmax returns the index of the largest value, the first one on ties.
func argmax(v []float64) int {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return best
}

// significantDigits is how precisely weights are kept. Four digits change no prediction that
// matters and keep model files small enough to commit.
const significantDigits = 4

func round(x float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', significantDigits, 64), 64)
	return r
}

func roundAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = round(x)
	}
	return out
}

func allZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func labelSet(examples []Example) []string {
	seen := map[string]bool{}
	for _, ex := range examples {
		seen[ex.Label] = true
	}
	return sortedKeys(seen)
}

func extraSet(examples []Example) []string {
	seen := map[string]bool{}
	for _, ex := range examples {
		for name := range ex.Input.Extra {
			seen[name] = true
		}
	}
	return sortedKeys(seen)
}

func exampleLabels(examples []Example) []string {
	out := make([]string, len(examples))
	for i, ex := range examples {
		out[i] = ex.Label
	}
	return out
}

func exampleGroups(examples []Example) []string {
	out := make([]string, len(examples))
	for i, ex := range examples {
		out[i] = ex.Group
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
