package invariant

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ragd/ragd/classify"
	"github.com/ragd/ragd/mode"
)

// Data is what the detector learns from. Rows are labelled user turns that grouped
// cross-validation scores (each in its fold, trained on in the others); Files names each row's
// file. Extra rows, written for coverage or drawn for their words, only ever train.
type Data struct {
	Rows  []Example
	Files []string
	Extra []Example
	// Debugging is P(DEBUGGING) of a message as the detector reads it (Debugging), except for
	// the turns of modes_train.jsonl: the mode model was trained on them, so they get the
	// out-of-fold probability of its grouped cross-validation, as an unseen turn would.
	Debugging func(string) float64
}

// RowFiles are the files of Data.Rows: the shared training file, then the turns of
// modes_train.jsonl and the real turns labelled for invariants (data/README.md).
var RowFiles = []string{"invariants_train.jsonl", "data/invariants_select.jsonl", "data/invariants_real.jsonl"}

// LoadData reads the detector's data: invariants_train.jsonl and modes_train.jsonl from labels
// (../shared/data/labels), the rest from the package directory dir, and the mode model's
// extra rows from dir/../mode/data.
func LoadData(labels, dir string, folds int) (Data, error) {
	var d Data
	for i, f := range RowFiles {
		path := filepath.Join(dir, f)
		if i == 0 {
			path = filepath.Join(labels, f)
		}
		exs, err := LoadExamples(path)
		if err != nil {
			return Data{}, err
		}
		d.Rows = append(d.Rows, exs...)
		for range exs {
			d.Files = append(d.Files, f)
		}
	}
	var err error
	if d.Extra, err = LoadExamples(filepath.Join(dir, "data", "invariants_extra.jsonl")); err != nil {
		return Data{}, err
	}
	modes, err := mode.LoadExamples(filepath.Join(labels, "modes_train.jsonl"))
	if err != nil {
		return Data{}, err
	}
	modesExtra, err := mode.LoadExamples(filepath.Join(dir, "..", "mode", "data", "modes_extra.jsonl"))
	if err != nil {
		return Data{}, err
	}
	preds, err := mode.CrossValidate(modes, modesExtra, folds, mode.TrainOptions())
	if err != nil {
		return Data{}, err
	}
	outOfFold := make(map[string]float64, len(preds))
	for i, p := range preds {
		outOfFold[strings.TrimSpace(modes[i].Text)] = p.Probs[slices.Index(p.Labels, string(mode.Debugging))]
	}
	d.Debugging = func(msg string) float64 {
		if p, ok := outOfFold[strings.TrimSpace(msg)]; ok {
			return p
		}
		return Debugging(msg)
	}
	return d, nil
}

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
func trainingClauses(exs []Example, uncued bool, debugging func(string) float64) (sticky, typed []classify.Example) {
	for _, ex := range exs {
		cs, fs := clauseFeatures(ex.Text, debugging(ex.Text))
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
// un-cued pair on every clause. debugging gives a message's P(DEBUGGING) (Debugging, or
// out-of-fold probabilities for messages the mode model was trained on).
func Train(exs []Example, opts classify.Options, debugging func(string) float64) (Models, error) {
	m := Models{StickyAt: StickyThreshold, SafetyAt: SafetyShare, UncuedAt: UncuedThreshold}
	for _, uncued := range []bool{false, true} {
		sticky, typed := trainingClauses(exs, uncued, debugging)
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
// are scored, so extra data, written for coverage, never grades itself. debugging is as for
// Train. It returns the report and each row's spans.
func CrossValidate(rows, extra []Example, k int, opts classify.Options, debugging func(string) float64) (Report, [][]Span, error) {
	strata := make([]string, len(rows))
	groups := make([]string, len(rows))
	for i, ex := range rows {
		strata[i], groups[i] = stratum(ex), group(ex)
	}
	folds := classify.Folds(strata, groups, k, opts.Seed)
	spans := make([][]Span, len(rows))
	for f := range k {
		var tr []Example
		held := map[string]bool{}
		for i, ex := range rows {
			if folds[i] == f {
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
		m, err := Train(tr, opts, debugging)
		if err != nil {
			return Report{}, nil, err
		}
		for i, ex := range rows {
			if folds[i] == f {
				spans[i] = m.Detect(ex.Text, debugging(ex.Text))
			}
		}
	}
	r := newReport()
	for i, ex := range rows {
		r.add(ex, spans[i])
	}
	return r, spans, nil
}
