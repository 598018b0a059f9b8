// Package ragd holds what every part of the retrieval server shares: the domain types (documents
// and their versions, chunks, conversations, citations), the one storage interface (Store) that
// the turn pipeline, the HTTP server, ingest and the BM25 index read and write through, and the
// error kinds that handlers map to HTTP statuses. The packages that implement and use these live
// under it; the domain types sit here, not in store, so that a package can name a turn's write or
// a document's version without depending on PostgreSQL.
//
// The only ragd package this one imports is kg, for the entities a new document version carries.
// kg is a leaf (it imports nothing of ragd) and must stay one, or the import would be a cycle.
package ragd

import (
	"errors"
	"fmt"
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
	// ErrBusy: ragd itself is at a configured limit for this kind of work (the ingest queue, the
	// ingests inside requests); the same request later will likely go through.
	ErrBusy = errors.New("ragd is busy")
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
