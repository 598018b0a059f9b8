package invariant

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ragd/ragd/classify"
)

// TrainOptions are the models' hyperparameters, chosen by grouped cross-validation on
// invariants_train.jsonl (see CrossValidate).
func TrainOptions() classify.Options {
	o := classify.DefaultOptions()
	o.CharNGrams = false
	return o
}

// group is the cross-validation group of a message: its real conversation, or itself.
func group(ex Example) string {
	if s, ok := strings.CutPrefix(ex.Source, "real:"); ok {
		conv, _, _ := strings.Cut(s, "#")
		return conv
	}
	return ex.ID
}

// trainingClauses returns the examples of a pair of models: every clause that may take a type
// (with a cue, unless uncued) for the sticky model, and the sticky ones for the type model.
// A clause is labelled with the type of the gold span it overlaps most, when that overlap covers
// at least half of the clause or of the span; otherwise "none".
//
// One kind of clause is left out: a failure report in a message whose gold blocking error is
// elsewhere ("npm install fails on CI:" above the npm ERR! line). The convention labels one
// failure per message, the pasted error when there is one, and Detect picks that span itself;
// teaching the model that the other reports are no failure would teach it something false.
func trainingClauses(exs []Example, uncued bool) (sticky, typed []classify.Example) {
	blocking := slices.Index(classes[:], Blocking)
	for _, ex := range exs {
		cs, fs := clauseFeatures(ex.Text)
		failed := slices.ContainsFunc(ex.Labels, func(l Label) bool { return l.Type == Blocking })
		for i, c := range cs {
			if fs[i].allowed == noneOnly || !fs[i].cued && !uncued {
				continue
			}
			y, most := 0, 0
			for _, l := range ex.Labels {
				ov := min(c.End, l.End) - max(c.Start, l.Start)
				if ov > most && 2*ov >= min(c.End-c.Start, l.End-l.Start) {
					y, most = slices.Index(classes[:], l.Type), ov
				}
			}
			if y == 0 && failed && fs[i].allowed[blocking] {
				continue
			}
			g := group(ex)
			if y == 0 {
				sticky = append(sticky, classify.Example{Input: fs[i].in, Label: labelNone, Group: g})
				continue
			}
			sticky = append(sticky, classify.Example{Input: fs[i].in, Label: labelSticky, Group: g})
			typed = append(typed, classify.Example{Input: fs[i].in, Label: string(classes[y]), Group: g})
		}
	}
	return sticky, typed
}

// Train fits the clause models on labelled messages: the cued pair on clauses with a cue, the
// un-cued pair on every clause.
func Train(exs []Example, opts classify.Options) (Models, error) {
	m := Models{StickyAt: StickyThreshold, SafetyAt: SafetyShare, UncuedAt: UncuedThreshold}
	for _, uncued := range []bool{false, true} {
		sticky, typed := trainingClauses(exs, uncued)
		s, err := classify.Train(sticky, opts)
		if err != nil {
			return Models{}, fmt.Errorf("invariant: sticky model: %w", err)
		}
		t, err := classify.Train(typed, opts)
		if err != nil {
			return Models{}, fmt.Errorf("invariant: type model: %w", err)
		}
		if uncued {
			m.UncuedSticky, m.UncuedType = s, t
		} else {
			m.Sticky, m.Type = s, t
		}
	}
	return m, nil
}

// stratum is how the data's README stratifies its splits: the one type of a message, "multi" or
// "none".
func stratum(ex Example) string {
	types := map[Type]bool{}
	for _, l := range ex.Labels {
		types[l.Type] = true
	}
	switch len(types) {
	case 0:
		return "none"
	case 1:
		return string(ex.Labels[0].Type)
	}
	return "multi"
}

// CrossValidate scores the detector on rows by k-fold cross-validation, folds stratified by
// stratum and grouped by conversation: for each fold, models trained on the other folds plus
// extra (less any extra row of a conversation in the fold) detect the fold's messages. Only rows
// are scored, so extra data, written for coverage, never grades itself.
func CrossValidate(rows, extra []Example, k int, opts classify.Options) (Report, error) {
	rs, err := CrossValidateAt(rows, extra, k, opts, [][2]float64{{StickyThreshold, SafetyShare}})
	if err != nil {
		return Report{}, err
	}
	return rs[0], nil
}

// CrossValidateAt is CrossValidate for several pairs of thresholds (sticky, safety) at once:
// the models of a fold are trained once and decide at each pair.
func CrossValidateAt(rows, extra []Example, k int, opts classify.Options, at [][2]float64) ([]Report, error) {
	strata := make([]string, len(rows))
	groups := make([]string, len(rows))
	for i, ex := range rows {
		strata[i], groups[i] = stratum(ex), group(ex)
	}
	folds := classify.Folds(strata, groups, k, opts.Seed)
	rs := make([]Report, len(at))
	for i := range rs {
		rs[i] = newReport()
	}
	for f := range k {
		var tr, te []Example
		held := map[string]bool{}
		for i, ex := range rows {
			if folds[i] == f {
				te = append(te, ex)
				held[groups[i]] = true
			} else {
				tr = append(tr, ex)
			}
		}
		for _, ex := range extra {
			if !held[group(ex)] {
				tr = append(tr, ex)
			}
		}
		m, err := Train(tr, opts)
		if err != nil {
			return nil, err
		}
		for i, a := range at {
			m.StickyAt, m.SafetyAt = a[0], a[1]
			for _, ex := range te {
				rs[i].add(ex, detect(m, ex.Text, Debugging(ex.Text)))
			}
		}
	}
	return rs, nil
}
