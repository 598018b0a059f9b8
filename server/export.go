package server

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
)

// exportFormat reads an audit export's format: the format parameter, else the Accept header.
func exportFormat(c echo.Context, what string) (string, error) {
	if v := c.QueryParam("format"); v != "" {
		format, ok := citationFormats[v]
		if !ok {
			return "", ragd.Invalidf("format", "%q: want json, jsonl or csv", v)
		}
		return format, nil
	}
	format := accepts(c.Request().Header.Get(echo.HeaderAccept), echo.MIMEApplicationJSON, mimeJSONL, mimeCSV)
	if format == "" {
		return "", echo.NewHTTPError(http.StatusNotAcceptable, what+" come as application/json, application/x-ndjson or text/csv")
	}
	return format, nil
}

// timeRange reads the from and to parameters (RFC 3339; from before to).
func timeRange(q url.Values) (from, to time.Time, err error) {
	for name, dst := range map[string]*time.Time{"from": &from, "to": &to} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return from, to, ragd.Invalidf(name, "%q is not an RFC 3339 time (2026-01-02T15:04:05Z)", v)
			}
			*dst = t
		}
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return from, to, ragd.Invalidf("from", "must be before to")
	}
	return from, to, nil
}

// streamExport streams every row an audit export selects as JSON Lines or CSV, in constant
// memory: each(fn) calls fn per row; asJSON and asCSV render one.
func streamExport[T any](s *Server, c echo.Context, format, name string, header []string,
	asJSON func(T) any, asCSV func(T) []string, each func(fn func(T) error) error) error {
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, format)
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.`+map[string]string{mimeJSONL: "jsonl", mimeCSV: "csv"}[format]+`"`)
	w.WriteHeader(http.StatusOK)
	var write func(T) error
	var flush func() error
	if format == mimeJSONL {
		enc := json.NewEncoder(w)
		write = func(v T) error { return enc.Encode(asJSON(v)) }
		flush = func() error { return nil }
	} else {
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		write = func(v T) error { return cw.Write(asCSV(v)) }
		flush = func() error { cw.Flush(); return cw.Error() }
	}
	if err := each(write); err != nil {
		// Headers are sent; the truncated body is all a client can be given. Log the cause.
		s.deps.Logger.ErrorContext(c.Request().Context(), name+" export failed mid-stream", "error", err.Error())
		return nil
	}
	return flush()
}
