package server

import (
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/refer"
)

// The JSON shapes of the API. They are kept apart from the domain types so the wire format
// changes only on purpose; openapi.yaml describes each of them.

type pageRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

func pages(start, end int) *pageRange {
	if start == 0 {
		return nil
	}
	return &pageRange{start, end}
}

type factJSON struct {
	Marker string `json:"marker"`
	Text   string `json:"text"`
}

type sourceJSON struct {
	Rank     int        `json:"rank"`
	Letter   string     `json:"letter"`
	DocID    uuid.UUID  `json:"doc_id"`
	Version  int        `json:"version"`
	ChunkID  int64      `json:"chunk_id"`
	Title    string     `json:"title"`
	Heading  string     `json:"heading,omitempty"`
	URL      string     `json:"url,omitempty"`
	Path     string     `json:"path,omitempty"`
	Date     string     `json:"date"`
	DateKind string     `json:"date_kind"`
	Pages    *pageRange `json:"pages"`
	Text     string     `json:"text"`
	Score    float64    `json:"score"`
	Fused    float64    `json:"fused"`
	Rerank   *float64   `json:"rerank"`
	Origins  []string   `json:"origins"`
	Facts    []factJSON `json:"facts"`
	Referred string     `json:"referred,omitempty"`
}

func sourceOf(s ask.Source) sourceJSON {
	out := sourceJSON{Rank: s.Rank, Letter: s.Letter, DocID: s.DocID, Version: s.Version, ChunkID: s.ChunkID,
		Title: s.Title, Heading: s.Heading, URL: s.URL, Path: s.Path, Date: s.Date.Format("2006-01-02"),
		DateKind: s.DateKind, Pages: pages(s.PageStart, s.PageEnd), Text: s.Text, Score: s.Score,
		Fused: s.Fused, Rerank: s.Rerank, Origins: s.Origins, Facts: make([]factJSON, len(s.Facts)), Referred: s.Referred}
	for i, f := range s.Facts {
		out.Facts[i] = factJSON{Marker: f.Marker, Text: f.Text}
	}
	return out
}

type timingJSON struct {
	Stage string  `json:"stage"`
	MS    float64 `json:"ms"`
}

func timingsOf(ts ask.Timings) []timingJSON {
	out := make([]timingJSON, len(ts))
	for i, t := range ts {
		out[i] = timingJSON{Stage: t.Stage, MS: float64(t.Duration.Microseconds()) / 1000}
	}
	return out
}

type retrievalJSON struct {
	Lists    []string          `json:"lists"`
	Queries  map[string]string `json:"queries"`
	Reranked bool              `json:"reranked"`
	Skipped  map[string]string `json:"skipped"`
}

type intentJSON struct {
	Label      string   `json:"label"`
	Confidence float64  `json:"confidence"`
	Entities   []string `json:"entities,omitempty"`
}

type modeJSON struct {
	Label      string  `json:"label"`
	Confidence float64 `json:"confidence"`
	Source     string  `json:"source"`
	Reason     string  `json:"reason,omitempty"`
	Classified string  `json:"classified,omitempty"`
}

func modeOf(m ask.Mode) modeJSON {
	return modeJSON{Label: string(m.Mode), Confidence: m.Confidence, Source: string(m.Source), Reason: m.Reason,
		Classified: string(m.Classified)}
}

type sectionJSON struct {
	Name   string   `json:"name"`
	Budget int      `json:"budget_tokens"`
	Used   int      `json:"used_tokens"`
	Items  int      `json:"items"`
	Cut    []string `json:"cut"`
}

type invariantJSON struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Turn     int    `json:"turn"`
	Priority int    `json:"priority"`
}

// contextJSON is the context bundle the UI hands to its LLM: the rendered text and how each
// section was cut to its mode's budget.
type contextJSON struct {
	Mode         string          `json:"mode"`
	Arm          string          `json:"arm"`
	Treated      bool            `json:"treated"`
	BudgetTokens int             `json:"budget_tokens"`
	UsedTokens   int             `json:"used_tokens"`
	Sections     []sectionJSON   `json:"sections"`
	Invariants   []invariantJSON `json:"invariants"`
	Breach       []invariantJSON `json:"breach,omitempty"`
	Fallback     bool            `json:"fallback"`
	Text         string          `json:"text"`
}

func invariantsOf(invs []invariant.Invariant) []invariantJSON {
	out := make([]invariantJSON, len(invs))
	for i, inv := range invs {
		out[i] = invariantJSON{Type: string(inv.Type), Text: inv.Text, Turn: inv.Turn, Priority: inv.Priority}
	}
	return out
}

func contextOf(c ask.Context) contextJSON {
	out := contextJSON{Mode: c.Mode, Arm: c.Arm, Treated: c.Treated, BudgetTokens: c.BudgetTokens, UsedTokens: c.UsedTokens,
		Invariants: invariantsOf(c.Invariants), Fallback: c.Fallback, Text: c.Text}
	if len(c.Breach) > 0 {
		out.Breach = invariantsOf(c.Breach)
	}
	for _, s := range c.Sections {
		cut := s.Cut
		if cut == nil {
			cut = []string{}
		}
		out.Sections = append(out.Sections, sectionJSON{Name: s.Name, Budget: s.Budget, Used: s.Used, Items: len(s.Items), Cut: cut})
	}
	return out
}

// goalJSON says whether a turn started a new goal, finishing the one before (whose messages
// context bundles then replace by a capsule).
type goalJSON struct {
	New        bool    `json:"new"`
	Confidence float64 `json:"confidence"`
	Reason     string  `json:"reason"`
}

type carryJSON struct {
	Method     string `json:"method,omitempty"`
	Candidates int    `json:"candidates"`
	Entered    int    `json:"entered"`
}

// metaJSON opens a turn's answer: the ids the UI needs, and how retrieval ran.
type metaJSON struct {
	ConversationID uuid.UUID       `json:"conversation_id"`
	Turn           int             `json:"turn"`
	MessageID      uuid.UUID       `json:"message_id"`
	UserMessageID  uuid.UUID       `json:"user_message_id"`
	TurnIntent     intentJSON      `json:"turn_intent"`
	Goal           goalJSON        `json:"goal"`
	Mode           modeJSON        `json:"mode"`
	Carry          carryJSON       `json:"carry"`
	References     *referencesJSON `json:"references,omitempty"`
	Retrieval      retrievalJSON   `json:"retrieval"`
	Timings        []timingJSON    `json:"timings"`
}

// referenceJSON is a source a turn referred to or set aside.
type referenceJSON struct {
	Letter string    `json:"letter"`
	DocID  uuid.UUID `json:"doc_id"`
	Kind   string    `json:"kind"`
	Phrase string    `json:"phrase"`
}

type referencesJSON struct {
	Refers   []referenceJSON `json:"refers"`
	Excludes []referenceJSON `json:"excludes"`
}

func referencesOf(res refer.Resolution) *referencesJSON {
	if res.Empty() {
		return nil
	}
	list := func(refs []refer.Ref) []referenceJSON {
		out := make([]referenceJSON, len(refs))
		for i, r := range refs {
			out[i] = referenceJSON{Letter: r.Letter, DocID: r.DocID, Kind: r.Kind, Phrase: r.Phrase}
		}
		return out
	}
	return &referencesJSON{Refers: list(res.Refers), Excludes: list(res.Excludes)}
}

func metaOf(t *ask.Turn) metaJSON {
	return metaJSON{ConversationID: t.ConversationID, Turn: t.Turn, MessageID: t.AssistantMessageID,
		UserMessageID: t.UserMessageID,
		TurnIntent:    intentJSON{Label: t.Intent.Label, Confidence: t.Intent.Confidence, Entities: t.Intent.Entities},
		Goal:          goalJSON{New: t.Goal.New, Confidence: t.Goal.Confidence, Reason: t.Goal.Reason},
		Mode:          modeOf(t.Mode),
		Carry:         carryJSON{Method: t.Carry.Method, Candidates: t.Carry.Candidates, Entered: t.Carry.Entered},
		References:    referencesOf(t.References),
		Retrieval:     retrievalJSON{Lists: t.Lists, Queries: t.Queries, Reranked: t.Reranked, Skipped: t.Skipped},
		Timings:       timingsOf(t.Timings)}
}

type askResponse struct {
	metaJSON
	Sources  []sourceJSON `json:"sources"`
	Context  contextJSON  `json:"context"`
	Answer   string       `json:"answer"`
	Phantoms []string     `json:"phantom_markers,omitempty"`
	// Stopped says the answer's stream was stopped; Answer is what was sent.
	Stopped bool `json:"stopped,omitempty"`
}

// stoppedJSON ends a stream that was stopped: the answer as far as it was sent.
type stoppedJSON struct {
	Answer string `json:"answer"`
	Reason string `json:"reason"`
}

type doneJSON struct {
	Answer   string       `json:"answer"`
	Phantoms []string     `json:"phantom_markers,omitempty"`
	Timings  []timingJSON `json:"timings"`
}

type messageJSON struct {
	ID              uuid.UUID      `json:"id"`
	ConversationID  uuid.UUID      `json:"conversation_id"`
	Turn            int            `json:"turn"`
	Role            string         `json:"role"`
	Content         string         `json:"content"`
	Answer          string         `json:"answer,omitempty"`
	ReplyRecordedAt *time.Time     `json:"reply_recorded_at,omitempty"`
	Meta            map[string]any `json:"meta,omitempty"`
	CreatedAt       time.Time      `json:"created_at"`
	StoppedAt       *time.Time     `json:"stopped_at,omitempty"`
}

// messageOf shows a message. An assistant message's content is the reply the chat UI recorded,
// or, until it records one, ragd's answer, so a chat never shows an empty assistant message;
// reply_recorded_at says which it is.
func messageOf(m ragd.Message) messageJSON {
	content := m.Content
	if m.Role == "assistant" && m.ReplyRecordedAt == nil {
		content = m.Answer
	}
	return messageJSON{ID: m.ID, ConversationID: m.ConversationID, Turn: m.Turn, Role: m.Role,
		Content: content, Answer: m.Answer, ReplyRecordedAt: m.ReplyRecordedAt, Meta: m.Meta, CreatedAt: m.CreatedAt,
		StoppedAt: m.StoppedAt}
}

type conversationSourceJSON struct {
	DocID         uuid.UUID  `json:"doc_id"`
	Letter        string     `json:"letter"`
	CarryScore    float64    `json:"carry_score"`
	Pinned        bool       `json:"pinned"`
	Carried       bool       `json:"carried"`
	InactiveTurns int        `json:"inactive_turns"`
	FirstTurn     int        `json:"first_turn"`
	LastTurn      int        `json:"last_turn"`
	LastUsedAt    time.Time  `json:"last_used_at"`
	Reason        string     `json:"reason"`
	Deleted       bool       `json:"deleted"`
	Facts         []factJSON `json:"facts"`
}

func conversationSourceOf(cs ragd.ConversationSource) conversationSourceJSON {
	out := conversationSourceJSON{DocID: cs.DocID, Letter: cs.Marker, CarryScore: cs.CarryScore, Pinned: cs.Pinned,
		Carried: cs.Carried, InactiveTurns: cs.InactiveTurns, FirstTurn: cs.FirstTurn, LastTurn: cs.LastTurn,
		LastUsedAt: cs.LastUsedAt, Reason: cs.Reason, Deleted: cs.Deleted, Facts: make([]factJSON, len(cs.Facts))}
	if cs.Deleted {
		// Out of search, so no turn carries it; a pin stays (and counts toward --max-pins)
		// until unpinned.
		out.Carried, out.Reason = false, carry.ReasonDeleted
	}
	for i, f := range cs.Facts {
		out.Facts[i] = factJSON{Marker: f.Marker, Text: f.Text}
	}
	return out
}

type conversationJSON struct {
	ID        uuid.UUID                `json:"id"`
	Title     string                   `json:"title"`
	Turn      int                      `json:"turn"`
	GoalTurn  int                      `json:"goal_turn"`
	CreatedAt time.Time                `json:"created_at"`
	UpdatedAt time.Time                `json:"updated_at"`
	Messages  []messageJSON            `json:"messages"`
	Sources   []conversationSourceJSON `json:"sources"`
}

type conversationSummaryJSON struct {
	ID        uuid.UUID `json:"id"`
	Title     string    `json:"title"`
	Preview   string    `json:"preview,omitempty"`
	Turn      int       `json:"turn"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func conversationSummaryOf(c ragd.Conversation, preview string) conversationSummaryJSON {
	return conversationSummaryJSON{ID: c.ID, Title: c.Title, Preview: preview, Turn: c.Turn, CreatedAt: c.CreatedAt,
		UpdatedAt: c.UpdatedAt}
}

type conversationListJSON struct {
	Conversations []conversationSummaryJSON `json:"conversations"`
	NextCursor    string                    `json:"next_cursor,omitempty"`
}

type documentRef struct {
	ID      uuid.UUID `json:"id"`
	Version int       `json:"version"`
	Title   string    `json:"title"`
	URL     string    `json:"url,omitempty"`
	Path    string    `json:"path,omitempty"`
}

type chunkRef struct {
	ID   int64  `json:"id"`
	Text string `json:"text"`
}

type citationJSON struct {
	ID             int64       `json:"id"`
	MessageID      uuid.UUID   `json:"message_id"`
	ConversationID uuid.UUID   `json:"conversation_id"`
	Marker         string      `json:"marker"`
	Fact           string      `json:"fact"`
	Score          float64     `json:"score"`
	Origin         string      `json:"origin"`
	Rank           int         `json:"rank"`
	Document       documentRef `json:"document"`
	Chunk          chunkRef    `json:"chunk"`
	Pages          *pageRange  `json:"pages"`
	CreatedAt      time.Time   `json:"created_at"`
}

func citationOf(c ragd.Citation) citationJSON {
	return citationJSON{ID: c.ID, MessageID: c.MessageID, ConversationID: c.ConversationID, Marker: c.Marker,
		Fact: c.Fact, Score: c.Score, Origin: c.Origin, Rank: c.Rank,
		Document: documentRef{ID: c.DocID, Version: c.DocVersion, Title: c.DocTitle, URL: c.DocURL, Path: c.DocPath},
		Chunk:    chunkRef{ID: c.ChunkID, Text: c.ChunkText}, Pages: pages(c.PageStart, c.PageEnd), CreatedAt: c.CreatedAt}
}

type ingestResultJSON struct {
	DocID   string `json:"doc_id"`
	Version int    `json:"version"`
	Status  string `json:"status"`
	Chunks  int    `json:"chunks"`
}

type versionJSON struct {
	Version     int        `json:"version"`
	ContentHash string     `json:"content_hash"`
	Title       string     `json:"title"`
	PublishedAt *time.Time `json:"published_at"`
	IngestedAt  time.Time  `json:"ingested_at"`
	Chunks      int        `json:"chunks"`
	Bytes       int        `json:"bytes"`
}

type documentJSON struct {
	ID        uuid.UUID     `json:"id"`
	SourceKey string        `json:"source_key"`
	Format    string        `json:"format"`
	Title     string        `json:"title"`
	URL       string        `json:"url,omitempty"`
	Path      string        `json:"path,omitempty"`
	Version   int           `json:"version"`
	Chunks    int           `json:"chunks"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
	DeletedAt *time.Time    `json:"deleted_at"`
	Versions  []versionJSON `json:"versions"`
}

func documentOf(d *ragd.Document, vs []ragd.DocumentVersion) documentJSON {
	out := documentJSON{ID: d.ID, SourceKey: d.SourceKey, Format: d.Format, Title: d.Title, URL: d.URL, Path: d.Path,
		Version: d.Version, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, DeletedAt: d.DeletedAt}
	for _, v := range vs {
		out.Versions = append(out.Versions, versionJSON{Version: v.Version, ContentHash: v.ContentHash, Title: v.Title,
			PublishedAt: v.PublishedAt, IngestedAt: v.IngestedAt, Chunks: v.Chunks, Bytes: v.Bytes})
		if v.Version == d.Version {
			out.Chunks = v.Chunks
		}
	}
	return out
}

// documentSummaryJSON is a document as a pin picker lists it.
type documentSummaryJSON struct {
	ID       uuid.UUID `json:"id"`
	Title    string    `json:"title"`
	Source   string    `json:"source"` // the URL, else the path, else the source key
	Format   string    `json:"format"`
	Version  int       `json:"version"`
	Date     string    `json:"date"`
	DateKind string    `json:"date_kind"`
	Chunks   int       `json:"chunks"`
}

func documentSummaryOf(d ragd.DocumentSummary) documentSummaryJSON {
	date, kind := ragd.DocumentDate(d.Current.PublishedAt, d.Current.IngestedAt)
	out := documentSummaryJSON{ID: d.ID, Title: d.Title, Source: d.SourceKey, Format: d.Format, Version: d.Version,
		Date: date.Format("2006-01-02"), DateKind: kind, Chunks: d.Current.Chunks}
	switch {
	case d.URL != "":
		out.Source = d.URL
	case d.Path != "":
		out.Source = d.Path
	}
	return out
}

type documentListJSON struct {
	Documents  []documentSummaryJSON `json:"documents"`
	NextCursor string                `json:"next_cursor,omitempty"`
}
