package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
)

// messageCitations returns the citations of one message: every marker with the passage and
// document version behind it, as cited.
func (s *Server) messageCitations(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	cs, err := s.deps.Store.MessageCitations(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out := make([]citationJSON, len(cs))
	for i, ct := range cs {
		out[i] = citationOf(ct)
	}
	return c.JSON(http.StatusOK, map[string]any{"message_id": id, "citations": out})
}

const (
	mimeJSONL = "application/x-ndjson"
	mimeCSV   = "text/csv"

	defaultCitationPage = 1000
	maxCitationPage     = 10000
)

var citationFormats = map[string]string{"json": echo.MIMEApplicationJSON, "jsonl": mimeJSONL, "csv": mimeCSV}

// citations exports citations for auditors, filtered by conversation, document and time range.
// JSON comes in pages (limit, after); JSONL and CSV stream every match in one response.
func (s *Server) citations(c echo.Context) error {
	f, format, err := citationQuery(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if format == echo.MIMEApplicationJSON {
		if f.Limit == 0 {
			f.Limit = defaultCitationPage
		}
		out := []citationJSON{}
		if err := s.deps.Store.Citations(ctx, f, func(ct ragd.Citation) error {
			out = append(out, citationOf(ct))
			return nil
		}); err != nil {
			return err
		}
		page := map[string]any{"citations": out}
		if len(out) == f.Limit {
			page["next_after"] = out[len(out)-1].ID
		}
		return c.JSON(http.StatusOK, page)
	}

	return streamExport(s, c, format, "citations", csvHeader, func(ct ragd.Citation) any { return citationOf(ct) }, csvRow,
		func(fn func(ragd.Citation) error) error { return s.deps.Store.Citations(ctx, f, fn) })
}

// citationQuery reads the filter and the format (the format parameter, else the Accept header).
func citationQuery(c echo.Context) (ragd.CitationFilter, string, error) {
	var f ragd.CitationFilter
	q := c.QueryParams()
	for name, dst := range map[string]*uuid.UUID{"conversation_id": &f.ConversationID, "doc_id": &f.DocID} {
		if v := q.Get(name); v != "" {
			id, err := uuid.Parse(v)
			if err != nil {
				return f, "", ragd.Invalidf(name, "%q is not a UUID", v)
			}
			*dst = id
		}
	}
	var err error
	if f.From, f.To, err = timeRange(q); err != nil {
		return f, "", err
	}
	for name, dst := range map[string]*int64{"after": &f.AfterID} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return f, "", ragd.Invalidf(name, "%q is not a citation id", v)
			}
			*dst = n
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxCitationPage {
			return f, "", ragd.Invalidf("limit", "must be 1..%d", maxCitationPage)
		}
		f.Limit = n
	}
	format, err := exportFormat(c, "citations")
	return f, format, err
}

var csvHeader = []string{"id", "message_id", "conversation_id", "marker", "fact", "score", "origin", "rank",
	"doc_id", "doc_version", "doc_title", "doc_url", "doc_path", "chunk_id", "chunk_text", "page_start",
	"page_end", "created_at"}

func csvRow(c ragd.Citation) []string {
	return []string{strconv.FormatInt(c.ID, 10), c.MessageID.String(), c.ConversationID.String(), c.Marker,
		c.Fact, strconv.FormatFloat(c.Score, 'g', -1, 64), c.Origin, strconv.Itoa(c.Rank), c.DocID.String(),
		strconv.Itoa(c.DocVersion), c.DocTitle, c.DocURL, c.DocPath, strconv.FormatInt(c.ChunkID, 10), c.ChunkText,
		strconv.Itoa(c.PageStart), strconv.Itoa(c.PageEnd), c.CreatedAt.UTC().Format(time.RFC3339Nano)}
}
