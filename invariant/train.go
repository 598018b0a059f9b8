package invariant

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
	// the turns of modes_train.jsonl: the P(DEBUGGING) model was trained on them, so they get
	// the out-of-fold probability of its grouped cross-validation, read alone as Debugging
	// reads an unseen turn (OutOfFoldFile).
	Debugging func(string) float64
}

// RowFiles are the files of Data.Rows: the shared training file, then the turns of
// modes_train.jsonl and the real turns labelled for invariants (data/README.md).
var RowFiles = []string{"invariants_train.jsonl", "data/invariants_select.jsonl", "data/invariants_real.jsonl"}

// OutOfFoldFile is where the package keeps the out-of-fold P(DEBUGGING) of the turns of
// modes_train.jsonl (OutOfFold), relative to the package directory. Computing them runs the
// P(DEBUGGING) model's cross-validation, which costs more than everything else the detector's
// tests do, so `go generate ./invariant` computes them once and LoadData reads them.
const OutOfFoldFile = "data/debugging_oof.json"

// ErrStaleOutOfFold is LoadData's error when OutOfFoldFile was computed from other mode data
// or another P(DEBUGGING) model than the current ones.
var ErrStaleOutOfFold = errors.New("invariant: " + OutOfFoldFile + " is stale: run go generate ./invariant")

// OutOfFold holds the P(DEBUGGING) model's out-of-fold probabilities of the turns of
// modes_train.jsonl, each read alone as Debugging reads a message: the model was trained on those
// turns, so its own probabilities would be those of a turn it has seen.
type OutOfFold struct {
	// Inputs identifies what the probabilities were computed from (modeInputs).
	Inputs string `json:"inputs"`
	Folds  int    `json:"folds"`
	// Debugging is P(DEBUGGING) by row id of modes_train.jsonl.
	Debugging map[string]float64 `json:"debugging"`
}

// modeInputs is the SHA-256 of what OutOfFold is computed from: modes_train.jsonl, mode's extra
// rows, DebuggingOptions and the embedded P(DEBUGGING) model, which changes with mode's features
// (TestEmbeddedModelsAreReproducible checks that it is what they train). The shipped mode model
// is not among them: the detector does not read it.
func modeInputs(labels, dir string) (string, error) {
	h := sha256.New()
	for _, path := range modeDataFiles(labels, dir) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("invariant: %w", err)
		}
		fmt.Fprintf(h, "%d\n", len(b))
		h.Write(b)
	}
	opts, err := json.Marshal(DebuggingOptions())
	if err != nil {
		return "", fmt.Errorf("invariant: %w", err)
	}
	fmt.Fprintf(h, "%s\n%d\n", opts, len(debuggingJSON))
	h.Write(debuggingJSON)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// MeasureOutOfFold runs the P(DEBUGGING) model's grouped k-fold cross-validation (mode's, with
// DebuggingOptions) over modes_train.jsonl (from labels, with the extra rows of dir/../mode/data
// in training folds) and returns each turn's out-of-fold P(DEBUGGING), read without its previous
// turn.
func MeasureOutOfFold(labels, dir string, k int) (OutOfFold, error) {
	inputs, err := modeInputs(labels, dir)
	if err != nil {
		return OutOfFold{}, err
	}
	modes, modesExtra, err := loadModeData(labels, dir)
	if err != nil {
		return OutOfFold{}, err
	}
	preds, err := mode.CrossValidateAlone(modes, modesExtra, k, DebuggingOptions())
	if err != nil {
		return OutOfFold{}, err
	}
	o := OutOfFold{Inputs: inputs, Folds: k, Debugging: make(map[string]float64, len(preds))}
	for i, p := range preds {
		o.Debugging[modes[i].ID] = p.Probs[slices.Index(p.Labels, string(mode.Debugging))]
	}
	return o, nil
}

// Save writes o as indented JSON, one turn a line in id order (encoding/json sorts map keys),
// so that a regenerated file's diff shows what moved.
func (o OutOfFold) Save(path string) error {
	b, err := json.MarshalIndent(o, "", " ")
	if err != nil {
		return fmt.Errorf("invariant: %w", err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// LoadData reads the detector's data: invariants_train.jsonl and modes_train.jsonl from labels
// (../shared/data/labels), the rest from the package directory dir, with the out-of-fold
// P(DEBUGGING) of OutOfFoldFile; it fails with ErrStaleOutOfFold when that file no longer
// matches the mode data and the P(DEBUGGING) model.
func LoadData(labels, dir string) (Data, error) {
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
	b, err := os.ReadFile(filepath.Join(dir, OutOfFoldFile))
	if err != nil {
		return Data{}, fmt.Errorf("invariant: %w", err)
	}
	var o OutOfFold
	if err := json.Unmarshal(b, &o); err != nil {
		return Data{}, fmt.Errorf("invariant: %s: %w", OutOfFoldFile, err)
	}
	inputs, err := modeInputs(labels, dir)
	if err != nil {
		return Data{}, err
	}
	if o.Inputs != inputs {
		return Data{}, ErrStaleOutOfFold
	}
	modes, err := mode.LoadExamples(modeDataFiles(labels, dir)[0])
	if err != nil {
		return Data{}, err
	}
	outOfFold := make(map[string]float64, len(modes))
	for _, m := range modes {
		p, ok := o.Debugging[m.ID]
		if !ok {
			return Data{}, fmt.Errorf("%w (no P(DEBUGGING) for %s)", ErrStaleOutOfFold, m.ID)
		}
		outOfFold[strings.TrimSpace(m.Text)] = p
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
	var stickyCued, typedCued []bool // whether each example's clause has a cue
	for _, ex := range exs {
		cs, fs := clauseFeatures(ex.Text, debugging(ex.Text))
		failed := slices.ContainsFunc(ex.Labels, func(l Label) bool { return l.Type == Blocking })
		for i, c := range cs {
			if fs[i].allowed == noneOnly || !fs[i].cued && !uncued {
				continue
			}
			y, most := noType, 0
			for _, l := range ex.Labels {
				ov := min(c.End, l.End) - max(c.Start, l.Start)
				if ov > most && 2*ov >= min(c.End-c.Start, l.End-l.Start) {
					y, most = slices.Index(classes[:], l.Type), ov
				}
			}
			if y == noType && failed && fs[i].allowed[blocking] {
				continue
			}
			g := group(ex)
			if y == noType {
				sticky = append(sticky, classify.Example{Input: fs[i].in, Label: labelNone, Group: g})
				stickyCued = append(stickyCued, fs[i].cued)
				continue
			}
			sticky = append(sticky, classify.Example{Input: fs[i].in, Label: labelSticky, Group: g})
			typed = append(typed, classify.Example{Input: fs[i].in, Label: string(classes[y]), Group: g})
			stickyCued = append(stickyCued, fs[i].cued)
			typedCued = append(typedCued, fs[i].cued)
		}
	}
	if uncued {
		// The un-cued pair judges clauses without a cue, so it reads every clause as one: a cued
		// clause keeps its words, its sentence, P(DEBUGGING) and the cues a clause without a cue
		// can carry too (those some un-cued clause here carries), and loses the rest.
		seen := map[string]bool{}
		for i, ex := range sticky {
			if !stickyCued[i] {
				for k := range ex.Input.Extra {
					seen[k] = true
				}
			}
		}
		strip := func(exs []classify.Example, cued []bool) {
			for i := range exs {
				if !cued[i] {
					continue
				}
				extra := make(map[string]float64, len(exs[i].Input.Extra))
				for k, v := range exs[i].Input.Extra {
					if seen[k] {
						extra[k] = v
					}
				}
				exs[i].Input.Extra = extra
			}
		}
		strip(sticky, stickyCued)
		strip(typed, typedCued)
	}
	return sticky, typed
}

// gateExamples returns the examples of the gate model: each message, labelled sticky when it
// has an invariant other than a failure.
func gateExamples(exs []Example, debugging func(string) float64) []classify.Example {
	out := make([]classify.Example, len(exs))
	for i, ex := range exs {
		p := debugging(ex.Text)
		_, xs := clauseFeatures(ex.Text, p)
		y := labelNone
		if slices.ContainsFunc(ex.Labels, func(l Label) bool { return l.Type != Blocking }) {
			y = labelSticky
		}
		out[i] = classify.Example{Input: gateInput(ex.Text, xs, p), Label: y, Group: group(ex)}
	}
	return out
}

// Train fits the models on labelled messages: the cued pair on clauses with a cue, the un-cued
// pair on every clause read as an un-cued one, and the gate on whole messages. debugging gives a message's
// P(DEBUGGING) (Debugging, or out-of-fold probabilities for messages the mode model was trained
// on).
func Train(exs []Example, opts classify.Options, debugging func(string) float64) (Models, error) {
	m := Models{StickyAt: StickyThreshold, SafetyAt: SafetyShare, ConceptSafetyAt: ConceptSafetyShare,
		UncuedAt: UncuedThreshold, GateAt: GateThreshold}
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
	g, err := classify.Train(gateExamples(exs, debugging), opts)
	if err != nil {
		return Models{}, fmt.Errorf("invariant: gate model: %w", err)
	}
	m.Gate = g
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
	return CrossValidatePerturbed(rows, extra, k, opts, debugging, 0)
}

// CrossValidatePerturbed is CrossValidate with each fold's training set perturbed by
// dropGroups(seed): one cross-validation's figures move with which messages happen to be in
// training, so a comparison pairs two option sets over several seeds (Compare). Seed 0 drops
// nothing: it is CrossValidate.
func CrossValidatePerturbed(rows, extra []Example, k int, opts classify.Options, debugging func(string) float64, seed uint64) (Report, [][]Span, error) {
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
		m, err := Train(dropGroups(tr, seed, f), opts, debugging)
		if err != nil {
			return Report{}, nil, err
		}
		for i, ex := range rows {
			if folds[i] == f {
				spans[i] = m.Detect(ex.Text, debugging(ex.Text))
			}
		}
	}
	return evaluateSpans(rows, spans), spans, nil
}

// dropGroups returns tr without whole groups (group), at least classify.PerturbShare of its
// messages, drawn by seed and fold (classify.DropGroups). Seed 0 returns tr as it is.
func dropGroups(tr []Example, seed uint64, fold int) []Example {
	return classify.DropGroups(tr, group, classify.PerturbShare, seed, fold)
}
