package mode

import (
	"fmt"
	"slices"

	"github.com/ragd/ragd/classify"
)

// One cross-validation's figures move with which rows happen to train, by about as much as a
// change of options moves them. Compare therefore pairs two models over K perturbations of
// training (CrossValidatePerturbed, seeds 1..K, the same dropped rows for both) and reports the
// mean over k of candidate_k - baseline_k, as the invariant detector's comparison does
// (invariant.Compare). Each side's predictions come from Perturbed, in this tree or saved in
// another (Predictions), so the candidate can differ from the baseline in options, extra rows
// or code.

// CrossValidatePerturbed is CrossValidate with each fold's training set (scored rows of the
// other folds and extra rows) without whole groups, as trainingSet groups rows, at least 5% of
// its rows, drawn by seed and fold (classify.DropGroups). Seed 0 drops nothing: it is
// CrossValidate.
func CrossValidatePerturbed(rows, extra []Example, k int, opts classify.Options, seed uint64) ([]classify.Prediction, error) {
	set := trainingSet(append(slices.Clip(rows), extra...))
	drop := func(fold int, idx []int) []int {
		return classify.DropGroups(idx, func(i int) string { return set[i].Group }, classify.PerturbShare, seed, fold)
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
	// drawn turns. ThresholdedMacroF1Diff is the same with the confidence fallback counted as
	// GENERAL, what serving answers.
	MacroF1Diff, ThresholdedMacroF1Diff classify.Interval
}

// Predictions are a mode model's out-of-fold predictions of the scored rows at perturbations
// 1..K of CrossValidatePerturbed (Perturbed), with what identifies them: Rows are the scored
// rows' ids. Saved, they let a model trained in another tree (other code, other extra rows) be
// the baseline of a comparison (LoadPredictions).
type Predictions = classify.Predictions[[]classify.Prediction]

// Perturbed cross-validates (folds folds, rows scored, extra rows in training folds only) the
// model trained with opts at perturbations 1..k of training (CrossValidatePerturbed) and
// returns the predictions. progress, when not nil, is called after each perturbation.
func Perturbed(rows, extra []Example, opts classify.Options, k, folds int, progress func(done int)) (Predictions, error) {
	p := Predictions{Version: classify.PredictionsVersion, Rows: ids(rows), Hash: classify.HashJSON(rows),
		K: k, Folds: folds, Options: opts}
	err := classify.Perturb(&p, func(seed uint64) ([]classify.Prediction, error) {
		return CrossValidatePerturbed(rows, extra, folds, opts, seed)
	}, progress)
	if err != nil {
		return Predictions{}, err
	}
	return p, nil
}

func ids(rows []Example) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

// match returns nil when p can be paired with predictions of rows at k perturbations of
// folds-fold cross-validations, else an error wrapping classify.ErrOtherPredictions. The extra
// rows are not in it: they only train, so a change of them is a change of the model.
func match(p Predictions, rows []Example, k, folds int) error {
	if err := p.Match(ids(rows), nil, classify.HashJSON(rows), k, folds); err != nil {
		return fmt.Errorf("mode: %w", err)
	}
	for _, s := range p.Seeds {
		if len(s) != len(rows) {
			return fmt.Errorf("mode: %w: a perturbation has predictions of %d rows, not %d", classify.ErrOtherPredictions, len(s), len(rows))
		}
		for _, pr := range s {
			if !slices.Contains(Modes, Mode(pr.Label)) || len(pr.Probs) != len(pr.Labels) || !slices.Contains(pr.Labels, pr.Label) {
				return fmt.Errorf("mode: %w: %q is not a prediction of a mode", classify.ErrOtherPredictions, pr.Label)
			}
		}
	}
	return nil
}

// LoadPredictions reads predictions that Predictions.Save wrote, refusing another format
// version and predictions that cannot be paired with rows' at k perturbations of folds-fold
// cross-validations: other rows (ids or contents), K or folds.
func LoadPredictions(path string, rows []Example, k, folds int) (Predictions, error) {
	p, err := classify.LoadPredictions[[]classify.Prediction](path)
	if err != nil {
		return Predictions{}, err
	}
	if err := match(p, rows, k, folds); err != nil {
		return Predictions{}, err
	}
	return p, nil
}

// Compare scores base and cand, predictions of rows (Perturbed, or LoadPredictions of another
// tree's) at the same K and folds, by Metrics, the fallback at cfg.Threshold, paired over their
// perturbations.
func Compare(rows []Example, base, cand Predictions, cfg Config) (Comparison, error) {
	for _, p := range []Predictions{base, cand} {
		if err := match(p, rows, base.K, base.Folds); err != nil {
			return Comparison{}, err
		}
	}
	gold := make([]int, len(rows))
	for i, r := range rows {
		if gold[i] = slices.Index(Modes, r.Mode); gold[i] < 0 {
			return Comparison{}, fmt.Errorf("mode: %s: %q is not a mode", r.ID, r.Mode)
		}
	}
	var c Comparison
	// pred[run][k][i] is turn i's raw prediction (an index of Modes) of run 0 (base) or 1 (cand),
	// thr[run][k][i] the same after the fallback.
	pred, thr := [2][][]int{}, [2][][]int{}
	for run, p := range []Predictions{base, cand} {
		for _, preds := range p.Seeds {
			raw, thresholded, err := EvaluatePredictions(preds, rows, cfg)
			if err != nil {
				return Comparison{}, err
			}
			vals := make([]float64, len(Metrics))
			for m, metric := range Metrics {
				vals[m] = metric.of(raw, thresholded)
			}
			labels, fallback := make([]int, len(preds)), make([]int, len(preds))
			for i, p := range preds {
				labels[i] = slices.Index(Modes, Mode(p.Label))
				fallback[i] = slices.Index(Modes, decide(cfg, Mode(p.Label), p.Confidence(), nil).Mode)
			}
			pred[run] = append(pred[run], labels)
			thr[run] = append(thr[run], fallback)
			if run == 0 {
				c.Base = append(c.Base, vals)
			} else {
				c.Cand = append(c.Cand, vals)
			}
		}
	}
	k := base.K
	diff := func(pred [2][][]int) classify.Interval {
		return classify.Bootstrap(len(rows), func(idx []int) float64 {
			d := 0.0
			for j := range k {
				d += macroF1(gold, pred[1][j], idx) - macroF1(gold, pred[0][j], idx)
			}
			return d / float64(k)
		})
	}
	c.MacroF1Diff, c.ThresholdedMacroF1Diff = diff(pred), diff(thr)
	return c, nil
}

// macroF1 is the macro-F1 (classify.Evaluate's) of the turns idx, gold and pred being
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
