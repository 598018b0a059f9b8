package ask

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/bundle"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/experiment"
	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/mode"
)

// A/B arms of the budgets design: treatment gets the budgets of its mode, control the GENERAL
// budgets whatever its mode (package experiment has the other designs' arms).
const (
	Treatment = experiment.Treatment
	Control   = experiment.Control
)

// Monitors watch the classified modes of all conversations: drift of their distribution, the
// share of turns the classifier was unsure about, and the error rate users' feedback gives each
// mode. Drift sends classification to GENERAL until it recovers; a failing mode goes to GENERAL
// until its error rate comes back down.
type Monitors struct {
	Drift         *mode.Drift
	LowConfidence *mode.LowConfidence
	ErrorRate     *mode.ErrorRate
	// Experiment rolls the experiment's treatment back when it does harm; nil never does.
	Experiment *experiment.Guard
}

// TenantOf is the tenant a request acts for, the key of the per-tenant monitors.
func TenantOf(ctx context.Context) string { return ragd.PrincipalOf(ctx).Tenant.String() }

// Mode is a turn's interaction mode and how it was decided.
type Mode struct {
	mode.Result
	// Reason says why Source is fallback: "low-confidence", "switching", "drift" or
	// "error-rate".
	Reason string
}

// Context is the turn's context bundle, with how it was made.
type Context struct {
	bundle.Bundle
	Arm string // the conversation's experiment arm; "" when no experiment runs
	// Treated says the arm's treatment was applied (false for control, and for every arm
	// after a rollback).
	Treated bool
	// Breach lists invariants the mode's bundle lost; the bundle was then rebuilt with GENERAL
	// budgets (Fallback).
	Breach   []invariant.Invariant
	Fallback bool
}

// Fallback reasons (Mode.Reason).
const (
	ReasonLowConfidence = "low-confidence"
	ReasonSwitching     = "switching"
	ReasonDrift         = "drift"
	ReasonErrorRate     = "error-rate"
)

// detectMode decides the turn's mode: the request's hint, else the classifier (GENERAL when
// unsure, when the conversation keeps switching, while the tenant's mode distribution drifts,
// or while users' feedback says the classified mode is failing).
func (p *Pipeline) detectMode(ctx context.Context, hint, text string, history []string, recent []mode.Mode) Mode {
	r := Mode{Result: mode.Detect(p.cfg.Mode, hint, text, previous(history), recent)}
	if r.Source == mode.SourceMapped {
		return r
	}
	switch {
	case r.Confidence < p.cfg.Mode.Threshold:
		r.Reason = ReasonLowConfidence
	case r.Source == mode.SourceFallback:
		r.Reason = ReasonSwitching
	}
	tenant := TenantOf(ctx)
	if p.Monitors.Drift != nil {
		if _, drifting, _ := p.Monitors.Drift.Observe(tenant, r.Classified); drifting && r.Source != mode.SourceFallback {
			r.Mode, r.Source, r.Reason = mode.General, mode.SourceFallback, ReasonDrift
		}
	}
	if p.Monitors.ErrorRate != nil && r.Source != mode.SourceFallback && p.Monitors.ErrorRate.Failing(tenant, r.Mode) {
		r.Mode, r.Source, r.Reason = mode.General, mode.SourceFallback, ReasonErrorRate
	}
	if p.Monitors.LowConfidence != nil {
		p.Monitors.LowConfidence.Observe(r.Confidence)
	}
	return r
}

// previous is the user turn before the turn, as the mode classifier reads it: "" for none.
func previous(history []string) string {
	if len(history) == 0 {
		return ""
	}
	return history[len(history)-1]
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
// A message with no invariant kept them as null: that is an empty list, not "never looked".
func spansOf(m ragd.Message) []invariant.Span {
	raw, ok := m.Meta["invariants"]
	if !ok {
		return nil
	}
	if spans, ok := raw.([]invariant.Span); ok && spans != nil {
		return spans
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var spans []invariant.Span
	if json.Unmarshal(b, &spans) != nil {
		return nil
	}
	if spans == nil {
		return []invariant.Span{}
	}
	return spans
}

// History is a conversation as the context stage reads it: its messages, oldest first, and the
// capsules of its finished goals.
type History struct {
	Messages []ragd.Message
	Capsules []ragd.Capsule
	// Sticky, when StickyKept, are the sticky invariants of every user message before the turn,
	// kept with the conversation: Messages may then be only the latest ones (with the current
	// goal's first), and the invariants are Sticky's, carried on with the turn's message.
	// Otherwise they are drawn from every user message of Messages.
	Sticky     []invariant.Invariant
	StickyKept bool
}

// TurnContext is what the context stage knows of the turn it builds for.
type TurnContext struct {
	// Number is the turn's number; Message the user's message, or "" for the bundle of the
	// conversation as it stands; Spans its invariant spans; GoalStart whether it starts a goal.
	Number    int
	Message   string
	Spans     []invariant.Span
	GoalStart bool
	// Rules are the operator's configured rules.
	Rules []string
	// Strategy decides what of the history the bundle sees (package compact).
	Strategy compact.Strategy
}

// ContextInput assembles a turn's bundle input, all but the evidence and the budgets: the sticky
// invariants of every user message (compacted or not, read or not: neither drops an invariant),
// the configured rules, the current goal (its first user message, what it achieved so far, this
// message), what the compaction strategy keeps of the conversation (messages verbatim, capsules
// of finished goals), and the decisions stated in the conversation. It is a pure function:
// /v1/ask and the compaction replay (ragd eval compaction) both build their bundles with it.
func ContextInput(h History, t TurnContext) bundle.Input {
	in := bundle.Input{Rules: t.Rules}
	msgs := Messages(h.Messages)
	var users []invariant.Message
	if !h.StickyKept {
		for _, m := range h.Messages {
			if m.Role == "user" {
				users = append(users, invariant.Message{ID: m.ID.String(), Turn: m.Turn, Text: m.Content, Spans: spansOf(m)})
			}
		}
	}
	if t.Message != "" {
		msgs = append(msgs, compact.Message{Turn: t.Number, Role: "user", Text: t.Message, GoalStart: t.GoalStart})
		users = append(users, invariant.Message{ID: "current", Turn: t.Number, Text: t.Message, Spans: t.Spans})
	}
	if h.StickyKept {
		in.Invariants = invariant.StickyAfter(h.Sticky, users)
	} else {
		in.Invariants = invariant.Sticky(users)
	}

	var all []bundle.Turn
	for _, m := range msgs {
		all = append(all, bundle.Turn{Turn: m.Turn, Role: m.Role, Text: m.Text})
	}
	in.Decisions = bundle.Decisions(all)

	if goals := compact.Goals(msgs); len(goals) > 0 {
		cur := goals[len(goals)-1].Messages
		in.Goal = cur[0].Text
		in.Done = compact.Outcomes(cur)
		if last := cur[len(cur)-1]; t.Message != "" && len(cur) > 1 {
			in.Pending = []string{last.Text}
		}
	}
	w := t.Strategy.Window(msgs, h.Capsules)
	for _, m := range w.Recent {
		in.Recent = append(in.Recent, bundle.Turn{Turn: m.Turn, Role: m.Role, Text: m.Text})
	}
	for _, c := range w.Capsules {
		in.Capsules = append(in.Capsules, c.Text)
	}
	return in
}

// Messages is a conversation as compaction reads it: the assistant's side is the reply the chat
// UI recorded, or ragd's own answer while none is.
func Messages(msgs []ragd.Message) []compact.Message {
	out := make([]compact.Message, 0, len(msgs))
	for _, m := range msgs {
		text := m.Content
		if m.Role == "assistant" && m.ReplyRecordedAt == nil {
			text = m.Answer
		}
		start, _ := m.Meta["goal_start"].(bool)
		out = append(out, compact.Message{Turn: m.Turn, Role: m.Role, Text: text, GoalStart: start && m.Role == "user"})
	}
	return out
}

// GoalBoundary decides whether message starts a new goal of the conversation msgs, from the
// turn's intent (classified says a classifier made it) and what the current goal has said.
func GoalBoundary(d compact.Detector, msgs []ragd.Message, message string, in Intent, classified bool) compact.Boundary {
	var goal []compact.Message
	if goals := compact.Goals(Messages(msgs)); len(goals) > 0 {
		goal = goals[len(goals)-1].Messages
	}
	p := -1.0
	if classified {
		p = in.NewTopic
		if in.Label == NewTopic {
			p = max(p, in.Confidence)
		}
	}
	return d.Detect(compact.Signals{Text: message, Goal: goal, NewTopic: p})
}

// NewCapsules makes the capsules the finished goals of msgs lack in have: made holds summaries
// already written (by an LLM, keyed by the goal's first turn), which get the extractive
// capsule's "goal (turns a-b): " head; the others are extractive.
// With maxTokens 0 there are no capsules: finished goals stay verbatim.
func NewCapsules(msgs []compact.Message, have []ragd.Capsule, made map[int]string, maxTokens int) []ragd.Capsule {
	if maxTokens < 1 {
		return nil
	}
	var out []ragd.Capsule
	for _, g := range compact.Missing(msgs, have) {
		c := ragd.Capsule{First: g.First, Last: g.Last, Method: compact.LLM,
			Text: fmt.Sprintf("goal (turns %d-%d): %s", g.First, g.Last, made[g.First])}
		if made[g.First] == "" {
			c.Text, c.Method = compact.Extract(g.Messages, maxTokens), compact.Extractive
		}
		out = append(out, c)
	}
	return out
}

// summarize asks the Summarizer for the capsules of the goals a new goal finishes, before the
// turn's transaction: a model is slow, and the conversation must not stay locked while it
// writes. It returns the summaries by the goal's first turn; a failure is logged and leaves the
// goal to the extractive capsule.
func (p *Pipeline) summarize(ctx context.Context, have []ragd.Capsule, cv conversation, message string, b compact.Boundary) map[int]string {
	if p.Summarizer == nil || !b.New || len(cv.messages) == 0 || !p.strategy.Capsules() || p.cfg.Compact.CapsuleTokens < 1 {
		return nil
	}
	msgs := append(Messages(cv.messages), compact.Message{Turn: cv.messages[len(cv.messages)-1].Turn + 1, Role: "user", Text: message, GoalStart: true})
	made := map[int]string{}
	for _, g := range compact.Missing(msgs, have) {
		text, err := p.Summarizer.Summarize(ctx, g.Messages, p.cfg.Compact.CapsuleTokens)
		if err != nil {
			p.Logger.WarnContext(ctx, "capsule summary failed: the capsule is extractive", slog.Int("first_turn", g.First), slog.Any("error", err))
			continue
		}
		made[g.First] = text
	}
	return made
}

// capsules returns the capsules the turn writes: those of the goals finished by the time of turn
// number (whose message starts a goal when start) that have none in have, written by the
// Summarizer when made has them, else extractive.
func (p *Pipeline) capsules(have []ragd.Capsule, cv conversation, number int, message string, start bool, made map[int]string) []ragd.Capsule {
	msgs := append(Messages(cv.messages), compact.Message{Turn: number, Role: "user", Text: message, GoalStart: start})
	return NewCapsules(msgs, have, made, p.cfg.Compact.CapsuleTokens)
}

// evidence is the turn's fact sheet with the passages it cites.
func evidence(sources []Source) []bundle.Evidence {
	var out []bundle.Evidence
	for _, s := range sources {
		for _, f := range s.Facts {
			out = append(out, bundle.Evidence{Marker: f.Marker, Fact: f.Text, Title: s.Title,
				Date: s.DateLabel(), Passage: s.Text, Rank: s.Rank})
		}
	}
	return out
}

// buildContext builds the bundle with the budgets of the arm and mode, checks that every
// invariant of priority 800 or more made it, and on a breach rebuilds with GENERAL budgets.
//
// The experiment decides what an arm changes: in the budgets design control gets GENERAL's
// budgets and treatment its mode's (matched: scaled to GENERAL's total); in the recent-window
// design an arm keeps the last 3, 1 or no earlier turns in the recent window. A treatment that
// was rolled back is served as the control.
func (p *Pipeline) buildContext(in bundle.Input, m mode.Mode, arm string) Context {
	exp := p.cfg.Experiment
	treated := experiment.IsTreatment(arm) && (p.Monitors.Experiment == nil || p.Monitors.Experiment.Enabled())
	budgetMode, budgets := m, mode.BudgetsFor(m)
	switch {
	case exp.Design == experiment.Budgets && !treated && arm != "":
		budgetMode, budgets = mode.General, mode.BudgetsFor(mode.General)
	case exp.Design == experiment.Budgets && exp.Budget == experiment.Matched:
		budgets = budgets.ScaledTo(mode.BudgetsFor(mode.General).Total())
	case exp.Design == experiment.RecentWindow && treated:
		in.Recent = lastTurns(in.Recent, experiment.RecentTurns(arm))
	}
	in.Mode, in.Budgets = string(budgetMode), bundle.Budgets(budgets)
	c := Context{Bundle: p.BuildBundle(in), Arm: arm, Treated: treated}
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

// lastTurns keeps the current turn (the last one of recent) and the n turns before it; n < 0
// keeps them all.
func lastTurns(recent []bundle.Turn, n int) []bundle.Turn {
	if n < 0 || len(recent) == 0 {
		return recent
	}
	current := recent[len(recent)-1].Turn
	var out []bundle.Turn
	for _, t := range recent {
		if t.Turn >= current-n {
			out = append(out, t)
		}
	}
	return out
}

// arm assigns a new conversation of a tenant to an arm of the experiment: the next slot of the
// tenant's blocked randomisation. "" when no experiment runs.
func (p *Pipeline) arm(ctx context.Context) (string, error) {
	exp := p.cfg.Experiment
	if exp.Design == experiment.Off {
		return "", nil
	}
	tenant := TenantOf(ctx)
	slot, err := p.Store.NextExperimentSlot(ctx, string(exp.Design))
	if err != nil {
		return "", fmt.Errorf("ask: experiment arm: %w", err)
	}
	return exp.Assign(tenant, slot), nil
}

// invariantTexts renders invariants for logs.
func invariantTexts(invs []invariant.Invariant) string {
	var parts []string
	for _, inv := range invs {
		parts = append(parts, fmt.Sprintf("%s: %q", inv.Type, inv.Text))
	}
	return strings.Join(parts, "; ")
}

// turnHistory is what a turn's context bundle takes from the conversation, with what it decided:
// the turn's number, whether the turn starts a goal, and the capsules of the goals that start
// finishes.
type turnHistory struct {
	number   int
	start    bool
	capsules []ragd.Capsule
	input    bundle.Input // all but the evidence and the budgets
}

// history gathers the bundle's input from the conversation st (with messages cv) for the turn
// that asks message.
func (p *Pipeline) history(st *ragd.ConversationState, cv conversation, message string, spans []invariant.Span,
	goal compact.Boundary, summaries map[int]string) (turnHistory, error) {
	h := turnHistory{number: st.Conversation.Turn + 1}
	h.start = goal.New && h.number > 1
	h.capsules = p.capsules(st.Capsules, cv, h.number, message, h.start, summaries)
	in := History{Messages: cv.messages, Capsules: append(slices.Clone(st.Capsules), h.capsules...)}
	if st.Sticky != nil {
		// Kept with the conversation: the messages may be only its latest.
		if err := json.Unmarshal(st.Sticky, &in.Sticky); err != nil {
			return h, fmt.Errorf("ask: the sticky invariants of conversation %s: %w", st.Conversation.ID, err)
		}
		in.StickyKept = true
	}
	h.input = ContextInput(in,
		TurnContext{Number: h.number, Message: message, Spans: spans, GoalStart: h.start, Rules: p.cfg.Rules, Strategy: p.strategy})
	return h, nil
}

// moved reports whether the conversation changed between read, before the turn's transaction,
// and locked, under its lock, in what the context bundle is built from: its turns and capsules.
func moved(read, locked *ragd.ConversationState) bool {
	return read.Conversation.Turn != locked.Conversation.Turn || read.Conversation.ABArm != locked.Conversation.ABArm ||
		!slices.EqualFunc(read.Capsules, locked.Capsules, func(a, b ragd.Capsule) bool { return a.First == b.First && a.Last == b.Last && a.Text == b.Text })
}
