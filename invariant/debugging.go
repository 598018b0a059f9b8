package invariant

import (
	"fmt"
	"path/filepath"
	"sync"

	_ "embed"

	"github.com/ragd/ragd/classify"
	"github.com/ragd/ragd/mode"
)

// The detector reads one learnt feature from outside its own models: the probability that a
// message is DEBUGGING (a current failure to resolve, the modes' labelling rule 1), which speaks
// for a failure however it is worded. It owns the model that gives it: a mode classifier trained
// by mode's own code (mode.Train, read through mode.Probabilities) with options pinned here
// (DebuggingOptions) and embedded as DebuggingFile. It used to read the shipped mode model, so
// every change of the mode model retrained the five detector models on shifted inputs, and their
// training variance (about 50 of 1,464 clauses decided differently per retraining) decided
// whether a better mode model could land: it blocked two that improved the modes in
// cross-validation (sessions 9 and 10). Pinned, a mode model change leaves the detector
// bit-identical, and a change of the feature is a change of the detector, judged as one.

// DebuggingFile is the detector's embedded P(DEBUGGING) model, in the package directory.
const DebuggingFile = "model_debugging.json"

//go:embed model_debugging.json
var debuggingJSON []byte

// DebuggingOptions are the pinned options of the detector's P(DEBUGGING) model: those of the
// mode model the detector's models were chosen with (mode.TrainOptions at 67194fb: classify's
// defaults, every mode weighed equally, L2 1e-4, no word vectors).
func DebuggingOptions() classify.Options {
	o := classify.DefaultOptions()
	o.BalanceClasses = true
	o.L2 = 1e-4
	return o
}

// debuggingModel is the embedded P(DEBUGGING) model, parsed on first use. The file is generated
// and tested, so a failure to parse it is a build defect. A variable, so that a test can put
// another model in its place and see Debugging follow it.
var debuggingModel = sync.OnceValue(func() *classify.Model {
	m, err := classify.LoadBytes(debuggingJSON)
	if err != nil {
		panic(fmt.Sprintf("invariant: embedded %s: %v", DebuggingFile, err))
	}
	return m
})

// Debugging is the probability that msg is DEBUGGING by the detector's own mode model, read
// without the previous turn, since a message's invariants are its own whatever came before.
func Debugging(msg string) float64 {
	return mode.Probabilities(debuggingModel(), msg, "")[mode.Debugging]
}

// modeDataFiles are the files the P(DEBUGGING) model learns from: modes_train.jsonl in labels
// and mode's extra rows beside the package directory dir.
func modeDataFiles(labels, dir string) [2]string {
	return [2]string{filepath.Join(labels, "modes_train.jsonl"), filepath.Join(dir, "..", "mode", "data", "modes_extra.jsonl")}
}

// loadModeData reads modeDataFiles: the rows, then the extra rows.
func loadModeData(labels, dir string) (rows, extra []mode.Example, err error) {
	files := modeDataFiles(labels, dir)
	if rows, err = mode.LoadExamples(files[0]); err != nil {
		return nil, nil, err
	}
	if extra, err = mode.LoadExamples(files[1]); err != nil {
		return nil, nil, err
	}
	return rows, extra, nil
}

// TrainDebugging trains the detector's P(DEBUGGING) model on modeDataFiles with
// DebuggingOptions: what `go generate ./invariant` writes to DebuggingFile, before the
// detector's models, which read it.
func TrainDebugging(labels, dir string) (*classify.Model, error) {
	rows, extra, err := loadModeData(labels, dir)
	if err != nil {
		return nil, err
	}
	return mode.Train(append(rows, extra...), DebuggingOptions())
}
