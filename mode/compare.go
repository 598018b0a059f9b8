package mode

import (
	"fmt"
	"slices"

	"github.com/ragd/ragd/classify"
)

// One cross-validation's figures move with which rows happen to train, by about as much as a
// change of options moves them. Compare therefore pairs two option sets over K perturbations of
// training (CrossValidatePerturbed, seeds 1..K, the same dropped rows for both) and reports the
// mean over k of candidate_k - baseline_k, as the invariant detector's comparison does
// (invariant.Compare).

// dropShare is the share of a fold's training rows CrossValidatePerturbed leaves out: 5%, as
// the invariant detector's perturbation.
const dropShare = 0.05

// CrossValidatePerturbed is CrossValidate with each fold's training set (scored rows of the
// other folds and extra rows) without whole groups, as trainingSet groups rows, at least 5% of
// its rows, drawn by seed and fold (classify.DropGroups). Seed 0 drops nothing: it is
// CrossValidate.
func CrossValidatePerturbed(rows, extra []Example, k int, opts classify.Options, seed uint64) ([]classify.Prediction, error) {
	set := trainingSet(append(slices.Clip(rows), extra...))
	drop := func(fold int, idx []int) []int {
		return classify.DropGroups(idx, func(i int) string { return set[i].Group }, dropShare, seed, fold)
	}
	preds, err := classify.CrossValidateWith(set, k, opts, drop, nil)
	if err != nil {
		return nil, err
	}
	return preds[:len(rows)], nil
}

// Metric is one figure of a cross-validated mode model that Compare reports.
type Metric struct {
	Name string
	of   func(raw, thresholded classify.Report) float64
}

// Metrics are Compare's figures, in the order it reports them: accuracy, macro-F1 and each
// mode's precision and recall, of the raw classifier and then with the confidence fallback
// (EvaluatePredictions).
var Metrics = metrics()

func metrics() []Metric {
	var out []Metric
	for _, fallback := range []bool{false, true} {
		name := "raw"
		of := func(raw, thresholded classify.Report) classify.Report { return raw }
		if fallback {
			name = "thresholded"
			of = func(raw, thresholded classify.Report) classify.Report { return thresholded }
		}
		out = append(out,
			Metric{name + " accuracy", func(r, t classify.Report) float64 { return of(r, t).Accuracy }},
			Metric{name + " macro-F1", func(r, t classify.Report) float64 { return of(r, t).MacroF1 }})
		for i, m := range Modes {
			out = append(out,
				Metric{fmt.Sprintf("%s %s P", name, m), func(r, t classify.Report) float64 { return of(r, t).Classes[i].Precision }},
				Metric{fmt.Sprintf("%s %s R", name, m), func(r, t classify.Report) float64 { return of(r, t).Classes[i].Recall }})
		}
	}
	return out
}

// Comparison is a candidate option set against the baseline's, paired over K perturbations:
// Base and Cand hold the value of each of Metrics per perturbation.
type Comparison struct {
	classify.Runs
	// MacroF1Diff is the 95% paired bootstrap interval of the mean over k of the raw macro-F1
	// difference, resampling turns: each resample scores every k's predictions of the same
	// drawn turns.
	MacroF1Diff classify.Interval
}

// Compare cross-validates (folds folds, rows scored, extra rows in training folds only) the
// model trained with base and with cand at perturbations 1..k of training
// (CrossValidatePerturbed), and scores them by Metrics, the fallback at cfg.Threshold.
// progress, when not nil, is called after each perturbation of each: "B" or "C" and how many
// are done.
func Compare(rows, extra []Example, base, cand classify.Options, k, folds int, cfg Config, progress func(run string, done int)) (Comparison, error) {
	if k < 1 {
		return Comparison{}, fmt.Errorf("mode: compare needs at least one perturbation, not %d", k)
	}
	gold := make([]int, len(rows))
	for i, r := range rows {
		if gold[i] = slices.Index(Modes, r.Mode); gold[i] < 0 {
			return Comparison{}, fmt.Errorf("mode: %s: %q is not a mode", r.ID, r.Mode)
		}
	}
	var c Comparison
	// pred[run][k][i] is turn i's raw prediction (an index of Modes) of run 0 (base) or 1 (cand).
	pred := [2][][]int{}
	for run, opts := range []classify.Options{base, cand} {
		for seed := uint64(1); seed <= uint64(k); seed++ {
			preds, err := CrossValidatePerturbed(rows, extra, folds, opts, seed)
			if err != nil {
				return Comparison{}, err
			}
			raw, thresholded, err := EvaluatePredictions(preds, rows, cfg)
			if err != nil {
				return Comparison{}, err
			}
			vals := make([]float64, len(Metrics))
			for m, metric := range Metrics {
				vals[m] = metric.of(raw, thresholded)
			}
			labels := make([]int, len(preds))
			for i, p := range preds {
				labels[i] = slices.Index(Modes, Mode(p.Label))
			}
			pred[run] = append(pred[run], labels)
			if run == 0 {
				c.Base = append(c.Base, vals)
			} else {
				c.Cand = append(c.Cand, vals)
			}
			if progress != nil {
				progress([]string{"B", "C"}[run], int(seed))
			}
		}
	}
	c.MacroF1Diff = classify.Bootstrap(len(rows), func(idx []int) float64 {
		d := 0.0
		for j := range k {
			d += macroF1(gold, pred[1][j], idx) - macroF1(gold, pred[0][j], idx)
		}
		return d / float64(k)
	})
	return c, nil
}

// macroF1 is the raw macro-F1 (classify.Evaluate's) of the turns idx, gold and pred being
// indexes of Modes. classify.Evaluate itself bootstraps each mode's F1, too slow to run on each
// of the resamples.
func macroF1(gold, pred, idx []int) float64 {
	tp, support, predicted := make([]int, len(Modes)), make([]int, len(Modes)), make([]int, len(Modes))
	for _, i := range idx {
		support[gold[i]]++
		predicted[pred[i]]++
		if gold[i] == pred[i] {
			tp[gold[i]]++
		}
	}
	sum := 0.0
	for m := range Modes {
		var p, r float64
		if predicted[m] > 0 {
			p = float64(tp[m]) / float64(predicted[m])
		}
		if support[m] > 0 {
			r = float64(tp[m]) / float64(support[m])
		}
		sum += classify.F1(p, r)
	}
	return sum / float64(len(Modes))
}
