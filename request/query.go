package request

import (
	"encoding/base64"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
)

// Lists of conversations and documents come in pages, newest first, by keyset: a page's
// next_cursor names its last row, and the next page starts strictly after it. The cursor is
// opaque to clients.

const (
	defaultPage = 20
	maxPage     = 100
)

func encodeCursor(at time.Time, id uuid.UUID) string {
	raw := strconv.FormatInt(at.UnixMicro(), 10) + "." + id.String()
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// A cursor's time lies within the years a row's time can have (and JSON can carry): PostgreSQL
// and pgx take other int64 microseconds too, wrapped, so a forged one gave a wrong page.
var (
	minCursorTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxCursorTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

func decodeCursor(s string) (*ragd.Keyset, error) {
	bad := invalidf("cursor", "%q is not a cursor this server gave", s)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	micros, id, ok := strings.Cut(string(raw), ".")
	if !ok {
		return nil, bad
	}
	n, err := strconv.ParseInt(micros, 10, 64)
	if err != nil {
		return nil, bad
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, bad
	}
	at := time.UnixMicro(n).UTC()
	if at.Before(minCursorTime) || at.After(maxCursorTime) {
		return nil, invalidf("cursor", "%q names a time out of range", s)
	}
	// Only the spelling this server writes: "+1", leading zeros, braces or "urn:uuid:" around
	// the id, or other trailing bits of base64 decode to the same keyset under another name.
	if encodeCursor(at, u) != s {
		return nil, bad
	}
	return &ragd.Keyset{At: at, ID: u}, nil
}

// Only refuses a query parameter that is not among names (those the route reads) and one given
// more than once: either would be ignored, and a misspelt filter ("conversation=" for
// "conversation_id=") would quietly widen an export to every row.
func Only(q url.Values, names ...string) error {
	keys := slices.Sorted(maps.Keys(q))
	for _, k := range keys {
		switch {
		case len(names) == 0:
			return invalidf(k, "is not a parameter of this route (it reads none)")
		case !slices.Contains(names, k):
			return invalidf(k, "is not a parameter of this route (it reads %s)", strings.Join(names, ", "))
		case len(q[k]) > 1:
			return invalidf(k, "is given %d times", len(q[k]))
		}
	}
	return nil
}

// Page reads limit and cursor. It asks the store for one row more than the limit, which tells
// whether a next page exists (NextCursor).
func Page(q url.Values) (ragd.Page, int, error) {
	limit := defaultPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPage {
			return ragd.Page{}, 0, invalidf("limit", "must be 1..%d", maxPage)
		}
		limit = n
	}
	p := ragd.Page{Limit: limit + 1}
	if v := q.Get("cursor"); v != "" {
		k, err := decodeCursor(v)
		if err != nil {
			return ragd.Page{}, 0, err
		}
		p.After = k
	}
	return p, limit, nil
}

// NextCursor trims a page read with Page to limit rows and returns the cursor of the next page,
// or "" when this is the last.
func NextCursor[T any](rows []T, limit int, key func(T) (time.Time, uuid.UUID)) ([]T, string) {
	if len(rows) <= limit {
		return rows, ""
	}
	rows = rows[:limit]
	return rows, encodeCursor(key(rows[limit-1]))
}

// maxQueryBytes bounds a document search.
const maxQueryBytes = 256

// DocumentQuery reads the q of a document list: the text a title or source must contain.
func DocumentQuery(q url.Values) (string, error) {
	s := q.Get("q")
	if len(s) > maxQueryBytes {
		return "", invalidf("q", "must be at most %d bytes", maxQueryBytes)
	}
	// PostgreSQL's text refuses NUL: let through, it failed in the store instead of as bad input.
	if err := Text("q", s); err != nil {
		return "", err
	}
	return s, nil
}

// An audit export's JSON comes in pages of at most maxExportPage rows (DefaultExportPage
// unless limit says otherwise).
const (
	DefaultExportPage = 1000
	maxExportPage     = 10000
)

// exportLimit reads the limit of an export page; 0 when absent.
func exportLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxExportPage {
		return 0, invalidf("limit", "must be 1..%d", maxExportPage)
	}
	return n, nil
}

// Citations reads the filter of a citation export: conversation, document, time range, the
// citation id to start after and the page's limit.
func Citations(q url.Values) (ragd.CitationFilter, error) {
	var f ragd.CitationFilter
	for name, dst := range map[string]*uuid.UUID{"conversation_id": &f.ConversationID, "doc_id": &f.DocID} {
		if v := q.Get(name); v != "" {
			id, err := uuid.Parse(v)
			if err != nil {
				return f, invalidf(name, "%q is not a UUID", v)
			}
			*dst = id
		}
	}
	var err error
	if f.From, f.To, err = TimeRange(q); err != nil {
		return f, err
	}
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return f, invalidf("after", "%q is not a citation id", v)
		}
		f.AfterID = n
	}
	f.Limit, err = exportLimit(q)
	return f, err
}

// FeedbackFilter reads the filter of a feedback export: conversation, time range, the rating
// to start after and the page's limit.
func FeedbackFilter(q url.Values) (ragd.FeedbackFilter, error) {
	var f ragd.FeedbackFilter
	var err error
	if f.From, f.To, err = TimeRange(q); err != nil {
		return f, err
	}
	for name, dst := range map[string]*uuid.UUID{"conversation_id": &f.ConversationID, "after": &f.AfterID} {
		if v := q.Get(name); v != "" {
			if *dst, err = uuid.Parse(v); err != nil {
				return f, invalidf(name, "%q is not a UUID", v)
			}
		}
	}
	f.Limit, err = exportLimit(q)
	return f, err
}

// TimeRange reads the from and to parameters (RFC 3339; from before to).
func TimeRange(q url.Values) (from, to time.Time, err error) {
	for name, dst := range map[string]*time.Time{"from": &from, "to": &to} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return from, to, invalidf(name, "%q is not an RFC 3339 time (2026-01-02T15:04:05Z)", v)
			}
			*dst = t
		}
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return from, to, invalidf("from", "must be before to")
	}
	return from, to, nil
}

var exportFormats = map[string]string{"json": MIMEJSON, "jsonl": MIMEJSONL, "csv": MIMECSV}

// ExportFormat reads the media type of an audit export of what ("citations"): the format
// parameter, else the Accept header.
func ExportFormat(q url.Values, accept, what string) (string, error) {
	if v := q.Get("format"); v != "" {
		format, ok := exportFormats[v]
		if !ok {
			return "", invalidf("format", "%q: want json, jsonl or csv", v)
		}
		return format, nil
	}
	format := Accepts(accept, MIMEJSON, MIMEJSONL, MIMECSV)
	if format == "" {
		return "", &Error{Status: http.StatusNotAcceptable, Detail: what + " come as application/json, application/x-ndjson or text/csv"}
	}
	return format, nil
}

// Accepts reports which of the offered media types the Accept header prefers: the first offer
// with the highest q value among those the header names (exactly, by type/*, or */*). An empty
// header accepts the first offer; a header accepting none of them returns "".
func Accepts(header string, offers ...string) string {
	if strings.TrimSpace(header) == "" {
		return offers[0]
	}
	best, bestQ := "", 0.0
	for _, offer := range offers {
		q := 0.0
		for _, part := range strings.Split(header, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			typ, _, _ := strings.Cut(offer, "/")
			if mt != offer && mt != typ+"/*" && mt != "*/*" {
				continue
			}
			pq := 1.0
			if v, ok := params["q"]; ok {
				fmt.Sscanf(v, "%g", &pq)
			}
			q = max(q, pq)
		}
		if q > bestQ {
			best, bestQ = offer, q
		}
	}
	return best
}
