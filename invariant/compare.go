package invariant

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
}

// PredictionsVersion is the format of a Predictions file; LoadPredictions refuses another.
const PredictionsVersion = 1

// ErrOtherPredictions is the error of predictions that cannot be paired with this data's: made
// from other messages, or at another K or number of folds.
var ErrOtherPredictions = errors.New("invariant: the predictions are not of this data")

// Predictions are a detector's out-of-fold spans at perturbations 1..K of both cross-validations
// Compare scores, with what identifies them. Saved (Save), they let a detector trained in another
// tree (other code, other mode data, another pinned model) be the baseline of a comparison:
// what pairs two runs is their messages, K and folds, not the code or the models that found
// the spans.
type Predictions struct {
	Version int `json:"version"`
	// Rows and Extra are the ids of Data.Rows and Data.Extra, in order, and Hash the SHA-256 of
	// those messages (rowsHash): their texts, labels and sources.
	Rows  []string `json:"rows"`
	Extra []string `json:"extra"`
	Hash  string   `json:"hash"`
	K     int      `json:"k"`
	Folds int      `json:"folds"`
	// Options are the options the detector was trained with.
	Options classify.Options `json:"options"`
	// Seeds[k-1] are the spans of perturbation k.
	Seeds []Perturbation `json:"seeds"`
}

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
	if k < 1 {
		return Predictions{}, fmt.Errorf("invariant: compare needs at least one perturbation, not %d", k)
	}
	p := Predictions{Version: PredictionsVersion, Rows: ids(d.Rows), Extra: ids(d.Extra), Hash: rowsHash(d),
		K: k, Folds: folds, Options: opts}
	all := append(slices.Clip(d.Rows), d.Extra...)
	for seed := uint64(1); seed <= uint64(k); seed++ {
		_, cv619, err := CrossValidatePerturbed(d.Rows, d.Extra, folds, opts, d.Debugging, seed)
		if err != nil {
			return Predictions{}, err
		}
		_, cv913, err := CrossValidatePerturbed(all, nil, folds, opts, d.Debugging, seed)
		if err != nil {
			return Predictions{}, err
		}
		p.Seeds = append(p.Seeds, Perturbation{CV619: cv619, All: cv913})
		if progress != nil {
			progress(int(seed))
		}
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

// rowsHash is the SHA-256 of d's rows and extra rows as JSON, one a line: two runs score the
// same messages if it is the same. The P(DEBUGGING) model is not in it: a change of mode data
// changes the detector, not what it is scored on.
func rowsHash(d Data) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, exs := range [][]Example{d.Rows, d.Extra} {
		fmt.Fprintf(h, "%d\n", len(exs))
		for _, ex := range exs {
			// An Example always encodes: it holds strings and ints only.
			_ = enc.Encode(ex)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Match returns nil when p can be paired with predictions of d at k perturbations of folds-fold
// cross-validations, else an error wrapping ErrOtherPredictions that says what differs.
func (p Predictions) Match(d Data, k, folds int) error {
	if !slices.Equal(p.Rows, ids(d.Rows)) || !slices.Equal(p.Extra, ids(d.Extra)) {
		return fmt.Errorf("%w: they are of %d rows and %d extra rows, this data has %d and %d%s",
			ErrOtherPredictions, len(p.Rows), len(p.Extra), len(d.Rows), len(d.Extra), firstDiff(p, d))
	}
	if p.Hash != rowsHash(d) {
		return fmt.Errorf("%w: the rows have the same ids but other texts, labels or sources", ErrOtherPredictions)
	}
	if p.K != k || p.Folds != folds {
		return fmt.Errorf("%w: they are of %d perturbations of %d-fold cross-validations, not %d of %d folds",
			ErrOtherPredictions, p.K, p.Folds, k, folds)
	}
	if len(p.Seeds) != p.K {
		return fmt.Errorf("%w: %d perturbations of spans, not K = %d", ErrOtherPredictions, len(p.Seeds), p.K)
	}
	for _, s := range p.Seeds {
		if len(s.CV619) != len(d.Rows) || len(s.All) != len(d.Rows)+len(d.Extra) {
			return fmt.Errorf("%w: a perturbation has spans of %d and %d messages, not %d and %d",
				ErrOtherPredictions, len(s.CV619), len(s.All), len(d.Rows), len(d.Rows)+len(d.Extra))
		}
	}
	return nil
}

// firstDiff names the first row id where p and d differ, for Match's error.
func firstDiff(p Predictions, d Data) string {
	theirs, ours := append(slices.Clip(p.Rows), p.Extra...), append(ids(d.Rows), ids(d.Extra)...)
	for i := range max(len(theirs), len(ours)) {
		switch {
		case i >= len(theirs):
			return fmt.Sprintf(" (%s is not in them)", ours[i])
		case i >= len(ours):
			return fmt.Sprintf(" (%s is not in this data)", theirs[i])
		case theirs[i] != ours[i]:
			return fmt.Sprintf(" (message %d is %s there, %s here)", i+1, theirs[i], ours[i])
		}
	}
	return ""
}

// Save writes p as JSON.
func (p Predictions) Save(path string) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("invariant: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("invariant: %w", err)
	}
	return nil
}

// LoadPredictions reads predictions that Save wrote, refusing another format version.
func LoadPredictions(path string) (Predictions, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Predictions{}, fmt.Errorf("invariant: %w", err)
	}
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return Predictions{}, fmt.Errorf("invariant: %s: %w", path, err)
	}
	if v.Version != PredictionsVersion {
		return Predictions{}, fmt.Errorf("%w: %s is of format version %d, this build reads version %d",
			ErrOtherPredictions, path, v.Version, PredictionsVersion)
	}
	var p Predictions
	if err := json.Unmarshal(b, &p); err != nil {
		return Predictions{}, fmt.Errorf("invariant: %s: %w", path, err)
	}
	return p, nil
}

// Compare scores base and cand, predictions of d (Perturbed, or LoadPredictions of another
// tree's) at the same K and folds, by Metrics, paired over their perturbations.
func Compare(d Data, base, cand Predictions) (Comparison, error) {
	for _, p := range []Predictions{base, cand} {
		if err := p.Match(d, base.K, base.Folds); err != nil {
			return Comparison{}, err
		}
	}
	all := append(slices.Clip(d.Rows), d.Extra...)
	var c Comparison
	// micro[run][k][i] is message i's typed counts (913all) of run 0 (base) or 1 (cand).
	micro := [2][][]Counts{}
	for run, p := range []Predictions{base, cand} {
		for _, s := range p.Seeds {
			cv619, cv913 := evaluateSpans(d.Rows, s.CV619), evaluateSpans(all, s.All)
			extra := evaluateSpans(d.Extra, s.All[len(d.Rows):])
			vals := make([]float64, len(Metrics))
			for m, metric := range Metrics {
				vals[m] = metric.of(cv619, cv913, extra)
			}
			msgs := make([]Counts, len(all))
			for i, ex := range all {
				msgs[i] = evaluateSpans([]Example{ex}, s.All[i:i+1]).Micro
			}
			micro[run] = append(micro[run], msgs)
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
	return c, nil
}

func addCounts(a, b Counts) Counts {
	return Counts{a.Pred + b.Pred, a.PredOK + b.PredOK, a.Gold + b.Gold, a.GoldOK + b.GoldOK, a.TP + b.TP, a.FP + b.FP, a.FN + b.FN}
}
