package ragd

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Store is the system of record as the rest of ragd sees it: everything the turn pipeline (ask),
// the HTTP handlers (server), ingest and the BM25 index (index) read or write. *store.Store
// implements it over PostgreSQL with pgvector. It is one interface, not one per consumer, so the
// storage contract is written down once and a change to it shows up in one place; what only the
// command line uses (opening, migrating, back-filling embeddings, listening for changes) stays on
// the concrete store.
//
// Errors wrap the error kinds of this package: ErrNotFound for an unknown id, ErrInvalid for bad
// input, ErrConflict for a collision with the current state, ErrUnavailable when the database
// cannot answer.
type Store interface {
	// Ping checks that the database answers, for readiness probes.
	Ping(ctx context.Context) error

	// Current returns the current version of each live document among keys (by source key), so
	// ingest can skip unchanged documents before it spends time embedding them.
	Current(ctx context.Context, keys []string) (map[string]CurrentVersion, error)
	// SaveVersions records a batch of documents in one transaction, with their chunks and, when
	// given, their entities. A document whose content hash equals its current version's is left
	// alone; a changed one gets a new version whose chunks replace the old ones in search, while
	// the old chunks stay readable for the citations that point at them. A deleted document that
	// is ingested again comes back as a new version. Results are in input order.
	SaveVersions(ctx context.Context, vs []NewVersion) ([]SaveResult, error)
	// Document returns a document by id, deleted or not (callers decide what deletion means).
	Document(ctx context.Context, id uuid.UUID) (*Document, error)
	// Versions lists a document's versions, oldest first.
	Versions(ctx context.Context, id uuid.UUID) ([]DocumentVersion, error)
	// ListDocuments returns a page of the documents in search (not deleted), most recently
	// updated first, with their current version's details.
	ListDocuments(ctx context.Context, f DocumentFilter) ([]DocumentSummary, error)
	// DeleteDocument removes a document from search. Its rows stay, so every citation of it
	// remains readable. Deleting a deleted document is a no-op.
	DeleteDocument(ctx context.Context, id uuid.UUID) error
	// VersionInfo returns the details of the given document versions; unknown ones are left out.
	VersionInfo(ctx context.Context, refs []VersionRef) (map[VersionRef]VersionInfo, error)

	// Titles returns the distinct titles of the documents in search with their chunks, for the
	// names a conversation's focus can recognise (focus.Gazetteer).
	Titles(ctx context.Context) ([]Title, error)

	// Chunks returns the chunks with the given ids, active or not, in the order of ids; ids that
	// do not exist are left out. Embeddings are not read.
	Chunks(ctx context.Context, ids []int64) ([]Chunk, error)
	// ChunkChanges returns up to limit chunk changes with seq above after, in seq order, for
	// derived indexes catching up.
	ChunkChanges(ctx context.Context, after int64, limit int) ([]ChunkChange, error)
	// SearchVector returns the k active chunks nearest to q, scored by cosine similarity. When
	// docs is not empty only their chunks are searched.
	SearchVector(ctx context.Context, q []float32, k int, docs []uuid.UUID) ([]Hit, error)
	// ActiveChunkIDs returns the searchable chunks of each document, in document order, at most
	// limit per document.
	ActiveChunkIDs(ctx context.Context, docs []uuid.UUID, limit int) (map[uuid.UUID][]int64, error)
	// Similarity returns the cosine similarity of q to each given chunk that is searchable and
	// has an embedding.
	Similarity(ctx context.Context, q []float32, ids []int64) (map[int64]float64, error)

	// Neighbours returns the knowledge graph's 1-hop neighbours of the named entities, heaviest
	// edge first, at most limit, leaving out the named entities themselves.
	Neighbours(ctx context.Context, names []string, limit int) ([]Neighbour, error)
	// EntityChunks returns up to limit active chunks that mention any of the named entities:
	// chunks that mention more of them first, then newer chunks.
	EntityChunks(ctx context.Context, names []string, limit int) ([]int64, error)

	// Conversation returns a conversation by id. A deleted conversation is ErrNotFound, here and
	// to ConversationState, Turn, RecordReply and SetPin; Messages and the citations stay
	// readable for auditors.
	Conversation(ctx context.Context, id uuid.UUID) (*Conversation, error)
	// ListConversations returns a page of the conversations that are not deleted, most recently
	// active first (a turn or a pin makes a conversation active; a rename does not).
	ListConversations(ctx context.Context, p Page) ([]ConversationSummary, error)
	// RenameConversation sets a conversation's title ("" clears it).
	RenameConversation(ctx context.Context, id uuid.UUID, title string) (*Conversation, error)
	// DeleteConversation hides a conversation from chat; its messages and citations stay,
	// unchanged, for auditors. Deleting it again is ErrNotFound.
	DeleteConversation(ctx context.Context, id uuid.UUID) error
	// ConversationState reads a conversation and its sources without locking, for the retrieval
	// stages that run before the turn's transaction.
	ConversationState(ctx context.Context, id uuid.UUID) (*ConversationState, error)
	// Messages returns a conversation's messages in turn order, the user's before the
	// assistant's.
	Messages(ctx context.Context, conv uuid.UUID) ([]Message, error)
	// RecentMessages returns, in Messages' order, a conversation's last messages: at most last of
	// them (last < 1: every message), with the user message of turn goalTurn (the current goal's
	// first, 0 for none) when it is older. What a turn reads of a long conversation is bounded.
	RecentMessages(ctx context.Context, conv uuid.UUID, last, goalTurn int) ([]Message, error)
	// Turn records one turn in one transaction: the conversation is locked, fn computes what to
	// write from the state as of the lock (so two concurrent turns of one conversation apply one
	// after the other), and any failure, fn's included, leaves the conversation exactly as it
	// was. The turn number fn writes is state.Conversation.Turn + 1.
	Turn(ctx context.Context, ref ConversationRef, fn func(*ConversationState) (*TurnWrite, error)) (*TurnResult, error)
	// SetAnswer stores the answer an LLM gave over a turn's fact sheet on its assistant message.
	SetAnswer(ctx context.Context, msg uuid.UUID, answer string) error
	// RecordReply records the reply the chat UI showed for a turn, on the assistant message msg,
	// or on the conversation's latest assistant message when msg is zero. A reply is recorded
	// once: recording it again is ErrConflict, because citations were audited against the first.
	RecordReply(ctx context.Context, conv, msg uuid.UUID, content string) (*Message, error)
	// SetPin pins a document in a conversation, or unpins it. Pinning a document the
	// conversation has not cited yet makes it a source with the next free letter, letter(next).
	// created says the call made a pin that was not there (false for an unpin).
	SetPin(ctx context.Context, conv, doc uuid.UUID, pinned bool, letter func(next int) string) (cs *ConversationSource, created bool, err error)

	// MessageCitations returns the citations of one message in answer order; an unknown message
	// is ErrNotFound.
	MessageCitations(ctx context.Context, msg uuid.UUID) ([]Citation, error)
	// Message returns a message of a conversation that is not deleted.
	Message(ctx context.Context, id uuid.UUID) (*Message, error)
	// StopAnswer records that an assistant message's answer stream was stopped, with the answer
	// as far as it was sent (sent nil keeps the recorded answer: the fact sheet, when no LLM
	// streams). A message is stopped once; stopping it again returns it unchanged.
	StopAnswer(ctx context.Context, msg uuid.UUID, sent *string) (*Message, error)
	// RequestStop asks every process to stop the answer stream of msg (the one that streams it
	// calls StopAnswer), and waits up to wait for the stop to be recorded. It reports false when
	// none recorded it: no process streams the answer.
	RequestStop(ctx context.Context, msg uuid.UUID, wait time.Duration) (bool, error)
	// IdempotentTurn returns the turn an Idempotency-Key made in the last 24 hours, or
	// ErrNotFound. Turn records the key with TurnWrite.Idempotency; a live key used again is
	// ErrConflict there, an expired one is free again.
	IdempotentTurn(ctx context.Context, key string) (*IdempotentTurn, error)
	// SaveIdempotentResponse keeps the complete response of the turn a key made, for retries.
	SaveIdempotentResponse(ctx context.Context, key string, response []byte) error

	// Authenticate returns the principal of an API key's secret, or ErrUnauthenticated.
	Authenticate(ctx context.Context, secret string) (Principal, error)
	// KeysMade counts the keys ever made, of every tenant, revoked ones included: once one has
	// been made, ragd never serves without a key again.
	KeysMade(ctx context.Context) (int, error)
	// CreateKey makes a key of ctx's tenant and returns it with its secret, shown once.
	CreateKey(ctx context.Context, role Role, name string) (*Key, string, error)
	// Keys lists the keys of ctx's tenant, revoked ones included.
	Keys(ctx context.Context) ([]Key, error)
	// RevokeKey revokes a key of ctx's tenant.
	RevokeKey(ctx context.Context, id uuid.UUID) error

	// Citations calls fn for every citation the filter selects, in id (creation) order,
	// streaming so an export of any size runs in constant memory. fn returning an error stops it.
	Citations(ctx context.Context, f CitationFilter, fn func(Citation) error) error

	// SaveFeedback records a user's rating of an assistant message (up or down, a reason,
	// per-source flags), replacing an earlier rating of the same message, and returns it with
	// the turn's mode and arm. A user message is ErrInvalid, as is a flag on a source the
	// message did not cite.
	SaveFeedback(ctx context.Context, f NewFeedback) (*Feedback, error)
	// Feedback calls fn for every feedback the filter selects, in id (first given) order,
	// streaming, for the audit export.
	Feedback(ctx context.Context, f FeedbackFilter, fn func(Feedback) error) error
	// SaveModeBaseline persists the caller's tenant's mode drift baseline (JSON, as package
	// mode writes it).
	SaveModeBaseline(ctx context.Context, baseline []byte) error
	// NextExperimentSlot hands out the caller's tenant's next assignment slot of an experiment
	// design: 0, 1, 2, ... in the order new conversations ask, across servers.
	NextExperimentSlot(ctx context.Context, design string) (int64, error)
	// ExperimentStats returns, for the caller's tenant, per arm and mode the turns of a period
	// with their context tokens, latency and feedback.
	ExperimentStats(ctx context.Context, f ExperimentFilter) ([]ArmStratum, error)
}

// Keyset is a position in a list read newest first: the (time, id) of the last row of a page.
// The next page starts strictly after it, so rows written meanwhile never shift a page.
type Keyset struct {
	At time.Time
	ID uuid.UUID
}

// Page asks for one page of a list: at most Limit rows after After (nil: from the newest).
type Page struct {
	Limit int
	After *Keyset
}
