package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	sse "github.com/tmaxmax/go-sse"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/llm"
	"github.com/ragd/ragd/mode"
	"github.com/ragd/ragd/redact"
	"github.com/ragd/ragd/server"
)

type problem struct {
	Status int    `json:"status"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

// Bytes no text store keeps, anywhere in a request, are a 400 that names the field, and nothing
// is written.
func TestBadBytesAreRefusedByField(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	before := b.count(t, "documents")
	for _, tc := range []struct {
		path, body, field string
	}{
		{"/v1/ask", `{"message": "smoke\u0000alarms"}`, "message"},
		{"/v1/ask", "{\"message\": \"caf\xe9\"}", "message"},
		{"/v1/ask", `{"message": "x", "intent": "task\u0000"}`, "intent"},
		{"/v1/documents", `{"text": "a\u0000b"}`, "text"},
		{"/v1/documents", `{"text": "fine", "title": "t\u0000"}`, "title"},
		{"/v1/documents", "{\"text\": \"fine\", \"source\": \"\xff\xfe\"}", "source"},
		{"/v1/documents", "{\"text\": \"fine\", \"ti\xfftle\": \"x\"}", "body"},
	} {
		resp, body := b.do(t, "POST", tc.path, tc.body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s %s", tc.body, body)
		require.Contains(t, decode[problem](t, body).Detail, tc.field, tc.body)
	}
	one := b.ask(t, "", "smoke alarms")
	resp, body := b.do(t, "POST", "/v1/conversations/"+one.ConversationID+"/messages", `{"content": "reply\u0000"}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	require.Contains(t, decode[problem](t, body).Detail, "content")

	// Multipart: a form field, a file name, and the file itself.
	for _, tc := range []struct {
		name, field, value, file string
		content                  []byte
		want                     string
	}{
		{"source field", "source", "key\xff", "a.txt", []byte("text"), "source"},
		{"NUL in source", "source", "key\x00", "a.txt", []byte("text"), "source"},
		{"file name", "source", "ok", "a\xff.txt", []byte("text"), "file"},
		{"NUL in the file", "source", "ok", "a.txt", []byte("te\x00xt"), "NUL"},
		{"invalid UTF-8 in the file", "source", "ok", "a.md", []byte("caf\xe9"), "UTF-8"},
	} {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		require.NoError(t, w.WriteField(tc.field, tc.value))
		fw, err := w.CreateFormFile("file", tc.file)
		require.NoError(t, err)
		_, _ = fw.Write(tc.content)
		require.NoError(t, w.Close())
		resp, body := b.do(t, "POST", "/v1/documents", buf.Bytes(), "Content-Type", w.FormDataContentType())
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", tc.name, body)
		require.Contains(t, decode[problem](t, body).Detail, tc.want, tc.name)
	}
	require.Equal(t, before, b.count(t, "documents"), "no bad request wrote a document")
	require.Equal(t, 2, b.count(t, "messages"), "only the good turn was recorded")
}

// waitingReranker blocks a turn until its request ends, as a slow cross-encoder would when the
// client hangs up.
type waitingReranker struct{ started chan struct{} }

func (w waitingReranker) Score(ctx context.Context, _ string, _ []string) ([]float32, error) {
	w.started <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// lockedBuffer is a log sink the server writes from its goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// A client that hangs up is not a server error: no ERROR line, no 500 in the metrics, a 499.
func TestClientHangUpIsNotAnError(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	rr := waitingReranker{started: make(chan struct{}, 1)}
	b := setup(t, options{corpus: true, reranker: rr, logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", b.srv.URL+"/v1/ask", strings.NewReader(`{"message": "smoke alarms"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-rr.started
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)

	var metrics string
	require.Eventually(t, func() bool {
		resp, body := b.do(t, "GET", "/metrics", nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		metrics = string(body)
		return strings.Contains(metrics, `route="/v1/ask",status="499"`)
	}, 30*time.Second, 20*time.Millisecond, "the hung-up request is counted as 499")
	require.NotContains(t, metrics, `status="500"`)
	require.NotContains(t, logs.String(), "level=ERROR")
	require.Contains(t, logs.String(), "client closed the request")
	require.Zero(t, b.count(t, "messages"), "the abandoned turn wrote nothing")
}

// PostgreSQL saying its disk is full is a 503 with Retry-After, and /readyz is not ready until a
// write goes through again.
func TestDiskFullIsUnavailable(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	b.exec(t, `CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$;
		CREATE TRIGGER disk_full BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION disk_full();`)
	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": "smoke alarms"})
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	require.Equal(t, "2", resp.Header.Get("Retry-After"))
	require.NotContains(t, string(body), "No space", "the database's text stays in the log")

	resp, body = b.do(t, "GET", "/readyz", nil)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), "disk full")

	b.exec(t, `DROP TRIGGER disk_full ON messages`)
	b.ask(t, "", "smoke alarms")
	resp, body = b.do(t, "GET", "/readyz", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
}

// No credential of the LLM endpoint reaches a client or a log line, whatever the endpoint says.
func TestLLMCredentialsDoNotLeak(t *testing.T) {
	t.Parallel()
	const key = "sk-live-4f9c2b7e1d"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A misbehaving upstream that echoes what it was sent.
		user, pass, _ := r.BasicAuth()
		http.Error(w, fmt.Sprintf(`{"error":{"message":"bad key %s (Authorization: %s) user %s:%s"}}`,
			key, r.Header.Get("Authorization"), user, pass), http.StatusUnauthorized)
	}))
	defer echo.Close()
	llmURL := strings.Replace(echo.URL, "http://", "http://admin:hunter2pass@", 1) + "/v1"
	client, err := llm.New(llm.Config{BaseURL: llmURL, APIKey: key, Model: "fake"})
	require.NoError(t, err)
	var logs lockedBuffer
	logger := slog.New(redact.NewHandler(slog.NewTextHandler(&logs, nil), redact.Secrets(key, llmURL)...))
	b := setup(t, options{corpus: true, answerer: client, logger: logger})

	secrets := []string{key, "hunter2pass", "admin:"}
	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": "smoke alarms"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	resp, stream := b.do(t, "POST", "/v1/ask", map[string]any{"message": "smoke alarms"}, "Accept", "text/event-stream")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var last sse.Event
	for ev, err := range sse.Read(bytes.NewReader(stream), nil) {
		require.NoError(t, err)
		last = ev
	}
	require.Equal(t, "error", last.Type)
	for _, s := range secrets {
		require.NotContains(t, string(body), s)
		require.NotContains(t, string(stream), s)
		require.NotContains(t, logs.String(), s)
	}
	require.Contains(t, logs.String(), "answer generation failed", "the failure is logged, redacted")
	require.Contains(t, decode[askResponse](t, body).Retrieval.Skipped["answer"], "the LLM failed")
}

type job struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Problem *struct {
		Status int    `json:"status"`
		Detail string `json:"detail"`
	} `json:"problem"`
	Result *struct {
		DocID  string `json:"doc_id"`
		Status string `json:"status"`
	} `json:"result"`
}

// upload posts data as a multipart file.
func (b *testBundle) upload(t *testing.T, name string, data []byte) (*http.Response, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fw, err := w.CreateFormFile("file", name)
	require.NoError(t, err)
	_, _ = fw.Write(data)
	require.NoError(t, w.Close())
	return b.do(t, "POST", "/v1/documents", buf.Bytes(), "Content-Type", w.FormDataContentType())
}

// wait polls a job until it finishes.
func (b *testBundle) wait(t *testing.T, location string, header ...string) job {
	t.Helper()
	var j job
	require.Eventually(t, func() bool {
		resp, body := b.do(t, "GET", location, nil, header...)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		j = decode[job](t, body)
		return j.Status == "done" || j.Status == "failed"
	}, 2*time.Minute, 50*time.Millisecond)
	return j
}

// Large uploads are jobs the caller polls; the megabyte of nested quotes that used to run for
// minutes inside a request fails its job with the 400 it deserves.
func TestLargeUploadsAreJobs(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	var md bytes.Buffer
	for md.Len() < 3<<19 {
		fmt.Fprintf(&md, "## Section %d\n\nShelter in place when the siren sounds, and keep the radio on.\n\n", md.Len())
	}
	resp, body := b.upload(t, "big.md", md.Bytes())
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", body)
	loc := resp.Header.Get("Location")
	require.Equal(t, "/v1/jobs/"+decode[job](t, body).ID, loc)
	j := b.wait(t, loc)
	require.Equal(t, "done", j.Status, "%+v", j)
	require.Equal(t, "created", j.Result.Status)
	resp, _ = b.do(t, "GET", "/v1/documents/"+j.Result.DocID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	resp, body = b.upload(t, "quotes.md", bytes.Repeat([]byte(">"), 1<<20+1))
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", body)
	j = b.wait(t, resp.Header.Get("Location"))
	require.Equal(t, "failed", j.Status)
	require.Equal(t, http.StatusBadRequest, j.Problem.Status)
	require.Contains(t, j.Problem.Detail, "too complex")

	resp, _ = b.do(t, "GET", "/v1/jobs/0190f5b4-0000-7000-8000-000000000000", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// Pins per conversation are capped: past the cap, a 400 naming the pins, and nothing changes.
func TestPinsAreCapped(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true, pipeline: func(c *ask.Config) { c.MaxPins = 2 }, cfg: server.Config{MaxPins: 2}})
	one := b.ask(t, "", "smoke alarms")
	resp, body := b.do(t, "GET", "/v1/documents?limit=5", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	docs := decode[struct {
		Documents []struct {
			ID string `json:"id"`
		} `json:"documents"`
	}](t, body).Documents
	require.GreaterOrEqual(t, len(docs), 3)
	resp, body = b.do(t, "POST", "/v1/ask", map[string]any{"message": "x", "pins": []string{docs[0].ID, docs[1].ID, docs[2].ID}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), "pins")
	for i, want := range []int{http.StatusCreated, http.StatusCreated, http.StatusBadRequest} {
		resp, body = b.do(t, "PUT", "/v1/conversations/"+one.ConversationID+"/pins/"+docs[i].ID, nil)
		require.Equal(t, want, resp.StatusCode, "pin %d: %s", i+1, body)
	}
	resp, body = b.do(t, "POST", "/v1/ask", map[string]any{"message": "x", "conversation_id": one.ConversationID, "pins": []string{docs[2].ID}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
}

// A document's title and its chunks' headings are bounded: every source a turn shows carries
// them and every chunk under a heading repeats it (a 5 MB title made each turn that found its
// document take 14 s). A title the client gives over the bound is a 400 that changes nothing; one
// the document itself holds (its first heading) is cut.
func TestLongTitlesAreBounded(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	long := strings.Repeat("é", ragd.MaxTitleRunes+1)
	resp, body := b.do(t, "POST", "/v1/documents", map[string]any{"text": "Move to high ground.", "title": long})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), "title")
	require.Zero(t, b.count(t, "documents"))
	resp, body = b.do(t, "POST", "/v1/documents", map[string]any{"text": "Move to high ground.", "title": long[len("é"):]})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)

	md := "# " + strings.Repeat("Tsunami ", 20000) + "\n\n## " + strings.Repeat("Evacuation ", 20000) +
		"\n\nWhen the sea retreats from the shore, walk inland to high ground at once.\n"
	resp, body = b.upload(t, "tsunami.md", []byte(md))
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	turn := b.ask(t, "", "the sea retreats from the shore")
	require.NotEmpty(t, turn.Sources)
	for _, s := range turn.Sources {
		require.LessOrEqual(t, utf8.RuneCountInString(s.Title), ragd.MaxTitleRunes)
	}
	conn := b.connect(t)
	defer conn.Close(b.ctx)
	var title, heading int
	require.NoError(t, conn.QueryRow(b.ctx, `SELECT (SELECT max(char_length(title)) FROM document_versions),
		(SELECT max(char_length(heading)) FROM chunks)`).Scan(&title, &heading))
	require.Equal(t, ragd.MaxTitleRunes, title, "the longest title, cut")
	require.LessOrEqual(t, heading, 2*ragd.MaxTitleRunes+len(" > "), "two headings, each cut")
}

// A source key (or URL) longer than the store can index is a 400 naming it, not a 500, and
// stores nothing.
func TestLongSourceKeysAreRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	var key strings.Builder
	for sum := sha256.Sum256(nil); key.Len() < 12000; sum = sha256.Sum256(sum[:]) {
		key.WriteString(hex.EncodeToString(sum[:])) // incompressible, as PostgreSQL stores it
	}
	long := key.String()
	for name, tc := range map[string]struct {
		body  any
		field string
	}{
		"source": {map[string]any{"text": "Move to high ground.", "source": long}, "source"},
		"url":    {map[string]any{"url": "https://example.com/" + long}, "url"},
	} {
		resp, body := b.do(t, "POST", "/v1/documents", tc.body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", name, body)
		require.Contains(t, string(body), tc.field, name)
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fw, err := w.CreateFormFile("file", "a.md")
	require.NoError(t, err)
	_, _ = fw.Write([]byte("Move to high ground."))
	require.NoError(t, w.WriteField("source", long))
	require.NoError(t, w.Close())
	resp, body := b.do(t, "POST", "/v1/documents", buf.Bytes(), "Content-Type", w.FormDataContentType())
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "multipart: %s", body)
	require.Contains(t, string(body), "source")
	require.Zero(t, b.count(t, "documents"))

	resp, body = b.do(t, "POST", "/v1/documents", map[string]any{"text": "Move to high ground.", "source": long[:ragd.MaxSourceKeyBytes]})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
}

// A URL ingest refused by the policy reads to the client like any other failure, and the
// operator's log says why, with who asked: an attempt at the host's own network is visible.
func TestRefusedFetchIsLogged(t *testing.T) {
	t.Parallel()
	logs := newLogRecords()
	b := setup(t, options{logger: slog.New(logs)})
	resp, body := b.do(t, "POST", "/v1/documents", map[string]any{"url": "http://user:secret@127.0.0.1:1/admin"})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	require.NotContains(t, string(body), "policy", "the client is not told why")
	logs.mu.Lock()
	defer logs.mu.Unlock()
	var found []string
	for _, r := range logs.records {
		if r.Message != "URL not fetched" {
			continue
		}
		r.Attrs(func(a slog.Attr) bool {
			found = append(found, a.Key+"="+a.Value.String())
			return true
		})
	}
	require.Contains(t, found, "url=http://127.0.0.1:1/admin", "logged, without the URL's password")
	require.Contains(t, strings.Join(found, " "), "refused by the ingest policy")
	require.NotContains(t, strings.Join(found, " "), "secret")
}

// A drift baseline whose shares add up past a float64 is a 400 naming distribution: stored, it
// made the tenant's divergence NaN for good (every GET /v1/admin/drift a 500).
func TestDriftBaselineMustAddUpToANumber(t *testing.T) {
	t.Parallel()
	drift, err := mode.NewDrift(mode.DefaultDriftConfig())
	require.NoError(t, err)
	b := setup(t, options{corpus: true, monitors: ask.Monitors{Drift: drift}})
	resp, body := b.do(t, "PUT", "/v1/admin/drift/baseline", map[string]any{"distribution": map[string]float64{"TASK": 1e308, "GENERAL": 1e308}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), "distribution: ")
	b.ask(t, "", "how do smoke alarms work")
	resp, body = b.do(t, "GET", "/v1/admin/drift", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
}
