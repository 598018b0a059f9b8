package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/request"
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

// citations exports citations for auditors, filtered by conversation, document and time range.
// JSON comes in pages (limit, after); JSONL and CSV stream every match in one response.
func (s *Server) citations(c echo.Context) error {
	if err := request.Only(c.QueryParams(), "conversation_id", "doc_id", "from", "to", "after", "limit", "format"); err != nil {
		return err
	}
	f, err := request.Citations(c.QueryParams())
	if err != nil {
		return err
	}
	format, err := request.ExportFormat(c.QueryParams(), c.Request().Header.Get(echo.HeaderAccept), "citations")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if format == request.MIMEJSON {
		return exportPage(c, "citations", f.Limit, citationOf, func(ct citationJSON) any { return ct.ID },
			func(limit int, fn func(ragd.Citation) error) error {
				f.Limit = limit
				return s.deps.Store.Citations(ctx, f, fn)
			})
	}

	return streamExport(s, c, format, "citations", csvHeader, func(ct ragd.Citation) any { return citationOf(ct) }, csvRow,
		func(fn func(ragd.Citation) error) error {
			return batched(f.Limit, func(limit int, fn func(ragd.Citation) error) error {
				g := f
				g.Limit = limit
				return s.deps.Store.Citations(ctx, g, func(ct ragd.Citation) error {
					f.AfterID = ct.ID // the next batch starts after it
					return fn(ct)
				})
			}, fn)
		})
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
