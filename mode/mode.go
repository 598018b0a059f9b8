// Package mode decides a conversation turn's interaction mode (TASK, EXPLORATION, DEBUGGING,
// LEARNING or GENERAL), which sets the token budgets of the context bundle (DESIGN.md §2).
//
// Detect runs the two stages of the spec: the request's intent hint when it maps to a mode,
// else a classifier trained on ../shared/data/labels/modes_train.jsonl and embedded in the
// binary, with GENERAL as the fallback when it is unsure or the conversation keeps switching.
// The package also watches the classifier in production: Drift (the tenant's mode distribution
// against its baseline), LowConfidence, and ErrorRate (users' feedback per mode).
package mode

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	_ "embed"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/classify"
)

//go:generate go run ../cmd/ragd-train -task mode -data ../../shared/data/labels -out model.json

// Mode is an interaction mode.
type Mode string

// The five modes. The labelling rules are in ../shared/data/labels/README.md §1.
const (
	// Task: the user wants something carried out (write, change, configure, book, translate).
	Task Mode = "TASK"
	// Exploration: open-ended thinking, what-ifs, weighing options for one's own decision.
	Exploration Mode = "EXPLORATION"
	// Debugging: something fails now and the user wants a diagnosis or a fix.
	Debugging Mode = "DEBUGGING"
	// Learning: the user wants to understand something.
	Learning Mode = "LEARNING"
	// General: everything else, and the fallback when the classifier is unsure.
	General Mode = "GENERAL"
)

// Modes lists the modes in a fixed order.
var Modes = []Mode{Task, Exploration, Debugging, Learning, General}

// Source says where a Result's mode came from.
type Source string

// The sources of a Result.
const (
	// SourceMapped: the request's intent hint named the mode.
	SourceMapped Source = "mapped"
	// SourceClassified: the classifier's answer, confident enough and consistent with the
	// conversation.
	SourceClassified Source = "classified"
	// SourceFallback: GENERAL, because the classifier was unsure or the conversation kept
	// switching.
	SourceFallback Source = "fallback"
)

// Map maps a request's intent hint to a mode: task and implement give TASK; debug, fix and
// error give DEBUGGING; explore and investigate give EXPLORATION; learn, explain and teach give
// LEARNING. Case and surrounding space do not matter. Anything else, including general,
// default and the empty hint, is not mapped (ok is false) and leaves the choice to the
// classifier.
func Map(hint string) (m Mode, ok bool) {
	switch strings.ToLower(strings.TrimSpace(hint)) {
	case "task", "implement":
		return Task, true
	case "debug", "fix", "error":
		return Debugging, true
	case "explore", "investigate":
		return Exploration, true
	case "learn", "explain", "teach":
		return Learning, true
	}
	return "", false
}

//go:embed model.json
var modelJSON []byte

// model is the embedded model, parsed on first use. The file is generated and tested, so a
// failure to parse it is a build defect, not a run-time condition.
var model = sync.OnceValue(func() *classify.Model {
	m, err := classify.LoadBytes(modelJSON)
	if err != nil {
		panic(fmt.Sprintf("mode: embedded model.json: %v", err))
	}
	return m
})

// Classify runs the trained classifier on a turn, given the previous user turn (or ""). It
// returns the most probable mode, its probability, and the probabilities of all modes.
func Classify(text, prev string) (Mode, float64, map[Mode]float64) {
	return predict(model(), text, prev)
}

// Probabilities runs model m, a mode model Train made, on a turn as Classify runs the embedded
// one: for a caller that keeps its own mode model (the invariant detector pins the one its
// P(DEBUGGING) feature was trained on), with mode's features and nothing copied.
func Probabilities(m *classify.Model, text, prev string) map[Mode]float64 {
	_, _, probs := predict(m, text, prev)
	return probs
}

func predict(m *classify.Model, text, prev string) (Mode, float64, map[Mode]float64) {
	label, probs := m.Predict(input(text, prev))
	out := make(map[Mode]float64, len(probs))
	var conf float64
	for i, l := range m.Labels() {
		out[Mode(l)] = probs[i]
		if l == label {
			conf = probs[i]
		}
	}
	return Mode(label), conf, out
}

// Config tunes Detect. DefaultConfig gives the defaults; the zero Config disables both the
// threshold and smoothing.
type Config struct {
	// Threshold is the classifier confidence under which Detect answers GENERAL (0.40).
	Threshold float64
	// Window is how many of the conversation's recent modes smoothing looks at (3).
	Window int
	// MaxSwitches is how many changes of mode the window plus the new turn may hold before
	// Detect answers GENERAL. The default, 2, trips only when every turn in a window of 3
	// changed mode (A B C D, or A B A B): a conversation that bounces like that has no mode a
	// budget could serve, while one change (A A B) or a return (A B B A) is ordinary.
	MaxSwitches int
}

// DefaultConfig returns threshold 0.40, window 3, at most 2 switches. The product document
// gives 0.70; 0.40 was chosen by grouped cross-validation on modes_train.jsonl (fold seeds 1-3,
// extra rows in training folds only) among 0.40, 0.50, 0.60 and 0.70: macro F1 with the
// fallback counted as GENERAL 0.878 at 0.40 against 0.842 at 0.70, paired +0.036 [+0.014,
// +0.059], and 0.870 with no fallback. In that CV, answers under 0.40 (2% of turns) were right
// 18% of the time, those from 0.40 to 0.70 (13%) 61%: the latter are worth their mode's budgets.
func DefaultConfig() Config { return Config{Threshold: 0.40, Window: 3, MaxSwitches: 2} }

// Validate checks the settings. Its errors are *ragd.InputError naming the field.
func (c Config) Validate() error {
	var errs []error
	if c.Threshold < 0 || c.Threshold > 1 {
		errs = append(errs, ragd.Invalidf("Threshold", "must be in 0..1, got %g", c.Threshold))
	}
	if c.Window < 0 {
		errs = append(errs, ragd.Invalidf("Window", "must not be negative, got %d", c.Window))
	}
	if c.MaxSwitches < 0 {
		errs = append(errs, ragd.Invalidf("MaxSwitches", "must not be negative, got %d", c.MaxSwitches))
	}
	return errors.Join(errs...)
}

// Result is a turn's mode and how it was decided.
type Result struct {
	Mode Mode
	// Confidence is 1 for a mapped hint, else the classifier's probability of its answer
	// (also when the answer fell back to GENERAL).
	Confidence float64
	Source     Source
	// Classified is what the classifier said, before fallback and smoothing; empty when a
	// mapped hint meant the classifier did not run.
	Classified Mode
}

// Detect decides the mode of a turn in stages:
//
//  1. If Map(hint) maps the hint, that mode, with confidence 1 and SourceMapped. Nothing else
//     is consulted: an explicit hint is the caller's decision.
//  2. Otherwise Classify(text, prev). If its confidence is under cfg.Threshold, GENERAL with
//     SourceFallback.
//  3. Otherwise smoothing: take the last cfg.Window entries of recent (the modes Detect gave
//     the conversation's previous turns, oldest first) followed by the classified mode, and
//     count the adjacent pairs that differ. More than cfg.MaxSwitches gives GENERAL with
//     SourceFallback; otherwise the classified mode with SourceClassified. With fewer recent
//     modes there are fewer pairs, so a new conversation is never smoothed away.
//
// Detect is a pure function of its arguments. Callers that watch a Drift answer GENERAL
// themselves while it reports drifting.
func Detect(cfg Config, hint, text, prev string, recent []Mode) Result {
	if m, ok := Map(hint); ok {
		return Result{Mode: m, Confidence: 1, Source: SourceMapped}
	}
	m, conf, _ := Classify(text, prev)
	return decide(cfg, m, conf, recent)
}

// decide is Detect's stages 2 and 3, given the classifier's answer.
func decide(cfg Config, m Mode, conf float64, recent []Mode) Result {
	r := Result{Mode: m, Confidence: conf, Source: SourceClassified, Classified: m}
	if conf < cfg.Threshold {
		r.Mode, r.Source = General, SourceFallback
		return r
	}
	if Switches(recent, cfg.Window, m) > cfg.MaxSwitches {
		r.Mode, r.Source = General, SourceFallback
	}
	return r
}

// Switches counts the changes of mode in the last window entries of recent followed by next.
func Switches(recent []Mode, window int, next Mode) int {
	if window < 0 {
		window = 0
	}
	if len(recent) > window {
		recent = recent[len(recent)-window:]
	}
	n := 0
	for i := range recent {
		after := next
		if i+1 < len(recent) {
			after = recent[i+1]
		}
		if recent[i] != after {
			n++
		}
	}
	return n
}
