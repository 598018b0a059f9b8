package ask

// Recording: the turn's one transaction, on the conversation as locked, and what it writes (the
// fact sheet with its citations, the conversation's sources, focus and capsules, telemetry).

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/citations"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/refer"
)

// toRecord is a turn ready to record: what it found and decided, and what it read of the
// conversation before its transaction.
type toRecord struct {
	req       Request
	intent    Intent
	refs      refer.Resolution
	mode      Mode
	goal      compact.Boundary
	spans     []invariant.Span
	sources   []Source
	belowTau  map[uuid.UUID]bool
	focus     *turnFocus // nil: the focus is off
	read      *ragd.ConversationState
	cv        conversation
	summaries map[int]string
	start     time.Time // when the request came: the latency recorded runs from it
}

// recorded is what the turn's transaction wrote and built.
type recorded struct {
	result  *ragd.TurnResult
	context Context
	answer  string
	timings Timings
}

// persist records the turn in one transaction, so a failure leaves the conversation as it was.
// A new conversation gets its id and experiment arm here. It fills in the sources' letters and
// facts (see record).
func (p *Pipeline) persist(ctx context.Context, r toRecord) (recorded, error) {
	var out recorded
	ref := ragd.ConversationRef{ID: r.req.ConversationID}
	if ref.ID == uuid.Nil {
		var err error
		if ref.ID, err = uuid.NewV7(); err != nil {
			return out, fmt.Errorf("ask: new conversation id: %w", err)
		}
		ref.New = true
		if ref.Arm, err = p.arm(ctx); err != nil {
			return out, err
		}
	}
	read := asRead(r.read, ref)
	arm := read.Conversation.ABArm
	// What the context bundle takes from the conversation (invariants, decisions, goal, recent
	// messages, capsules) is gathered before the turn's transaction, from the conversation as read
	// before, so a long conversation does not hold its lock while it is read through. Under the
	// lock it is gathered again only when the conversation moved in between (another turn, or
	// capsules written), so the telemetry recorded with the turn describes the bundle returned,
	// built from the conversation as locked; the evidence, whose markers the fact sheet assigns
	// under the lock, and the bundle's cut to its budgets, are done there.
	// The message's spans as detected, none as an empty list: nil would tell the sticky
	// invariants that nobody looked, and they would run the detector on the message again.
	spans := r.spans
	if spans == nil {
		spans = []invariant.Span{}
	}
	history := func(st *ragd.ConversationState) (turnHistory, error) {
		return p.history(st, r.cv, r.req.Message, spans, r.goal, r.summaries)
	}
	t := time.Now()
	hist, err := history(read)
	if err != nil {
		return out, err
	}
	outside := time.Since(t)
	t = time.Now()
	var factsTime, lockedContext time.Duration
	res, err := p.Store.Turn(ctx, ref, func(st *ragd.ConversationState) (*ragd.TurnWrite, error) {
		if err := PinLimit(st.Sources, r.req.Pins, p.cfg.MaxPins); err != nil {
			return nil, err // checked under the conversation's lock: concurrent pins cannot pass it together
		}
		tf := time.Now()
		w := record(turnRecord{message: r.req.Message, sources: r.sources, intent: r.intent, belowTau: r.belowTau,
			pins: r.req.Pins, perSource: p.cfg.FactsPerSource, carry: p.cfg.Carry, now: time.Now().UTC()}, st)
		factsTime, out.answer = time.Since(tf), w.Answer
		tc := time.Now()
		h := hist
		if moved(read, st) {
			var err error
			if h, err = history(st); err != nil {
				return nil, err
			}
		}
		in := h.input
		in.Evidence = evidence(r.sources)
		out.context = p.buildContext(in, r.mode.Mode, arm)
		if h.start {
			w.GoalTurn = h.number
		}
		w.Capsules = h.capsules
		kept := h.input.Invariants
		if kept == nil {
			kept = []invariant.Invariant{} // none found, as against never looked for (NULL)
		}
		var err error
		if w.Sticky, err = json.Marshal(kept); err != nil {
			return nil, fmt.Errorf("ask: keeping the sticky invariants: %w", err)
		}
		telemetry(w, r.mode, out.context, time.Since(r.start))
		w.Meta[shownKey] = shownMeta(r.sources)
		if !r.refs.Empty() {
			w.Meta["references"] = r.refs
		}
		w.Idempotency = r.req.Idempotency
		if r.focus != nil {
			f := nextFocus(st.Focus, *r.focus, h.number, r.sources, p.cfg.Focus)
			w.Focus = &f
		}
		w.UserMeta = map[string]any{"invariants": r.spans, "goal_start": h.start,
			"goal": map[string]any{"new": r.goal.New, "confidence": r.goal.Confidence, "reason": r.goal.Reason}}
		lockedContext = time.Since(tc)
		return w, nil
	})
	if err != nil {
		return recorded{}, err
	}
	out.result = res
	if len(out.context.Breach) > 0 {
		p.Logger.ErrorContext(ctx, "context bundle lost sticky invariants: rebuilt with GENERAL budgets",
			slog.String("conversation", res.Conversation.ID.String()), slog.Int("turn", res.Conversation.Turn),
			slog.String("mode", string(r.mode.Mode)), slog.String("missing", invariantTexts(out.context.Breach)))
	}
	out.timings.add("facts", factsTime)
	// context: the conversation read through, outside the lock; bundle: the bundle cut to its
	// budgets with the turn's evidence, under it.
	out.timings.add("context", outside)
	out.timings.add("bundle", lockedContext)
	out.timings.add("persist", time.Since(t)-factsTime-lockedContext)
	return out, nil
}

// asRead is the conversation st as the turn read it, before its transaction: a new one is
// created under the lock with the arm ref drew for it, so as read it had that arm already (else
// every new conversation would look moved, and gather its context a second time there).
func asRead(st *ragd.ConversationState, ref ragd.ConversationRef) *ragd.ConversationState {
	if !ref.New {
		return st
	}
	created := *st
	created.Conversation.ABArm = ref.Arm
	return &created
}

// turnRecord is what record needs to know of a turn.
type turnRecord struct {
	message   string
	sources   []Source
	intent    Intent
	belowTau  map[uuid.UUID]bool
	pins      []uuid.UUID
	perSource int
	carry     carry.Config
	now       time.Time
}

// record builds, from the conversation as locked, what the turn writes: the fact sheet with the
// conversation's letters, one citation per fact, and the new state of the conversation's
// sources. It fills in the sources' letters and facts. It is pure, so it runs on the freshest
// state: two concurrent turns of one conversation apply one after the other.
func record(r turnRecord, st *ragd.ConversationState) *ragd.TurnWrite {
	letters := map[uuid.UUID]string{}
	for _, cs := range st.Sources {
		letters[cs.DocID] = cs.Marker
	}
	in := make([]citations.Source, len(r.sources))
	for i, s := range r.sources {
		in[i] = citations.Source{DocID: s.DocID, ChunkID: s.ChunkID, Title: s.Title, Heading: s.Heading, Text: s.Text, Score: s.Score}
	}
	known := make(map[citations.SentenceKey]string, len(st.Markers))
	for _, m := range st.Markers {
		known[citations.KeyOf(m.DocID, m.Sentence)] = m.Marker
	}
	sheet, assigned, next := citations.Build(r.message, in, letters, st.Conversation.NextLetter, r.perSource, known)
	for id, l := range assigned {
		letters[id] = l
	}
	number := st.Conversation.Turn + 1
	w := &ragd.TurnWrite{UserMessage: r.message,
		Meta: map[string]any{"sources": len(r.sources), "turn_intent": r.intent.Label, "turn_intent_confidence": r.intent.Confidence}}
	used := map[uuid.UUID]carry.Used{}
	for i, e := range sheet {
		s := &r.sources[i]
		s.Letter = e.Letter
		s.Facts = make([]ragd.Fact, len(e.Facts))
		for j, f := range e.Facts {
			s.Facts[j] = ragd.Fact{Marker: f.Marker, Text: f.Text, ChunkID: s.ChunkID, Score: f.Score}
			w.Markers = append(w.Markers, ragd.SentenceMarker{Marker: f.Marker, DocID: s.DocID, Sentence: citations.KeyOf(s.DocID, f.Text).Text})
			w.Citations = append(w.Citations, ragd.CitationWrite{DocID: s.DocID, DocVersion: s.Version,
				ChunkID: s.ChunkID, Marker: f.Marker, Fact: f.Text, Score: s.Score,
				Origin: strings.Join(s.Origins, ","), Rank: s.Rank, PageStart: s.PageStart, PageEnd: s.PageEnd})
		}
		u := used[s.DocID]
		u.Letter = e.Letter
		if top := r.sources[0].Score; top > 0 {
			u.Strength = max(u.Strength, s.Score/top)
		}
		u.Chunks = append(u.Chunks, s.ChunkID)
		u.Facts = append(u.Facts, s.Facts...)
		// The focus searches what the conversation is about: its hits are carried on, like the
		// carried list's.
		u.Carried = u.Carried || slices.Contains(s.Origins, "carry") || slices.Contains(s.Origins, "focus")
		used[s.DocID] = u
	}
	// A pinned document the conversation had not seen, and that this turn did not return, still
	// needs a letter: the user will see it among the conversation's sources.
	pins := map[uuid.UUID]string{}
	taken := map[string]bool{}
	for _, l := range letters {
		taken[l] = true
	}
	for _, id := range r.pins {
		l, ok := letters[id]
		for !ok {
			if c := citations.Letter(next); !taken[c] {
				l, ok = c, true
				taken[c] = true
			}
			next++
		}
		pins[id] = l
	}
	w.NextLetter = next
	w.Sources = carry.Update(st.Sources, carry.Turn{Number: number, Now: r.now, NewTopic: r.intent.Label == NewTopic,
		Used: used, BelowTau: r.belowTau, Pin: pins}, r.carry)
	w.Answer = NoSources
	if len(sheet) > 0 {
		w.Answer = citations.Render(sheet, dates(r.sources))
	}
	return w
}

// NoSources is the answer of a turn that found nothing to cite.
const NoSources = "No passage in the indexed documents matches this question."

func dates(sources []Source) map[uuid.UUID]string {
	out := map[uuid.UUID]string{}
	for _, s := range sources {
		out[s.DocID] = s.DateLabel()
	}
	return out
}

// telemetry records the turn's mode and context on its assistant message.
func telemetry(w *ragd.TurnWrite, m Mode, c Context, latency time.Duration) {
	sections := map[string]any{}
	for _, s := range c.Sections {
		sections[s.Name] = map[string]int{"budget": s.Budget, "used": s.Used}
	}
	w.Meta["mode"] = string(m.Mode)
	w.Meta["mode_confidence"] = m.Confidence
	w.Meta["mode_source"] = string(m.Source)
	w.Meta["arm"] = c.Arm
	w.Meta["treated"] = c.Treated
	w.Meta["latency_ms"] = latency.Milliseconds()
	w.Meta["context"] = map[string]any{"mode": c.Mode, "budget": c.BudgetTokens,
		"used": c.UsedTokens, "sections": sections, "invariants": len(c.Invariants),
		"breach": len(c.Breach), "fallback": c.Fallback}
}
