package invariant

import (
	"fmt"
	"slices"

	"github.com/ragd/ragd/classify"
)

// A single cross-validation cannot tell two detectors apart: the baseline retrained without 5%
// of its messages fails the no-harm rules against itself in most pairs. Compare therefore pairs
// them over K perturbations of training (CrossValidatePerturbed, seeds 1..K, the same dropped
// messages for both) and reports the mean over k of candidate_k - baseline_k. Each side's spans
// come from Perturbed, in this tree or saved in another (Predictions), so the candidate can
// differ from the baseline in options, data or code.

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

// Comparison is a candidate detector against the baseline, paired over K perturbations: Base
// and Cand hold the value of each of Metrics per perturbation.
type Comparison struct {
	classify.Runs
	// MicroF1Diff is the 95% paired bootstrap interval of the mean over k of the typed micro-F1
	// difference (913all), resampling messages: each resample scores every k's spans of the
	// same drawn messages.
	MicroF1Diff classify.Interval
	// SafetyExtraDiff is the same interval for the safety spans found on the extra rows (the
	// metric "safety spans extra"), resampling the extra rows' messages: the figure a change
	// that aims at safety recall is judged by.
	SafetyExtraDiff classify.Interval
}

// Predictions are a detector's out-of-fold spans at perturbations 1..K of both cross-validations
// Compare scores (Perturbed), with what identifies them: Rows and Extra are the ids of Data.Rows
// and Data.Extra. Saved, they let a detector trained in another tree (other code, other mode
// data, another pinned model) be the baseline of a comparison (LoadPredictions).
type Predictions = classify.Predictions[Perturbation]

// Perturbation is one perturbation's out-of-fold spans: CV619 of Data.Rows (the extra rows in
// training only), All of Data.Rows and then Data.Extra (all in folds).
type Perturbation struct {
	CV619 [][]Span `json:"cv619"`
	All   [][]Span `json:"all"`
}

// Perturbed cross-validates (folds folds) the detector trained with opts at perturbations 1..k
// of training (CrossValidatePerturbed), of d.Rows with d.Extra in training only and of d.Rows and
// d.Extra together, and returns the spans. progress, when not nil, is called after each
// perturbation: the default K of 10 takes minutes.
func Perturbed(d Data, opts classify.Options, k, folds int, progress func(done int)) (Predictions, error) {
	p := Predictions{Version: classify.PredictionsVersion, Rows: ids(d.Rows), Extra: ids(d.Extra), Hash: rowsHash(d),
		K: k, Folds: folds, Options: opts}
	all := append(slices.Clip(d.Rows), d.Extra...)
	err := classify.Perturb(&p, func(seed uint64) (Perturbation, error) {
		_, cv619, err := CrossValidatePerturbed(d.Rows, d.Extra, folds, opts, d.Debugging, seed)
		if err != nil {
			return Perturbation{}, err
		}
		_, cv913, err := CrossValidatePerturbed(all, nil, folds, opts, d.Debugging, seed)
		return Perturbation{CV619: cv619, All: cv913}, err
	}, progress)
	if err != nil {
		return Predictions{}, err
	}
	return p, nil
}

func ids(exs []Example) []string {
	out := make([]string, len(exs))
	for i, ex := range exs {
		out[i] = ex.ID
	}
	return out
}

// rowsHash identifies d's rows and extra rows (classify.HashJSON): their texts, labels and
// sources. The P(DEBUGGING) model is not in it: a change of mode data changes the detector, not
// what it is scored on.
func rowsHash(d Data) string { return classify.HashJSON(d.Rows, d.Extra) }

// match returns nil when p can be paired with predictions of d at k perturbations of
// folds-fold cross-validations, else an error wrapping classify.ErrOtherPredictions.
func match(p Predictions, d Data, k, folds int) error {
	if err := p.Match(ids(d.Rows), ids(d.Extra), rowsHash(d), k, folds); err != nil {
		return fmt.Errorf("invariant: %w", err)
	}
	for _, s := range p.Seeds {
		if len(s.CV619) != len(d.Rows) || len(s.All) != len(d.Rows)+len(d.Extra) {
			return fmt.Errorf("invariant: %w: a perturbation has spans of %d and %d messages, not %d and %d",
				classify.ErrOtherPredictions, len(s.CV619), len(s.All), len(d.Rows), len(d.Rows)+len(d.Extra))
		}
	}
	return nil
}

// LoadPredictions reads predictions that Predictions.Save wrote, refusing another format
// version and predictions that cannot be paired with d's at k perturbations of folds-fold
// cross-validations: other rows (ids, texts, labels or sources), K or folds.
func LoadPredictions(path string, d Data, k, folds int) (Predictions, error) {
	p, err := classify.LoadPredictions[Perturbation](path)
	if err != nil {
		return Predictions{}, err
	}
	if err := match(p, d, k, folds); err != nil {
		return Predictions{}, err
	}
	return p, nil
}

// Compare scores base and cand, predictions of d (Perturbed, or LoadPredictions of another
// tree's) at the same K and folds, by Metrics, paired over their perturbations.
func Compare(d Data, base, cand Predictions) (Comparison, error) {
	for _, p := range []Predictions{base, cand} {
		if err := match(p, d, base.K, base.Folds); err != nil {
			return Comparison{}, err
		}
	}
	all := append(slices.Clip(d.Rows), d.Extra...)
	var c Comparison
	// micro[run][k][i] is message i's typed counts (913all) of run 0 (base) or 1 (cand), and
	// safety[run][k][i] the safety spans it found in extra row i.
	micro := [2][][]Counts{}
	safety := [2][][]int{}
	for run, p := range []Predictions{base, cand} {
		for _, s := range p.Seeds {
			cv619, cv913 := evaluateSpans(d.Rows, s.CV619), evaluateSpans(all, s.All)
			extra := evaluateSpans(d.Extra, s.All[len(d.Rows):])
			vals := make([]float64, len(Metrics))
			for m, metric := range Metrics {
				vals[m] = metric.of(cv619, cv913, extra)
			}
			msgs, found := make([]Counts, len(all)), make([]int, len(d.Extra))
			for i, ex := range all {
				r := evaluateSpans([]Example{ex}, s.All[i:i+1])
				msgs[i] = r.Micro
				if i >= len(d.Rows) {
					found[i-len(d.Rows)] = r.Types[Safety].GoldOK
				}
			}
			micro[run] = append(micro[run], msgs)
			safety[run] = append(safety[run], found)
			if run == 0 {
				c.Base = append(c.Base, vals)
			} else {
				c.Cand = append(c.Cand, vals)
			}
		}
	}
	k := base.K
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
	c.SafetyExtraDiff = classify.Bootstrap(len(d.Extra), func(idx []int) float64 {
		d := 0
		for j := range k {
			for _, i := range idx {
				d += safety[1][j][i] - safety[0][j][i]
			}
		}
		return float64(d) / float64(k)
	})
	return c, nil
}

func addCounts(a, b Counts) Counts {
	return Counts{a.Pred + b.Pred, a.PredOK + b.PredOK, a.Gold + b.Gold, a.GoldOK + b.GoldOK, a.TP + b.TP, a.FP + b.FP, a.FN + b.FN}
}
