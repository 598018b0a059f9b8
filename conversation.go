package ragd

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd/focus"
)

// Conversation is a chat whose turns ragd has answered.
type Conversation struct {
	ID         uuid.UUID
	Turn       int // user turns asked so far
	NextLetter int // marker letters handed out (0 means the next is A)
	GoalTurn   int // turn where the current goal began (a new topic starts a new goal)
	ABArm      string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// Title is set by the user; empty until then.
	Title string
}

// ConversationSummary is a conversation as a list of conversations shows it.
type ConversationSummary struct {
	Conversation
	// Preview is the start of the conversation's first user message.
	Preview string
}

// Message is one side of a turn.
type Message struct {
	ID             uuid.UUID
	ConversationID uuid.UUID
	Turn           int
	Role           string // "user" or "assistant"
	// Content is the user's text, or the assistant's reply as the chat UI recorded it (empty
	// until recorded).
	Content string
	// Answer is what ragd answered on an assistant message: the fact sheet, or an LLM's answer
	// over it.
	Answer          string
	ReplyRecordedAt *time.Time
	Meta            map[string]any
	CreatedAt       time.Time
	// StoppedAt is set when the answer's stream was stopped; Answer then holds what was sent.
	StoppedAt *time.Time
	// KeyID is the API key that asked the turn; nil when it was asked without one.
	KeyID *uuid.UUID
}

// ConversationSource is a document a conversation has found, with its carry-over state. The row
// outlives carry-over so the document keeps its marker letter for the whole conversation.
type ConversationSource struct {
	DocID         uuid.UUID
	Marker        string  // the document's letter: A, B, ..., AA
	CarryScore    float64 // decays every turn the source is not used again
	Pinned        bool
	Carried       bool // still carried into new turns
	InactiveTurns int  // turns since it was last among the kept sources
	FirstTurn     int
	LastTurn      int
	LastUsedAt    time.Time
	CitedChunkIDs []int64
	Facts         []Fact // the compact facts it contributed last, for the next turn
	Reason        string // why it is (or stopped being) carried
	// Deleted: the document was deleted since (read with the state, not stored). It is out of
	// search, so no turn carries it, whatever Carried and Pinned say.
	Deleted bool
}

// Fact is one cited sentence.
type Fact struct {
	Marker  string  `json:"marker"`
	Text    string  `json:"text"`
	ChunkID int64   `json:"chunk_id"`
	Score   float64 `json:"score"`
}

// Citation is one marker of an assistant message as an auditor reads it: the passage and
// document version behind it, exactly as they were cited.
type Citation struct {
	ID             int64
	MessageID      uuid.UUID
	ConversationID uuid.UUID
	Marker         string
	Fact           string
	Score          float64
	Origin         string
	Rank           int
	DocID          uuid.UUID
	DocVersion     int
	DocTitle       string
	DocURL         string
	DocPath        string
	ChunkID        int64
	ChunkText      string
	PageStart      int
	PageEnd        int
	CreatedAt      time.Time
}

// CitationFilter selects citations for an audit export. Zero fields do not filter.
type CitationFilter struct {
	ConversationID uuid.UUID
	DocID          uuid.UUID
	From, To       time.Time // created_at in [From, To)
	AfterID        int64     // keyset cursor: only citations with a larger id
	Limit          int       // 0 means no limit
}

// ConversationState is a conversation as a turn reads it.
type ConversationState struct {
	Conversation Conversation
	// Sources are every document the conversation has found, carried or not, by first turn.
	Sources []ConversationSource
	// Markers are the markers its sentences have: a marker names one sentence for the whole
	// conversation.
	Markers []SentenceMarker
	// Capsules summarize the conversation's finished goals, oldest first.
	Capsules []Capsule
	// Focus is what the conversation is about, as of its last turn.
	Focus focus.Focus
	// Sticky holds the sticky invariants of the conversation's user messages through its last
	// turn, as package invariant writes them (JSON), so a turn that reads only its latest
	// messages still carries every invariant. Nil: not kept yet (a conversation from before
	// migration 011, or one without turns).
	Sticky json.RawMessage
}

// SentenceMarker is the marker a sentence of a document has in a conversation.
type SentenceMarker struct {
	Marker    string
	DocID     uuid.UUID
	Sentence  string // white space normalized
	FirstTurn int
}

// Capsule summarizes one finished goal of a conversation: context bundles show Text instead of
// the goal's messages, turns First to Last (package compact).
type Capsule struct {
	First, Last int
	Text        string
	// Method says how Text was written: "extractive" (from the messages, without a model) or
	// "llm".
	Method string
}

// ConversationRef names the conversation of a turn: an existing one, or a new one to create with
// this id and A/B arm.
type ConversationRef struct {
	ID  uuid.UUID
	New bool
	Arm string
}

// TurnWrite is everything one turn records, computed inside Store.Turn's transaction.
type TurnWrite struct {
	UserMessage string
	UserMeta    map[string]any // what was learned of the user's message (its invariants)
	Answer      string         // ragd's answer: the fact sheet
	Meta        map[string]any // the turn's telemetry, on the assistant message
	NextLetter  int
	GoalTurn    int // 0 keeps the conversation's current goal
	// Idempotency, when set, records the request's Idempotency-Key with the turn.
	Idempotency *Idempotency
	// Markers are the sentence markers of the turn's facts; those the conversation has are kept.
	Markers []SentenceMarker
	// Sources is the new state of every conversation source the turn touched.
	Sources   []ConversationSource
	Citations []CitationWrite
	// Capsules are the capsules of the goals the turn finished.
	Capsules []Capsule
	// Focus is the conversation's focus after the turn; nil keeps the one it had.
	Focus *focus.Focus
	// Sticky is ConversationState.Sticky after the turn; nil keeps what it was.
	Sticky json.RawMessage
}

// CitationWrite is one marker of the turn's answer.
type CitationWrite struct {
	DocID      uuid.UUID
	DocVersion int
	ChunkID    int64
	Marker     string
	Fact       string
	Score      float64
	Origin     string
	Rank       int
	PageStart  int
	PageEnd    int
}

// TurnResult identifies what a turn wrote.
type TurnResult struct {
	Conversation       Conversation // as of the end of the turn
	UserMessageID      uuid.UUID
	AssistantMessageID uuid.UUID
}

// Idempotency is a request's Idempotency-Key and the hash of what it asked, recorded with the
// turn it made.
type Idempotency struct {
	Key         string
	RequestHash []byte
}

// IdempotentTurn is the turn an Idempotency-Key made. Response is nil until the turn's response
// is complete.
type IdempotentTurn struct {
	RequestHash    []byte
	ConversationID uuid.UUID
	MessageID      uuid.UUID
	Response       []byte
	CreatedAt      time.Time
}
