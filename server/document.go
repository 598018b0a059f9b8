package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/request"
)

// postDocument ingests one document: a multipart upload (field "file"), or JSON with its text or
// a URL to fetch. It runs the same ingest code as `ragd ingest` and catches the BM25 index up
// before answering, so the next /v1/ask can find the document.
//
// An upload larger than Config.AsyncBytes is not worked on inside the request: it is queued as a
// job and answered 202 with the job, whose Location the client polls.
//
// At most Config.IngestInRequest posts are read and worked on at once; one more is a 503 at
// once, its body unread. The slot is let go before the answer is written, so a client that has
// its answer may post again.
func (s *Server) postDocument(c echo.Context) error {
	status, out, err := func() (int, any, error) {
		if s.ingesting != nil {
			select {
			case s.ingesting <- struct{}{}:
				defer func() { <-s.ingesting }() // a panic too lets the slot go
			default:
				return 0, nil, fmt.Errorf("%w: %d documents are being ingested inside their requests (--ingest-in-request)",
					ragd.ErrBusy, cap(s.ingesting))
			}
		}
		return s.ingestPosted(c)
	}()
	if err != nil {
		return err
	}
	return c.JSON(status, out)
}

// ingestPosted reads a posted document and ingests it, or queues it as a job.
func (s *Server) ingestPosted(c echo.Context) (int, any, error) {
	src, err := s.documentSource(c)
	if err != nil {
		return 0, nil, err
	}
	if s.cfg.AsyncBytes >= 0 && int64(len(src.Data)) > s.cfg.AsyncBytes {
		who := ragd.PrincipalOf(c.Request().Context())
		j, err := s.jobs.add(who, src)
		if err != nil {
			return 0, nil, err
		}
		c.Response().Header().Set(echo.HeaderLocation, "/v1/jobs/"+j.ID.String())
		state, _ := s.jobs.get(who.Tenant, j.ID)
		return http.StatusAccepted, state, nil
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), s.cfg.IngestTimeout)
	defer cancel()
	res, err := s.ingest(ctx, src)
	if err != nil {
		return 0, nil, err
	}
	return resultStatus(res), res, nil
}

// documentSource reads the document a request posts: its bytes, or the page of its URL.
func (s *Server) documentSource(c echo.Context) (ingest.Source, error) {
	d, err := request.ReadDocument(c.Response(), c.Request(), s.cfg.MaxUploadBytes)
	if err != nil {
		return ingest.Source{}, err
	}
	if d.URL != "" {
		ctx := c.Request().Context()
		src, err := ingest.Fetch(ctx, s.cfg.Fetcher, d.URL, s.cfg.MaxUploadBytes)
		// The client reads the same error whatever happened; the operator reads why, a URL
		// refused by the ingest policy (an attempt at the host's network) among the rest.
		var fe interface{ Cause() error }
		if errors.As(err, &fe) {
			p := ragd.PrincipalOf(ctx)
			s.deps.Logger.InfoContext(ctx, "URL not fetched", slog.String("url", src.Name), slog.String("cause", fe.Cause().Error()),
				slog.String("tenant", p.Tenant.String()), slog.String("key", p.KeyID.String()))
		}
		return src, err
	}
	// An upload's file name is where the document came from, as a file's path is for ragd
	// ingest: shown with its sources, in the audit export, and found by GET /v1/documents?q=.
	return ingest.Source{Key: d.Key, Name: d.Name, Title: d.Title, ContentType: d.ContentType, Data: d.Data, Path: d.FileName}, nil
}

// getDocument returns a document with its versions.
func (s *Server) getDocument(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	d, err := s.deps.Store.Document(ctx, id)
	if err != nil {
		return err
	}
	vs, err := s.deps.Store.Versions(ctx, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, documentOf(d, vs))
}

// deleteDocument removes a document from search. Its citations stay readable.
func (s *Server) deleteDocument(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := s.deps.Store.DeleteDocument(ctx, id); err != nil {
		return err
	}
	if _, err := s.deps.Index.CatchUp(ctx, s.deps.Store); err != nil {
		return fmt.Errorf("document deleted, index not yet caught up (it will on its next poll): %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}

// listDocuments lists the documents in search, most recently updated first; q keeps those whose
// title or source contains it. It is what a pin picker offers.
func (s *Server) listDocuments(c echo.Context) error {
	if err := request.Only(c.QueryParams(), "q", "limit", "cursor"); err != nil {
		return err
	}
	p, limit, err := request.Page(c.QueryParams())
	if err != nil {
		return err
	}
	q, err := request.DocumentQuery(c.QueryParams())
	if err != nil {
		return err
	}
	rows, err := s.deps.Store.ListDocuments(c.Request().Context(), ragd.DocumentFilter{Query: q, Page: p})
	if err != nil {
		return err
	}
	rows, next := request.NextCursor(rows, limit, func(d ragd.DocumentSummary) (time.Time, uuid.UUID) { return d.UpdatedAt, d.ID })
	out := documentListJSON{Documents: make([]documentSummaryJSON, len(rows)), NextCursor: next}
	for i, d := range rows {
		out.Documents[i] = documentSummaryOf(d)
	}
	return c.JSON(http.StatusOK, out)
}
