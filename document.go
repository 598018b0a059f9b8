package ragd

import (
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd/kg"
)

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
	Path      string // local path when it came from a file; an upload's file name
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

// The kinds of date a document is shown with.
const (
	DatePublished = "published" // the date the document gives
	DateIngested  = "ingested"  // the day it was ingested, for a document that gives none
)

// DocumentDate is the date a document version is shown with, and its kind: the date the
// document gives, else the day it was ingested, so that an undated document is never shown as
// published on the day it was ingested.
func DocumentDate(published *time.Time, ingested time.Time) (time.Time, string) {
	if published != nil {
		return *published, DatePublished
	}
	return ingested, DateIngested
}

// DocumentSummary is a document as a list of documents shows it: its current version's details.
type DocumentSummary struct {
	Document
	Current DocumentVersion
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
	Tenant  uuid.UUID
}

// NewVersion is the content of one document as ingest found it.
type NewVersion struct {
	SourceKey   string
	Format      string
	Title       string
	URL         string
	Path        string
	PublishedAt *time.Time
	ContentHash string
	Bytes       int
	// Chunks of the new content in order; IDs, versions and sequence numbers are assigned by
	// the store.
	Chunks []Chunk
	// Entities, when not nil, holds the entities of each chunk (parallel to Chunks) for the
	// knowledge graph, recorded in the same transaction.
	Entities [][]kg.Entity
}

// SaveStatus says what Store.SaveVersions did with one document.
type SaveStatus string

const (
	Created   SaveStatus = "created"   // a new document, version 1
	Updated   SaveStatus = "updated"   // changed content: a new version replaced the old in search
	Unchanged SaveStatus = "unchanged" // same content as the current version: nothing written
)

// SaveResult reports one document of a Store.SaveVersions call, in input order.
type SaveResult struct {
	DocID   uuid.UUID
	Version int
	Status  SaveStatus
}

// CurrentVersion is the current version of a live document, as Store.Current reports it.
type CurrentVersion struct {
	DocID   uuid.UUID
	Version int
	Hash    string
	Chunks  int
}

// VersionRef names one version of a document.
type VersionRef struct {
	DocID   uuid.UUID
	Version int
}

// VersionInfo is what a citation shows of a document version.
type VersionInfo struct {
	Title       string
	URL         string
	Path        string
	PublishedAt *time.Time
	IngestedAt  time.Time
}

// Neighbour is an entity of the knowledge graph one edge away from an entity asked about.
type Neighbour struct {
	Name   string
	Kind   string
	Weight float64 // of the heaviest edge to it from the entities asked about
	Via    string  // the entity asked about at the other end of that edge
}

// DocumentFilter selects documents for a list: Query, when set, must occur in the title or the
// source (URL, path or source key), ignoring case.
type DocumentFilter struct {
	Query string
	Page
}

// Title is a title of documents in search, with the chunks of all the documents that have it.
type Title struct {
	Title  string
	Chunks int
}

// MaxSourceKeyBytes bounds a document's source key a client gives (its source field, or the URL
// it is fetched from): the key is in a unique index, whose entries PostgreSQL limits to a few
// kilobytes, so a longer one was a 500.
const MaxSourceKeyBytes = 2048

// MaxTitleRunes bounds a document's title and each heading of a chunk's heading path. Every
// source a turn shows carries them, every chunk under a heading repeats it, and the focus reads
// titles: a 5 MB title made each turn that found its document take 14 s and answer 10 MB.
const MaxTitleRunes = 300

// ClipTitle cuts a title or heading found in a document to MaxTitleRunes runes.
func ClipTitle(s string) string {
	n := 0
	for i := range s {
		if n == MaxTitleRunes {
			return strings.TrimSpace(s[:i])
		}
		n++
	}
	return s
}

// PassageText is what the models read for a chunk, the embedding model at ingest and the
// cross-encoder at query time alike: the document title and the heading path give a window the
// context its text alone may lack.
func PassageText(title, heading, text string) string {
	s := text
	if heading != "" {
		s = heading + "\n" + s
	}
	if title != "" {
		s = title + "\n" + s
	}
	return s
}
