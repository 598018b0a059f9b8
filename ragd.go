// Package ragd holds the domain types shared by every part of the retrieval server: documents and
// their versions, chunks, search hits, and the error kinds that handlers map to HTTP statuses.
// Storage, indexing and the turn pipeline live in their own packages and speak in these types.
package ragd

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Error kinds. Wrap them with %w; server maps them to HTTP statuses with errors.Is.
var (
	// ErrNotFound: the thing asked for does not exist (or was deleted).
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the caller's input is wrong; retrying the same input will fail again.
	ErrInvalid = errors.New("invalid input")
	// ErrConflict: the request collides with the current state (for example a concurrent change).
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: a dependency (database, index, model) cannot serve right now.
	ErrUnavailable = errors.New("unavailable")
)

// InputError says which part of the input is wrong and why. It matches ErrInvalid with errors.Is.
type InputError struct {
	Field  string
	Reason string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

// Is makes errors.Is(err, ErrInvalid) true for every *InputError.
func (e *InputError) Is(target error) bool { return target == ErrInvalid }

// Invalidf builds an *InputError for field.
func Invalidf(field, format string, args ...any) error {
	return &InputError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Document is one source that was ingested, under a stable source key. Its content changes by
// versions; only the current version's chunks are searchable, older chunks stay for citations.
type Document struct {
	ID uuid.UUID
	// SourceKey identifies the source across re-ingests: a canonical URL for web sources,
	// "file:" plus the absolute path for local files, "corpus:<name>/<id>" for records of a JSONL
	// corpus, or "sha256:<hex>" of the content for anonymous uploads.
	SourceKey string
	Format    string // markdown | text | html | pdf | jsonl-record
	Title     string
	URL       string // canonical URL when the document came from the web or carried one
	Path      string // local path when it came from a file
	Version   int    // current version, counting from 1
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt *time.Time // set when the document was removed from search
}

// DocumentVersion is one content state of a document.
type DocumentVersion struct {
	DocID       uuid.UUID
	Version     int
	ContentHash string // sha256 hex of the extracted text and title
	Title       string
	PublishedAt *time.Time // when the source says it was published or updated, if it says
	IngestedAt  time.Time
	Chunks      int
	Bytes       int
}

// Chunk is a window of a document version's text, the unit that is indexed, retrieved and cited.
type Chunk struct {
	ID      int64
	DocID   uuid.UUID
	Version int
	Ordinal int    // position within the version, from 0
	Title   string // the document version's title (read from the store, not written with the chunk)
	Heading string // heading path the chunk sits under ("Install > Linux"), may be empty
	Text    string
	// PageStart and PageEnd are 1-based and inclusive; both 0 when the format has no pages.
	PageStart int
	PageEnd   int
	// CharStart and CharEnd are Unicode code point offsets into the version's extracted text.
	CharStart int
	CharEnd   int
	Tokens    int       // cl100k_base tokens of Text
	Embedding []float32 // nil when no embedding model was configured at ingest
	Active    bool      // false once a newer version replaced it or the document was deleted
	Seq       int64     // change sequence, for catching derived indexes up
}

// Hit is one ranked result from a retriever. Rank counts from 1.
type Hit struct {
	ChunkID int64
	Score   float64
	Rank    int
}

// ChunkChange is one chunk as a derived index (bleve) needs it: what to index, or that it left
// search. Changes are read in Seq order.
type ChunkChange struct {
	ID      int64
	Seq     int64
	Active  bool
	Title   string // the document version's title; empty when inactive
	Heading string
	Text    string // empty when inactive
}

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

// DocumentSummary is a document as a list of documents shows it: its current version's details.
type DocumentSummary struct {
	Document
	Current DocumentVersion
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
