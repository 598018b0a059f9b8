// Package ask is the turn pipeline: it wires the stages of one /v1/ask turn over small
// interfaces and times each stage. Ask, in this file, is the one place that calls them in
// order. The stages are plain functions, here or in their own packages (fuse, dedupe,
// citations, ...), one concern per file: config.go (Config, Deps, New), plan.go (the turn's
// intent, and which lists it fuses with which weights), carry.go (the conversation's sources
// carried in), rank.go (retrieval, dedupe, fusion, rerank), record.go (the turn's one
// transaction), context.go (the context bundle), focus.go (what the conversation is about),
// refer.go (references to shown sources) and answer.go (the LLM's answer).
package ask

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/refer"
)

// Request is one user turn.
type Request struct {
	// ConversationID continues a conversation; zero starts a new one.
	ConversationID uuid.UUID
	Message        string
	// Pins are documents the user pins with this turn: carried into it and every later one.
	Pins []uuid.UUID
	// ModeHint is the chat UI's word for the interaction (task, debug, explore, learn,
	// general...); unknown or empty leaves the mode to the classifier.
	ModeHint string
	// Idempotency, when set, is recorded with the turn, in its transaction.
	Idempotency *ragd.Idempotency
}

// Source is one passage a turn returns, with its facts and where it came from.
type Source struct {
	Rank    int
	Letter  string
	DocID   uuid.UUID
	Version int
	ChunkID int64
	// Members are the chunks dedupe joined into this passage, ChunkID's first.
	Members   []int64
	Title     string
	Heading   string
	URL       string
	Path      string
	Date      time.Time
	DateKind  string // ragd.DatePublished when the document gives a date, else ragd.DateIngested
	PageStart int
	PageEnd   int
	Text      string
	Score     float64
	Fused     float64
	Rerank    *float64
	Origins   []string // the lists that found it: bm25, vector, carry, focus, kg
	Facts     []ragd.Fact
	// Referred is the words by which the turn referred to the source ("the second one").
	Referred string
}

// DateLabel is the source's date as answers, prompts and context bundles show it: the date the
// document gives, else "ingested" and the day it was, so an undated document never reads as
// published on the day it was ingested.
func (s Source) DateLabel() string {
	if s.DateKind == ragd.DatePublished {
		return s.Date.Format("2006-01-02")
	}
	return "ingested " + s.Date.Format("2006-01-02")
}

// Turn is what one /v1/ask call produced and recorded.
type Turn struct {
	ConversationID     uuid.UUID
	Turn               int
	UserMessageID      uuid.UUID
	AssistantMessageID uuid.UUID
	Intent             Intent
	// References are the shown sources the turn referred to or set aside (package refer).
	References refer.Resolution
	Carry      CarryReport
	Mode       Mode
	// Goal says whether the turn started a new goal (which finished the one before).
	Goal    compact.Boundary
	Context Context
	Sources []Source
	// Ranked is every candidate of the turn in final order, before the cut to Sources; for
	// evaluation, which scores rankings deeper than the sources a turn returns.
	Ranked []Candidate
	// Answer is the extractive answer: the fact sheet as text.
	Answer string
	// Lists are the retrieval lists that were fused; Reranked whether the cross-encoder ordered
	// the sources, and Skipped why a stage did not run.
	Lists    []string
	Reranked bool
	Skipped  map[string]string
	// Queries holds the text each search ran with, by list name: the question itself, and what
	// the conversation added (context, compared entities).
	Queries map[string]string
	Timings Timings

	question string // the message, for the answer step
}

// Ask runs one turn: the conversation's state, the turn's intent, the carried sources re-scored,
// fresh retrieval, dedupe, fusion, rerank, the fact sheet, and the record of it all in one
// transaction. A failure anywhere leaves the conversation as it was.
func (p *Pipeline) Ask(ctx context.Context, req Request) (*Turn, error) {
	start := time.Now()
	if err := p.validate(&req); err != nil {
		return nil, err
	}
	turn := &Turn{Skipped: p.skipped(), question: req.Message}
	t := time.Now()
	st, cv, err := p.load(ctx, req)
	if err != nil {
		return nil, err
	}
	turn.Timings.add("load_conversation", time.Since(t))

	var tf *turnFocus // nil: the focus is off (FocusWeight 0), neither tracked nor searched with
	if p.cfg.FocusWeight > 0 {
		t = time.Now()
		f := p.focusFor(ctx, req.Message, st, cv)
		turn.Timings.add("focus", time.Since(t))
		tf = &f
	}

	t = time.Now()
	turn.Intent, turn.References = p.intent(req.Message, st, cv, tf)
	turn.Mode = p.detectMode(ctx, req.ModeHint, req.Message, cv.history, cv.modes)
	// The detector reads P(DEBUGGING) from its own pinned model, not from this turn's mode.
	spans := invariant.Detect(req.Message)
	turn.Goal = GoalBoundary(p.Boundaries, cv.messages, req.Message, turn.Intent, p.Intent != nil)
	turn.Timings.add("classify", time.Since(t))
	t = time.Now()
	summaries := p.summarize(ctx, st.Capsules, cv, req.Message, turn.Goal)
	if summaries != nil {
		turn.Timings.add("summarize", time.Since(t))
	}

	cache := newChunkCache(p.Store) // one read of each chunk for the whole turn
	t = time.Now()
	c, err := p.carryOver(ctx, req.Message, req.Pins, st, turn.Intent, turn.References, cache)
	if err != nil {
		return nil, err
	}
	turn.Carry = c.report
	turn.Timings.add("carry", time.Since(t))

	in, err := p.lookups(ctx, req.Message, cv.history, turn.Intent, c.picks, focusOf(st.Sources, turn.Intent), tf, cache)
	if err != nil {
		return nil, err
	}
	ranking, err := p.rank(ctx, req.Message, plan(p.cfg, in), p.Reranker != nil, c.reused, cache)
	if err != nil {
		return nil, err
	}
	turn.Lists, turn.Reranked, turn.Ranked, turn.Queries = ranking.Lists, ranking.Reranked, ranking.Candidates, ranking.Queries
	turn.Timings = append(turn.Timings, ranking.Timings...)
	ranked := firstPerDocument(ranking.Candidates)
	kept := referredFirst(ranked, keep(ranked, p.cfg), turn.References)

	t = time.Now()
	sources, err := p.describe(ctx, kept)
	if err != nil {
		return nil, err
	}
	referredBy(sources, turn.References)
	turn.Timings.add("describe", time.Since(t))

	rec, err := p.persist(ctx, toRecord{req: req, intent: turn.Intent, refs: turn.References, mode: turn.Mode,
		goal: turn.Goal, spans: spans, sources: sources, belowTau: c.belowTau, focus: tf, read: st, cv: cv,
		summaries: summaries, start: start})
	if err != nil {
		return nil, err
	}
	turn.Timings = append(turn.Timings, rec.timings...)
	turn.ConversationID = rec.result.Conversation.ID
	turn.Turn = rec.result.Conversation.Turn
	turn.UserMessageID = rec.result.UserMessageID
	turn.AssistantMessageID = rec.result.AssistantMessageID
	turn.Context = rec.context
	turn.Sources = sources // with the letters and facts the record gave them
	turn.Answer = rec.answer
	turn.Timings.add("total", time.Since(start))
	if p.Monitors.Experiment != nil {
		p.Monitors.Experiment.Turn(turn.Context.Arm, time.Since(start))
	}
	return turn, nil
}

// skipped says which stages no turn runs, for want of a model.
func (p *Pipeline) skipped() map[string]string {
	out := map[string]string{}
	if p.Embedder == nil {
		out["vector"] = "no embedding model configured"
	}
	if p.Reranker == nil {
		out["rerank"] = "no cross-encoder configured: sources are in fused order"
	}
	return out
}

// load reads the conversation the turn continues (an empty state for a new one) and its
// messages, and checks that pinned documents exist.
func (p *Pipeline) load(ctx context.Context, req Request) (*ragd.ConversationState, conversation, error) {
	for _, id := range req.Pins {
		d, err := p.Store.Document(ctx, id)
		if err != nil {
			return nil, conversation{}, fmt.Errorf("pin: %w", err)
		}
		if d.DeletedAt != nil {
			return nil, conversation{}, fmt.Errorf("pin: document %s was deleted: %w", id, ragd.ErrNotFound)
		}
	}
	if req.ConversationID == uuid.Nil {
		return &ragd.ConversationState{}, conversation{}, nil
	}
	st, err := p.Store.ConversationState(ctx, req.ConversationID)
	if err != nil {
		return nil, conversation{}, err
	}
	// The latest messages only, with the current goal's first (its capsule's start, and what
	// the bundle calls the goal). A conversation whose invariants are not kept yet (from before
	// they were) is read whole once: this turn keeps them.
	window := p.cfg.HistoryMessages
	if st.Sticky == nil {
		window = 0
	}
	msgs, err := p.Store.RecentMessages(ctx, req.ConversationID, window, max(st.Conversation.GoalTurn, 1))
	if err != nil {
		return nil, conversation{}, err
	}
	return st, readConversation(msgs), nil
}

// validate checks the user's message before any work is done for it.
func (p *Pipeline) validate(req *Request) error {
	req.Message = strings.TrimSpace(req.Message)
	switch {
	case req.Message == "":
		return ragd.Invalidf("message", "is empty")
	case len(req.Message) > p.cfg.MaxMessageBytes:
		return ragd.Invalidf("message", "is %d bytes, over the %d-byte limit", len(req.Message), p.cfg.MaxMessageBytes)
	case !utf8.ValidString(req.Message):
		return ragd.Invalidf("message", "is not valid UTF-8")
	case len(req.Pins) > p.cfg.MaxPins:
		return ragd.Invalidf("pins", "%d pins, over the limit of %d per conversation", len(req.Pins), p.cfg.MaxPins)
	}
	return nil
}

// PinLimit checks that a conversation with sources would have at most max pins after pinning
// add: an error naming the pins when not.
func PinLimit(sources []ragd.ConversationSource, add []uuid.UUID, max int) error {
	pinned := map[uuid.UUID]bool{}
	for _, s := range sources {
		if s.Pinned {
			pinned[s.DocID] = true
		}
	}
	for _, id := range add {
		pinned[id] = true
	}
	if len(pinned) > max {
		return ragd.Invalidf("pins", "the conversation would have %d pinned documents, over the limit of %d: unpin some first", len(pinned), max)
	}
	return nil
}
