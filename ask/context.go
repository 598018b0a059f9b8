package ask

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/bundle"
	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/mode"
)

// A/B arms: treatment gets the budgets of its mode, control the GENERAL budgets whatever its mode.
const (
	Treatment = "treatment"
	Control   = "control"
)

// Monitors watch the classified modes of all conversations: drift of their distribution, and
// the share of turns the classifier was unsure about. Drift sends classification to GENERAL
// until it recovers.
type Monitors struct {
	Drift         *mode.Drift
	LowConfidence *mode.LowConfidence
}

// Mode is a turn's interaction mode and how it was decided.
type Mode struct {
	mode.Result
	// Reason says why Source is fallback: "low-confidence", "switching" or "drift".
	Reason string
}

// Context is the turn's context bundle, with how it was made.
type Context struct {
	bundle.Bundle
	Arm string // treatment or control
	// Breach lists invariants the mode's bundle lost; the bundle was then rebuilt with GENERAL
	// budgets (Fallback).
	Breach   []invariant.Invariant
	Fallback bool
}

// detectMode decides the turn's mode: the request's hint, else the classifier (GENERAL when
// unsure, when the conversation keeps switching, or while the mode distribution drifts).
func (p *Pipeline) detectMode(hint, text string, history []string, recent []mode.Mode) Mode {
	prev := ""
	if len(history) > 0 {
		prev = history[len(history)-1]
	}
	r := Mode{Result: mode.Detect(p.cfg.Mode, hint, text, prev, recent)}
	if r.Source == mode.SourceMapped {
		return r
	}
	switch {
	case r.Confidence < p.cfg.Mode.Threshold:
		r.Reason = "low-confidence"
	case r.Source == mode.SourceFallback:
		r.Reason = "switching"
	}
	if p.Monitors.Drift != nil {
		if _, drifting, _ := p.Monitors.Drift.Observe(r.Classified); drifting && r.Source != mode.SourceFallback {
			r.Mode, r.Source, r.Reason = mode.General, mode.SourceFallback, "drift"
		}
	}
	if p.Monitors.LowConfidence != nil {
		p.Monitors.LowConfidence.Observe(r.Confidence)
	}
	return r
}

// conversation is what the context stage reads of the conversation before the turn.
type conversation struct {
	messages []ragd.Message
	history  []string // user turns, oldest first
	modes    []mode.Mode
}

// readConversation gathers the messages' user turns, the modes earlier turns got and the arm.
func readConversation(msgs []ragd.Message) conversation {
	cv := conversation{messages: msgs}
	for _, m := range msgs {
		switch m.Role {
		case "user":
			cv.history = append(cv.history, m.Content)
		case "assistant":
			if s, ok := m.Meta["mode"].(string); ok {
				cv.modes = append(cv.modes, mode.Mode(s))
			}
		}
	}
	return cv
}

// spansOf reads the invariant spans kept in a user message's meta; nil when none were kept.
func spansOf(m ragd.Message) []invariant.Span {
	raw, ok := m.Meta["invariants"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	spans := []invariant.Span{}
	if json.Unmarshal(b, &spans) != nil {
		return nil
	}
	return spans
}

// bundleInput assembles everything but the evidence and the budgets: invariants of every user
// message (this one's spans given), the configured rules, the current goal and its progress, the
// conversation so far, decisions, and capsules of finished goals. Goals start at turn 1 and at
// every new topic (a user message marked goal_start); the current one starts at goal.
func (p *Pipeline) bundleInput(cv conversation, number int, message string, spans []invariant.Span, goal int) bundle.Input {
	in := bundle.Input{Rules: p.cfg.Rules}
	var users []invariant.Message
	var turns []bundle.Turn
	var finished [][]bundle.Turn
	for _, m := range cv.messages {
		text := m.Content
		if m.Role == "assistant" && m.ReplyRecordedAt == nil {
			text = m.Answer // the reply the UI showed is not recorded: ragd's own answer stands in
		}
		t := bundle.Turn{Turn: m.Turn, Role: m.Role, Text: text}
		turns = append(turns, t)
		if m.Role == "user" {
			users = append(users, invariant.Message{ID: m.ID.String(), Turn: m.Turn, Text: m.Content, Spans: spansOf(m)})
		}
		switch {
		case m.Turn < goal:
			if start, _ := m.Meta["goal_start"].(bool); m.Role == "user" && (start || len(finished) == 0) {
				finished = append(finished, nil)
			}
			finished[len(finished)-1] = append(finished[len(finished)-1], t)
		case m.Role == "user" && in.Goal == "":
			in.Goal = m.Content
		case m.Role == "user":
			in.Done = append(in.Done, fmt.Sprintf("turn %d: %s", m.Turn, m.Content))
		}
	}
	turns = append(turns, bundle.Turn{Turn: number, Role: "user", Text: message})
	users = append(users, invariant.Message{ID: "current", Turn: number, Text: message, Spans: spans})
	if in.Goal == "" {
		in.Goal = message
	} else {
		in.Pending = []string{message}
	}
	in.Recent = turns
	in.Invariants = invariant.Sticky(users)
	in.Decisions = bundle.Decisions(turns)
	for _, seg := range finished {
		if c := bundle.Capsule(seg, p.cfg.CapsuleTokens); c != "" {
			in.Capsules = append(in.Capsules, c)
		}
	}
	return in
}

// evidence is the turn's fact sheet with the passages it cites.
func evidence(sources []Source) []bundle.Evidence {
	var out []bundle.Evidence
	for _, s := range sources {
		for _, f := range s.Facts {
			out = append(out, bundle.Evidence{Marker: f.Marker, Fact: f.Text, Title: s.Title,
				Date: s.Date.Format("2006-01-02"), Passage: s.Text, Rank: s.Rank})
		}
	}
	return out
}

// buildContext builds the bundle with the budgets of the arm and mode, checks that every
// invariant of priority 800 or more made it, and on a breach rebuilds with GENERAL budgets.
func (p *Pipeline) buildContext(in bundle.Input, m mode.Mode, arm string) Context {
	budgetMode := m
	if arm == Control {
		budgetMode = mode.General
	}
	in.Mode, in.Budgets = string(budgetMode), bundle.Budgets(mode.BudgetsFor(budgetMode))
	c := Context{Bundle: p.BuildBundle(in), Arm: arm}
	var must []invariant.Invariant
	for _, inv := range in.Invariants {
		if inv.Priority >= 800 {
			must = append(must, inv)
		}
	}
	if c.Breach = bundle.Missing(c.Bundle, must); len(c.Breach) > 0 {
		in.Mode, in.Budgets = string(mode.General), bundle.Budgets(mode.BudgetsFor(mode.General))
		c.Bundle, c.Fallback = bundle.Build(in), true
	}
	return c
}

// arm assigns a new conversation to treatment or control by a stable hash of its id.
func (p *Pipeline) arm(id uuid.UUID) string {
	if mode.Arm(id, 1-p.cfg.ControlRatio) == mode.Treatment {
		return Treatment
	}
	return Control
}

// invariantTexts renders invariants for logs.
func invariantTexts(invs []invariant.Invariant) string {
	var parts []string
	for _, inv := range invs {
		parts = append(parts, fmt.Sprintf("%s: %q", inv.Type, inv.Text))
	}
	return strings.Join(parts, "; ")
}

// telemetry records the turn's mode and context on its assistant message.
func telemetry(w *ragd.TurnWrite, t *Turn) {
	sections := map[string]any{}
	for _, s := range t.Context.Sections {
		sections[s.Name] = map[string]int{"budget": s.Budget, "used": s.Used}
	}
	w.Meta["mode"] = string(t.Mode.Mode)
	w.Meta["mode_confidence"] = t.Mode.Confidence
	w.Meta["mode_source"] = string(t.Mode.Source)
	w.Meta["arm"] = t.Context.Arm
	w.Meta["context"] = map[string]any{"mode": t.Context.Mode, "budget": t.Context.BudgetTokens,
		"used": t.Context.UsedTokens, "sections": sections, "invariants": len(t.Context.Invariants),
		"breach": len(t.Context.Breach), "fallback": t.Context.Fallback}
}
