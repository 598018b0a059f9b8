package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ingest"
)

// postDocument ingests one document: a multipart upload (field "file"), or JSON with its text or
// a URL to fetch. It runs the same ingest code as `ragd ingest` and catches the BM25 index up
// before answering, so the next /v1/ask can find the document.
//
// An upload larger than Config.AsyncBytes is not worked on inside the request: it is queued as a
// job and answered 202 with the job, whose Location the client polls.
func (s *Server) postDocument(c echo.Context) error {
	src, err := s.documentSource(c)
	if err != nil {
		return err
	}
	if s.cfg.AsyncBytes >= 0 && int64(len(src.Data)) > s.cfg.AsyncBytes {
		who := ragd.PrincipalOf(c.Request().Context())
		j, err := s.jobs.add(who, src)
		if err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderLocation, "/v1/jobs/"+j.ID.String())
		state, _ := s.jobs.get(who.Tenant, j.ID)
		return c.JSON(http.StatusAccepted, state)
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), s.cfg.IngestTimeout)
	defer cancel()
	res, err := s.ingest(ctx, src)
	if err != nil {
		return err
	}
	return c.JSON(resultStatus(res), res)
}

var formatExt = map[string]string{"markdown": ".md", "text": ".txt", "html": ".html", "pdf": ".pdf"}

func (s *Server) documentSource(c echo.Context) (ingest.Source, error) {
	r := c.Request()
	mt, _, _ := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	switch mt {
	case echo.MIMEMultipartForm:
		r.Body = http.MaxBytesReader(c.Response(), r.Body, s.cfg.MaxUploadBytes)
		fh, err := c.FormFile("file")
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return ingest.Source{}, err
			}
			return ingest.Source{}, ragd.Invalidf("file", "multipart upload needs a file field: %v", err)
		}
		for name, vs := range r.MultipartForm.Value {
			for _, v := range vs {
				if err := checkText(name, v); err != nil {
					return ingest.Source{}, err
				}
			}
		}
		if err := checkText("file", fh.Filename); err != nil {
			return ingest.Source{}, ragd.Invalidf("file", "its file name is not valid UTF-8 or holds a NUL character")
		}
		f, err := fh.Open()
		if err != nil {
			return ingest.Source{}, ragd.Invalidf("file", "%v", err)
		}
		defer f.Close()
		data, err := io.ReadAll(f)
		if err != nil {
			return ingest.Source{}, err
		}
		// An upload is identified by its content unless the client names it with a source key.
		return ingest.Source{Key: c.FormValue("source"), Name: fh.Filename,
			ContentType: fh.Header.Get(echo.HeaderContentType), Data: data}, nil
	case echo.MIMEApplicationJSON:
		var req documentRequest
		if err := decodeJSON(c, &req, s.cfg.MaxUploadBytes); err != nil {
			return ingest.Source{}, err
		}
		switch {
		case req.URL != "" && req.Text != "":
			return ingest.Source{}, ragd.Invalidf("body", "give text or url, not both")
		case req.URL != "":
			return ingest.Fetch(c.Request().Context(), s.cfg.Fetcher, req.URL, s.cfg.MaxUploadBytes)
		case strings.TrimSpace(req.Text) == "":
			return ingest.Source{}, ragd.Invalidf("text", "is empty (or give a url)")
		}
		format := req.Format
		if format == "" {
			format = "text"
		}
		ext, ok := formatExt[format]
		if !ok || format == "pdf" {
			return ingest.Source{}, ragd.Invalidf("format", "%q: want markdown, text or html (upload PDFs as files)", format)
		}
		return ingest.Source{Key: req.Source, Name: "document" + ext, Title: req.Title, Data: []byte(req.Text)}, nil
	}
	return ingest.Source{}, echo.NewHTTPError(http.StatusUnsupportedMediaType, "send a multipart/form-data upload or application/json")
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
	p, limit, err := pageQuery(c)
	if err != nil {
		return err
	}
	q := c.QueryParam("q")
	if len(q) > maxQueryBytes || !utf8.ValidString(q) {
		return ragd.Invalidf("q", "must be valid UTF-8 of at most %d bytes", maxQueryBytes)
	}
	rows, err := s.deps.Store.ListDocuments(c.Request().Context(), ragd.DocumentFilter{Query: q, Page: p})
	if err != nil {
		return err
	}
	rows, next := nextCursor(rows, limit, func(d ragd.DocumentSummary) (time.Time, uuid.UUID) { return d.UpdatedAt, d.ID })
	out := documentListJSON{Documents: make([]documentSummaryJSON, len(rows)), NextCursor: next}
	for i, d := range rows {
		out.Documents[i] = documentSummaryOf(d)
	}
	return c.JSON(http.StatusOK, out)
}

// maxQueryBytes bounds a document search.
const maxQueryBytes = 256
