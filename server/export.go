package server

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd/request"
)

// streamExport streams every row an audit export selects as JSON Lines or CSV, in constant
// memory: each(fn) calls fn per row; asJSON and asCSV render one.
func streamExport[T any](s *Server, c echo.Context, format, name string, header []string,
	asJSON func(T) any, asCSV func(T) []string, each func(fn func(T) error) error) error {
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, format)
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.`+map[string]string{request.MIMEJSONL: "jsonl", request.MIMECSV: "csv"}[format]+`"`)
	w.WriteHeader(http.StatusOK)
	var write func(T) error
	var flush func() error
	if format == request.MIMEJSONL {
		enc := json.NewEncoder(w)
		write = func(v T) error { return enc.Encode(asJSON(v)) }
		flush = func() error { return nil }
	} else {
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		write = func(v T) error {
			row := asCSV(v)
			for i := range row {
				row[i] = spreadsheetSafe(row[i])
			}
			return cw.Write(row)
		}
		flush = func() error { cw.Flush(); return cw.Error() }
	}
	var clientErr error // writing to the client failed: it left, which is no failure of ragd's
	if err := each(func(v T) error {
		if err := write(v); err != nil {
			clientErr = err
			return err
		}
		return nil
	}); err != nil {
		// Headers are sent; the truncated body is all a client can be given. Log the cause.
		if clientErr != nil {
			s.deps.Logger.DebugContext(c.Request().Context(), name+" export ended: the client stopped reading", "error", err.Error())
			return nil
		}
		s.deps.Logger.ErrorContext(c.Request().Context(), name+" export failed mid-stream", "error", err.Error())
		return nil
	}
	return flush()
}

// exportBatch is how many rows a streamed export reads at a time.
const exportBatch = 500

// batched reads a streamed export a batch at a time and hands fn each row once its batch is
// read: read(limit, fn) reads the next at most limit rows, after those read before (the caller's
// keyset), and gives its PostgreSQL connection back before fn writes them. A client that reads
// slowly, or not at all, then holds no connection of the pool every tenant shares (sixteen
// stalled CSV exports of one auditor made ragd unavailable to all). total > 0 caps the rows.
// Each batch is read at its own moment, so rows written during a long export may be in it, as
// they may be in the next page of a JSON export.
func batched[T any](total int, read func(limit int, fn func(T) error) error, fn func(T) error) error {
	for n := 0; total <= 0 || n < total; {
		limit := exportBatch
		if total > 0 {
			limit = min(limit, total-n)
		}
		batch := make([]T, 0, limit)
		if err := read(limit, func(v T) error { batch = append(batch, v); return nil }); err != nil {
			return err
		}
		for _, v := range batch {
			if err := fn(v); err != nil {
				return err
			}
		}
		if len(batch) < limit {
			return nil
		}
		n += len(batch)
	}
	return nil
}

// spreadsheetSafe keeps a spreadsheet from running a CSV cell as a formula: a cell that begins
// with = + - @, a tab or a carriage return, and is not a number, gets a leading '. The cells hold
// text clients wrote (a rating's reason, a document's title and text), and an auditor opening
// the export would otherwise run =HYPERLINK(...) or =cmd|... written by a chat user or a fetched
// page. JSON and JSON Lines carry the text unchanged.
func spreadsheetSafe(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// exportPage answers an audit export's JSON format: one page of at most limit rows
// (DefaultExportPage when 0) under name, with next_after, the last row's id, when the page is
// full. read(limit, fn) calls fn per row of the page; asJSON renders one and id names it.
func exportPage[T, J any](c echo.Context, name string, limit int, asJSON func(T) J, id func(J) any,
	read func(limit int, fn func(T) error) error) error {
	if limit == 0 {
		limit = request.DefaultExportPage
	}
	out := []J{}
	if err := read(limit, func(v T) error {
		out = append(out, asJSON(v))
		return nil
	}); err != nil {
		return err
	}
	page := map[string]any{name: out}
	if len(out) == limit {
		page["next_after"] = id(out[len(out)-1])
	}
	return c.JSON(http.StatusOK, page)
}
