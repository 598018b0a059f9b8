package ask

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/citations"
	"github.com/ragd/ragd/store"
)

// TurnStore reads conversations and records turns, each in one transaction.
type TurnStore interface {
	ConversationState(ctx context.Context, id uuid.UUID) (*store.ConversationState, error)
	Turn(ctx context.Context, id uuid.UUID, ab string, fn func(*store.ConversationState) (*store.TurnWrite, error)) (*store.TurnResult, error)
	VersionInfo(ctx context.Context, refs []store.VersionRef) (map[store.VersionRef]store.VersionInfo, error)
}

// Request is one user turn.
type Request struct {
	// ConversationID continues a conversation; zero starts a new one.
	ConversationID uuid.UUID
	Message        string
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
	DateKind  string // "published" when the document says so, else "ingested"
	PageStart int
	PageEnd   int
	Text      string
	Score     float64
	Fused     float64
	Rerank    *float64
	Origins   []string // the lists that found it: bm25, vector
	Facts     []ragd.Fact
}

// Turn is what one /v1/ask call produced and recorded.
type Turn struct {
	ConversationID     uuid.UUID
	Turn               int
	UserMessageID      uuid.UUID
	AssistantMessageID uuid.UUID
	Sources            []Source
	// Answer is the extractive answer: the fact sheet as text.
	Answer string
	// Lists are the retrievers that ran; Reranked whether the cross-encoder ordered the sources,
	// and Skipped why a stage did not run.
	Lists    []string
	Reranked bool
	Skipped  map[string]string
	Timings  Timings

	question string // the message, for the answer step
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
	}
	return nil
}

// Ask runs one turn: fresh retrieval, dedupe, fusion, rerank, the fact sheet, and the record of
// it all in one transaction. A failure anywhere leaves the conversation as it was.
func (p *Pipeline) Ask(ctx context.Context, req Request) (*Turn, error) {
	start := time.Now()
	if p.Turns == nil {
		return nil, fmt.Errorf("ask: pipeline has no turn store")
	}
	if err := p.validate(&req); err != nil {
		return nil, err
	}
	if req.ConversationID != uuid.Nil {
		// Refuse an unknown conversation before spending a retrieval on it.
		if _, err := p.Turns.ConversationState(ctx, req.ConversationID); err != nil {
			return nil, err
		}
	}
	o := rankOptions{bm25: true, vector: p.Embedder != nil, rerank: p.Reranker != nil}
	skipped := map[string]string{}
	if !o.vector {
		skipped["vector"] = "no embedding model configured"
	}
	if !o.rerank {
		skipped["rerank"] = "no cross-encoder configured: sources are in fused order"
	}
	ranking, err := p.rank(ctx, req.Message, o)
	if err != nil {
		return nil, err
	}
	turn := &Turn{Lists: ranking.Lists, Reranked: ranking.Reranked, Skipped: skipped, Timings: ranking.Timings,
		question: req.Message}
	kept := keep(ranking.Candidates, p.cfg)

	t := time.Now()
	sources, err := p.describe(ctx, kept)
	if err != nil {
		return nil, err
	}
	turn.Timings.add("describe", time.Since(t))

	t = time.Now()
	var factsTime time.Duration
	res, err := p.Turns.Turn(ctx, req.ConversationID, "", func(st *store.ConversationState) (*store.TurnWrite, error) {
		tf := time.Now()
		w := record(req.Message, sources, st, p.cfg.FactsPerSource, time.Now().UTC())
		factsTime = time.Since(tf)
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	turn.Timings.add("facts", factsTime)
	turn.Timings.add("persist", time.Since(t)-factsTime)
	turn.ConversationID = res.Conversation.ID
	turn.Turn = res.Conversation.Turn
	turn.UserMessageID = res.UserMessageID
	turn.AssistantMessageID = res.AssistantMessageID
	turn.Sources = sources
	turn.Answer = answerOf(sources)
	turn.Timings.add("total", time.Since(start))
	return turn, nil
}

// describe turns kept candidates into sources with their documents' details.
func (p *Pipeline) describe(ctx context.Context, kept []Candidate) ([]Source, error) {
	refs := make([]store.VersionRef, len(kept))
	for i, c := range kept {
		refs[i] = store.VersionRef{DocID: c.Chunk.DocID, Version: c.Chunk.Version}
	}
	info, err := p.Turns.VersionInfo(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	sources := make([]Source, len(kept))
	for i, c := range kept {
		vi := info[refs[i]]
		s := Source{Rank: i + 1, DocID: c.Chunk.DocID, Version: c.Chunk.Version, ChunkID: c.Chunk.ID,
			Members: c.Members, Title: vi.Title, Heading: c.Chunk.Heading, URL: vi.URL, Path: vi.Path,
			Date: vi.IngestedAt, DateKind: "ingested", PageStart: c.PageStart, PageEnd: c.PageEnd,
			Text: c.Chunk.Text, Score: c.Score(), Fused: c.Fused, Origins: origins(c.Ranks)}
		if vi.PublishedAt != nil {
			s.Date, s.DateKind = *vi.PublishedAt, "published"
		}
		if c.Reranked {
			r := c.Rerank
			s.Rerank = &r
		}
		sources[i] = s
	}
	return sources, nil
}

// origins lists the lists that found a passage in a fixed order.
func origins(ranks map[string]int) []string {
	var out []string
	for _, name := range []string{"bm25", "vector", "carry", "kg"} {
		if _, ok := ranks[name]; ok {
			out = append(out, name)
		}
	}
	return out
}

// record builds, from the conversation as locked, what the turn writes: the fact sheet with the
// conversation's letters, one citation per fact, and the sources' new state. It fills in the
// sources' letters and facts. It is pure, so it can run again on fresher state.
func record(message string, sources []Source, st *store.ConversationState, perSource int, now time.Time) *store.TurnWrite {
	letters := map[uuid.UUID]string{}
	prior := map[uuid.UUID]ragd.ConversationSource{}
	for _, cs := range st.Sources {
		letters[cs.DocID] = cs.Marker
		prior[cs.DocID] = cs
	}
	in := make([]citations.Source, len(sources))
	for i, s := range sources {
		in[i] = citations.Source{DocID: s.DocID, ChunkID: s.ChunkID, Title: s.Title, Heading: s.Heading, Text: s.Text, Score: s.Score}
	}
	sheet, assigned, next := citations.Build(message, in, letters, st.Conversation.NextLetter, perSource)
	for id, l := range assigned {
		letters[id] = l
	}
	turn := st.Conversation.Turn + 1
	w := &store.TurnWrite{UserMessage: message, NextLetter: next,
		Meta: map[string]any{"sources": len(sources)}}
	updated := map[uuid.UUID]*ragd.ConversationSource{}
	var order []uuid.UUID
	for i, e := range sheet {
		s := &sources[i]
		s.Letter = e.Letter
		s.Facts = make([]ragd.Fact, len(e.Facts))
		for j, f := range e.Facts {
			s.Facts[j] = ragd.Fact{Marker: f.Marker, Text: f.Text, ChunkID: s.ChunkID, Score: f.Score}
			w.Citations = append(w.Citations, store.CitationWrite{DocID: s.DocID, DocVersion: s.Version,
				ChunkID: s.ChunkID, Marker: f.Marker, Fact: f.Text, Score: s.Score,
				Origin: strings.Join(s.Origins, ","), Rank: s.Rank, PageStart: s.PageStart, PageEnd: s.PageEnd})
		}
		cs, ok := updated[s.DocID]
		if !ok {
			p, seen := prior[s.DocID]
			if !seen {
				p = ragd.ConversationSource{DocID: s.DocID, Marker: e.Letter, FirstTurn: turn}
			}
			p.Carried, p.InactiveTurns, p.LastTurn, p.LastUsedAt = true, 0, turn, now
			p.CarryScore, p.CitedChunkIDs, p.Facts, p.Reason = s.Score, nil, nil, "retrieved"
			cs = &p
			updated[s.DocID] = cs
			order = append(order, s.DocID)
		}
		cs.CitedChunkIDs = append(cs.CitedChunkIDs, s.ChunkID)
		cs.Facts = append(cs.Facts, s.Facts...)
		cs.CarryScore = max(cs.CarryScore, s.Score)
	}
	for _, id := range order {
		w.Sources = append(w.Sources, *updated[id])
	}
	w.Answer = answerOf(sources)
	return w
}

// NoSources is the answer of a turn that found nothing to cite.
const NoSources = "No passage in the indexed documents matches this question."

// answerOf is the extractive answer: the fact sheet as text.
func answerOf(sources []Source) string {
	if len(sources) == 0 {
		return NoSources
	}
	return citations.Render(sheetOf(sources), dates(sources))
}

// sheetOf rebuilds the fact sheet view of sources whose letters and facts are filled in.
func sheetOf(sources []Source) []citations.Entry {
	sheet := make([]citations.Entry, len(sources))
	for i, s := range sources {
		e := citations.Entry{Letter: s.Letter, Source: citations.Source{DocID: s.DocID, ChunkID: s.ChunkID, Title: s.Title, Heading: s.Heading, Text: s.Text, Score: s.Score}}
		for _, f := range s.Facts {
			e.Facts = append(e.Facts, citations.Fact{Marker: f.Marker, Text: f.Text, Score: f.Score})
		}
		sheet[i] = e
	}
	return sheet
}

func dates(sources []Source) map[uuid.UUID]string {
	out := map[uuid.UUID]string{}
	for _, s := range sources {
		out[s.DocID] = s.Date.Format("2006-01-02")
	}
	return out
}
