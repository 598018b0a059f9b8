package classify

import (
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Folds assigns every item to one of k cross-validation folds, keeping each group in a single
// fold and each label's share about equal across folds. groups may be nil; an empty group
// means the item is a group of its own. The same inputs always give the same folds.
//
// Groups are placed one at a time, largest first (ties in a seeded random order), each into
// the fold where its labels are rarest so far, counting each label relative to its total so
// that small classes are spread as evenly as large ones; remaining ties go to the smaller
// fold, then the lower index. Without groups this puts every label's items into the folds
// round-robin, so per-fold counts of a label differ by at most one.
func Folds(labels, groups []string, k int, seed uint64) []int {
	type group struct {
		items  []int
		labels map[string]int
	}
	var (
		order []*group
		byKey = map[string]*group{}
		total = map[string]int{}
	)
	for i, l := range labels {
		total[l]++
		key := ""
		if groups != nil {
			key = groups[i]
		}
		g := byKey[key]
		if key == "" || g == nil {
			g = &group{labels: map[string]int{}}
			order = append(order, g)
			if key != "" {
				byKey[key] = g
			}
		}
		g.items = append(g.items, i)
		g.labels[l]++
	}
	rng := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	slices.SortStableFunc(order, func(a, b *group) int { return cmp.Compare(len(b.items), len(a.items)) })

	counts := make([]map[string]int, k)
	sizes := make([]int, k)
	for f := range counts {
		counts[f] = map[string]int{}
	}
	fold := make([]int, len(labels))
	for _, g := range order {
		best, bestCost := 0, 0.0
		for f := range k {
			var cost float64
			for _, l := range sortedKeys(g.labels) {
				cost += float64(g.labels[l]) * float64(counts[f][l]) / float64(total[l])
			}
			if f == 0 || cost < bestCost || (cost == bestCost && sizes[f] < sizes[best]) {
				best, bestCost = f, cost
			}
		}
		for l, n := range g.labels {
			counts[best][l] += n
		}
		sizes[best] += len(g.items)
		for _, i := range g.items {
			fold[i] = best
		}
	}
	return fold
}

// Prediction is a model's answer for one input.
type Prediction struct {
	Label string
	// Probs are the probabilities of the model's labels, in the order of Model.Labels.
	Probs []float64
	// Labels are the model's labels.
	Labels []string
}

// Confidence returns the probability of the predicted label.
func (p Prediction) Confidence() float64 { return p.Probs[slices.Index(p.Labels, p.Label)] }

// CrossValidate trains on k-1 folds and predicts the remaining one, k times, and returns the
// out-of-fold prediction for every example. Folds come from Folds with the examples' groups and
// opts.Seed. Each fold's model is trained with Train, calibration included, exactly as a final
// model would be.
func CrossValidate(examples []Example, k int, opts Options) ([]Prediction, error) {
	return CrossValidateWith(examples, k, opts, nil, nil)
}

// CrossValidateWith is CrossValidate for callers that choose which of the other folds'
// examples fold f's model trains on (train, given f and the indexes of those examples in order,
// returns the ones to train on; nil: all of them), and what a held-out example is predicted
// from (input; nil: its own Input), such as a serving path that sees less than training does.
// The folds are CrossValidate's, whatever train and input say.
func CrossValidateWith(examples []Example, k int, opts Options, train func(fold int, idx []int) []int, input func(i int) Input) ([]Prediction, error) {
	if k < 2 {
		return nil, fmt.Errorf("classify: cross-validation needs at least 2 folds, got %d", k)
	}
	folds := Folds(exampleLabels(examples), exampleGroups(examples), k, opts.Seed)
	out := make([]Prediction, len(examples))
	for f := range k {
		var idx []int
		for i, fi := range folds {
			if fi != f {
				idx = append(idx, i)
			}
		}
		if train != nil {
			idx = train(f, idx)
		}
		set := make([]Example, len(idx))
		for j, i := range idx {
			set[j] = examples[i]
		}
		m, err := Train(set, opts)
		if err != nil {
			return nil, fmt.Errorf("classify: fold %d: %w", f, err)
		}
		labels := m.Labels()
		for i, fi := range folds {
			if fi != f {
				continue
			}
			in := examples[i].Input
			if input != nil {
				in = input(i)
			}
			label, probs := m.Predict(in)
			out[i] = Prediction{Label: label, Probs: probs, Labels: labels}
		}
	}
	return out, nil
}

// ClassMetrics are one label's figures in a Report.
type ClassMetrics struct {
	Label string
	// Precision is the share of predictions of this label that are right (0 when there are
	// none), Recall the share of gold items of this label that are found, F1 their harmonic
	// mean (0 when both are 0).
	Precision, Recall, F1 float64
	// Support is the number of gold items of this label; Predicted the number of predictions.
	Support, Predicted int
	// PrecisionCI and RecallCI are Wilson 95% intervals; F1CI is a bootstrap 95% interval over
	// the items.
	PrecisionCI, RecallCI, F1CI Interval
}

// Report holds the usual figures for a set of predictions against gold labels.
type Report struct {
	Labels []string
	// Confusion[i][j] counts items of gold label Labels[i] predicted as Labels[j].
	Confusion [][]int
	Accuracy  float64
	// AccuracyCI is the Wilson 95% interval of Accuracy.
	AccuracyCI Interval
	Classes    []ClassMetrics
	// MacroF1 is the unweighted mean of the classes' F1.
	MacroF1 float64
	N       int
}

// Evaluate compares predictions with gold labels. labels fixes the order of the report; a gold
// or predicted label outside it is an error.
func Evaluate(labels, gold, pred []string) (Report, error) {
	if len(gold) != len(pred) {
		return Report{}, fmt.Errorf("classify: %d gold labels but %d predictions", len(gold), len(pred))
	}
	r := Report{Labels: slices.Clone(labels), Confusion: make([][]int, len(labels)), N: len(gold)}
	for i := range r.Confusion {
		r.Confusion[i] = make([]int, len(labels))
	}
	correct := 0
	for i := range gold {
		g, p := slices.Index(labels, gold[i]), slices.Index(labels, pred[i])
		if g < 0 || p < 0 {
			return Report{}, fmt.Errorf("classify: label %q or %q is not in %v", gold[i], pred[i], labels)
		}
		r.Confusion[g][p]++
		if g == p {
			correct++
		}
	}
	if r.N > 0 {
		r.Accuracy = float64(correct) / float64(r.N)
	}
	r.AccuracyCI = Wilson(correct, r.N)
	for i, l := range labels {
		c := ClassMetrics{Label: l}
		for j := range labels {
			c.Support += r.Confusion[i][j]
			c.Predicted += r.Confusion[j][i]
		}
		tp := r.Confusion[i][i]
		if c.Predicted > 0 {
			c.Precision = float64(tp) / float64(c.Predicted)
		}
		if c.Support > 0 {
			c.Recall = float64(tp) / float64(c.Support)
		}
		c.F1 = F1(c.Precision, c.Recall)
		c.PrecisionCI, c.RecallCI = Wilson(tp, c.Predicted), Wilson(tp, c.Support)
		c.F1CI = Bootstrap(len(gold), func(idx []int) float64 {
			var tp, support, predicted int
			for _, j := range idx {
				g, p := gold[j] == l, pred[j] == l
				if g && p {
					tp++
				}
				if g {
					support++
				}
				if p {
					predicted++
				}
			}
			if tp == 0 {
				return 0
			}
			return F1(float64(tp)/float64(predicted), float64(tp)/float64(support))
		})
		r.Classes = append(r.Classes, c)
		r.MacroF1 += c.F1 / float64(len(labels))
	}
	return r, nil
}

// WriteText writes the report as two plain-text tables: per label its precision, recall and F1
// (in 0..1, in that order right after the label, so scripts can read them), support,
// predictions and the 95% intervals of the three figures; then the confusion matrix (rows gold,
// columns predicted, each row starting "gold").
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "label\tprecision\trecall\tF1\tsupport\tpredicted\tprecision 95%\trecall 95%\tF1 95%\t")
	for _, c := range r.Classes {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%d\t%d\t%s\t%s\t%s\t\n", c.Label, c.Precision, c.Recall, c.F1,
			c.Support, c.Predicted, c.PrecisionCI, c.RecallCI, c.F1CI)
	}
	fmt.Fprintf(tw, "accuracy\t%.3f\t\t\t%d\t\t%s\t\t\t\n", r.Accuracy, r.N, r.AccuracyCI)
	fmt.Fprintf(tw, "macro F1\t\t\t%.3f\t\t\t\t\t\t\n", r.MacroF1)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// Rows start "gold", so that a line starting with a label is always its figures.
	fmt.Fprintf(tw, "confusion\t%s\t\n", strings.Join(r.Labels, "\t"))
	for i, l := range r.Labels {
		cells := make([]string, len(r.Confusion[i]))
		for j, n := range r.Confusion[i] {
			cells[j] = strconv.Itoa(n)
		}
		fmt.Fprintf(tw, "gold %s\t%s\t\n", l, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
