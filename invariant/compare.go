package invariant

import (
	"fmt"
	"slices"

	"github.com/ragd/ragd/classify"
)

// A single cross-validation cannot tell two option sets apart: the baseline retrained without 5%
// of its messages fails the no-harm rules against itself in most pairs. Compare therefore pairs
// them over K perturbations of training (CrossValidatePerturbed, seeds 1..K, the same dropped
// messages for both) and reports the mean over k of candidate_k - baseline_k.

// Metric is one figure of a cross-validated detector that Compare reports.
type Metric struct {
	Name string
	// Count is true for figures that count spans or messages, false for ratios in 0..1.
	Count bool
	of    func(cv619, cv913, extra Report) float64
}

// Metrics are Compare's figures, in the order it reports them. "619" is the cross-validation of
// Data.Rows (extra rows in training folds only), "913all" the one where the extra rows sit in
// folds too, and "extra" the extra rows scored in it (cmd/ragd-train -task invariant prints
// both cross-validations).
var Metrics = []Metric{
	{"sticky F2 619", false, func(a, _, _ Report) float64 { return f2(a.Sticky) }},
	{"false alarms 619", true, func(a, _, _ Report) float64 { return float64(a.FalseAlarms) }},
	{"hard R 619", false, func(a, _, _ Report) float64 { return recall(*a.Types[Constraint]) }},
	{"blocking R 619", false, func(a, _, _ Report) float64 { return recall(*a.Types[Blocking]) }},
	{"correction R 619", false, func(a, _, _ Report) float64 { return recall(*a.Types[Correction]) }},
	{"sticky F2 913all", false, func(_, b, _ Report) float64 { return f2(b.Sticky) }},
	{"rules spans 913all", true, func(_, b, _ Report) float64 { return float64(b.Rules.GoldOK) }},
	{"false alarms 913all", true, func(_, b, _ Report) float64 { return float64(b.FalseAlarms) }},
	{"typed micro-F1 913all", false, func(_, b, _ Report) float64 { return microF1(b.Micro) }},
	{"sticky F2 extra", false, func(_, _, e Report) float64 { return f2(e.Sticky) }},
	{"rules spans extra", true, func(_, _, e Report) float64 { return float64(e.Rules.GoldOK) }},
	{"safety spans extra", true, func(_, _, e Report) float64 { return float64(e.Types[Safety].GoldOK) }},
	{"false alarms extra", true, func(_, _, e Report) float64 { return float64(e.FalseAlarms) }},
	{"typed safety R extra", false, func(_, _, e Report) float64 { return recall(*e.Types[Safety]) }},
	{"typed hard R extra", false, func(_, _, e Report) float64 { return recall(*e.Types[Constraint]) }},
}

// f2 weighs recall four times precision: a sticky rule missed is a rule the bundle may cut.
func f2(c Counts) float64 {
	p, _ := c.Precision()
	r, _ := c.Recall()
	if p+r == 0 {
		return 0
	}
	return 5 * p * r / (4*p + r)
}

func microF1(c Counts) float64 {
	p, _ := c.Precision()
	r, _ := c.Recall()
	return classify.F1(p, r)
}

func recall(c Counts) float64 {
	r, _ := c.Recall()
	return r
}

// Comparison is a candidate's option set against the baseline's, paired over K perturbations.
type Comparison struct {
	// Base and Cand hold, per perturbation k = 1..K, the value of each of Metrics.
	Base, Cand [][]float64
	// MicroF1Diff is the 95% paired bootstrap interval of the mean over k of the typed micro-F1
	// difference (913all), resampling messages: each resample scores every k's spans of the
	// same drawn messages.
	MicroF1Diff classify.Interval
}

// Mean is the mean over k of metric m of runs (Base or Cand).
func (c Comparison) Mean(runs [][]float64, m int) float64 {
	s := 0.0
	for _, v := range runs {
		s += v[m]
	}
	return s / float64(len(runs))
}

// Diffs are the per-k differences Cand - Base of metric m.
func (c Comparison) Diffs(m int) []float64 {
	out := make([]float64, len(c.Base))
	for k := range c.Base {
		out[k] = c.Cand[k][m] - c.Base[k][m]
	}
	return out
}

// Compare cross-validates (folds folds) the detector trained with base and with cand at
// perturbations 1..k of training (CrossValidatePerturbed), both of d.Rows with d.Extra in
// training only and of d.Rows and d.Extra together, and scores them by Metrics. progress, when
// not nil, is called after each perturbation: the default K of 10 takes minutes.
func Compare(d Data, base, cand classify.Options, k, folds int, progress func(done int)) (Comparison, error) {
	if k < 1 {
		return Comparison{}, fmt.Errorf("invariant: compare needs at least one perturbation, not %d", k)
	}
	all := append(slices.Clip(d.Rows), d.Extra...)
	var c Comparison
	// micro[run][k][i] is message i's typed counts (913all) of run 0 (base) or 1 (cand).
	micro := [2][][]Counts{}
	for seed := uint64(1); seed <= uint64(k); seed++ {
		for run, opts := range []classify.Options{base, cand} {
			cv619, _, err := CrossValidatePerturbed(d.Rows, d.Extra, folds, opts, d.Debugging, seed)
			if err != nil {
				return Comparison{}, err
			}
			cv913, spans, err := CrossValidatePerturbed(all, nil, folds, opts, d.Debugging, seed)
			if err != nil {
				return Comparison{}, err
			}
			extra := evaluateSpans(d.Extra, spans[len(d.Rows):])
			vals := make([]float64, len(Metrics))
			for m, metric := range Metrics {
				vals[m] = metric.of(cv619, cv913, extra)
			}
			msgs := make([]Counts, len(all))
			for i, ex := range all {
				msgs[i] = evaluateSpans([]Example{ex}, spans[i:i+1]).Micro
			}
			micro[run] = append(micro[run], msgs)
			if run == 0 {
				c.Base = append(c.Base, vals)
			} else {
				c.Cand = append(c.Cand, vals)
			}
		}
		if progress != nil {
			progress(int(seed))
		}
	}
	c.MicroF1Diff = classify.Bootstrap(len(all), func(idx []int) float64 {
		d := 0.0
		for j := range k {
			var b, a Counts
			for _, i := range idx {
				b = addCounts(b, micro[0][j][i])
				a = addCounts(a, micro[1][j][i])
			}
			d += microF1(a) - microF1(b)
		}
		return d / float64(k)
	})
	return c, nil
}

func addCounts(a, b Counts) Counts {
	return Counts{a.Pred + b.Pred, a.PredOK + b.PredOK, a.Gold + b.Gold, a.GoldOK + b.GoldOK, a.TP + b.TP, a.FP + b.FP, a.FN + b.FN}
}
