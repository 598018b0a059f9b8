package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sse "github.com/tmaxmax/go-sse"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/llm"
)

// logRecords keeps what the server logged, and signals each message it is told to wait for.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
	waiting map[string]chan struct{}
}

func newLogRecords(wait ...string) *logRecords {
	l := &logRecords{waiting: map[string]chan struct{}{}}
	for _, m := range wait {
		l.waiting[m] = make(chan struct{}, 16)
	}
	return l
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r)
	if ch, ok := l.waiting[r.Message]; ok {
		ch <- struct{}{}
	}
	return nil
}

// wait blocks until msg is logged; the deadline only keeps a broken server from hanging the test.
func (l *logRecords) wait(t *testing.T, msg string) {
	t.Helper()
	select {
	case <-l.waiting[msg]:
	case <-time.After(time.Minute):
		t.Fatalf("the server never logged %q", msg)
	}
}

func (l *logRecords) errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		if r.Level >= slog.LevelError {
			out = append(out, r.Message)
		}
	}
	return out
}

// stallingLLM is an OpenAI-compatible endpoint that streams the first sentence of its answer and
// then stalls until the client goes away: a long answer, cut by a stop.
const stalledSentence = "Leave the building at once and call the gas company from outside "

func stallingLLM(t *testing.T) *httptest.Server {
	t.Helper()
	return fakeChat(t, func(w http.ResponseWriter, r *http.Request, marker string) {
		for _, part := range strings.SplitAfter(stalledSentence+"["+marker+"]. ", " ") {
			sendDelta(w, part)
		}
		<-r.Context().Done()
	})
}

// openStream starts a streamed turn and returns its events as they arrive.
func (b *testBundle) openStream(t *testing.T, ctx context.Context, req map[string]any, header ...string) (<-chan sse.Event, func()) {
	t.Helper()
	raw, err := json.Marshal(req)
	require.NoError(t, err)
	hr, err := http.NewRequestWithContext(ctx, "POST", b.srv.URL+"/v1/ask", bytes.NewReader(raw))
	require.NoError(t, err)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		hr.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	out := make(chan sse.Event)
	go func() {
		defer close(out)
		for ev, err := range sse.Read(resp.Body, nil) {
			if err != nil {
				return
			}
			out <- ev
		}
	}()
	return out, func() { resp.Body.Close() }
}

type message struct {
	ID              string  `json:"id"`
	Role            string  `json:"role"`
	Content         string  `json:"content"`
	Answer          string  `json:"answer"`
	ReplyRecordedAt *string `json:"reply_recorded_at"`
	StoppedAt       *string `json:"stopped_at"`
}

func (b *testBundle) messages(t *testing.T, conv string) []message {
	t.Helper()
	resp, body := b.do(t, "GET", "/v1/conversations/"+conv, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return decode[struct {
		Messages []message `json:"messages"`
	}](t, body).Messages
}

// untilAnswer reads events up to the first answer delta and returns the meta.
func untilAnswer(t *testing.T, events <-chan sse.Event) (askResponse, string) {
	t.Helper()
	var meta askResponse
	for ev := range events {
		switch ev.Type {
		case "meta":
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &meta))
		case "answer":
			return meta, deltaOf(t, ev)
		case "done", "error":
			t.Fatalf("the stream ended before any answer: %s %s", ev.Type, ev.Data)
		}
	}
	t.Fatal("the stream ended before any answer")
	return meta, ""
}

func TestStopRequested(t *testing.T) {
	t.Parallel()
	client, err := llm.New(llm.Config{BaseURL: stallingLLM(t).URL + "/v1", Model: "fake"})
	require.NoError(t, err)
	logs := newLogRecords()
	b := setup(t, options{corpus: true, answerer: client, logger: slog.New(logs)})

	events, closeStream := b.openStream(t, b.ctx, map[string]any{"message": "I smell gas after the earthquake"})
	defer closeStream()
	meta, first := untilAnswer(t, events)
	received := first

	resp, body := b.do(t, "POST", "/v1/messages/"+meta.MessageID+"/stop", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	stopped := decode[message](t, body)
	require.NotNil(t, stopped.StoppedAt)

	// The stream ends with a stopped event holding the answer as sent.
	var end struct {
		Answer string `json:"answer"`
		Reason string `json:"reason"`
	}
	var last string
	for ev := range events {
		last = ev.Type
		switch ev.Type {
		case "answer":
			received += deltaOf(t, ev)
		case "stopped":
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &end))
		default:
			t.Fatalf("unexpected %s after the stop: %s", ev.Type, ev.Data)
		}
	}
	require.Equal(t, "stopped", last, "stopped is the last event")
	require.Equal(t, "stop requested", end.Reason)
	require.Equal(t, received, end.Answer, "the stopped event has every delta the client got")
	require.Equal(t, received, stopped.Answer, "the turn is recorded with what was sent")
	// How many deltas reach the client before the stop is up to the scheduler: the first, at
	// least, and only what the LLM sent.
	require.True(t, strings.HasPrefix(stalledSentence+"[", received) || strings.HasPrefix(received, stalledSentence+"["),
		"the client got only what the LLM sent before it stalled: %q", received)

	ms := b.messages(t, meta.ConversationID)
	require.Equal(t, received, ms[1].Answer)
	require.Equal(t, received, ms[1].Content, "content shows the answer as far as it went")
	require.NotNil(t, ms[1].StoppedAt)
	require.NotContains(t, ms[1].Answer, "[A1] ", "the fact sheet is not saved as the answer")
	require.Len(t, b.citationsOf(t, meta.MessageID), len(b.citationsOf(t, meta.MessageID)), "citations stay")
	require.NotEmpty(t, b.citationsOf(t, meta.MessageID))

	// Stopping again returns the message as it is; other stops are refused.
	resp, body = b.do(t, "POST", "/v1/messages/"+meta.MessageID+"/stop", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, stopped.StoppedAt, decode[message](t, body).StoppedAt)
	resp, body = b.do(t, "POST", "/v1/messages/"+ms[0].ID+"/stop", nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	resp, _ = b.do(t, "POST", "/v1/messages/0190f5b4-0000-7000-8000-000000000000/stop", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = b.do(t, "POST", "/v1/messages/nope/stop", nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Empty(t, logs.errors(), "a stop is not an error")
}

// Only the key that asked a turn, or an admin, stops its answer: another user of the tenant
// cannot cut it short, which would also cut the answer the turn records.
func TestStopIsTheAskersOnly(t *testing.T) {
	t.Parallel()
	client, err := llm.New(llm.Config{BaseURL: stallingLLM(t).URL + "/v1", Model: "fake"})
	require.NoError(t, err)
	b := setup(t, options{corpus: true, answerer: client, keys: true})
	bearer := func(role ragd.Role) []string {
		return []string{"Authorization", "Bearer " + b.key(t, ragd.DefaultTenant, role)}
	}
	asker, other, admin := bearer(ragd.RoleChat), bearer(ragd.RoleChat), bearer(ragd.RoleAdmin)

	for _, stopper := range [][]string{asker, admin} {
		events, closeStream := b.openStream(t, b.ctx, map[string]any{"message": "I smell gas after the earthquake"}, asker...)
		meta, _ := untilAnswer(t, events)
		resp, body := b.do(t, "POST", "/v1/messages/"+meta.MessageID+"/stop", nil, other...)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
		resp, body = b.do(t, "POST", "/v1/messages/"+meta.MessageID+"/stop", nil, stopper...)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		require.NotNil(t, decode[message](t, body).StoppedAt)
		for range events {
		}
		closeStream()
	}
}

func TestStopByClosingTheConnection(t *testing.T) {
	t.Parallel()
	client, err := llm.New(llm.Config{BaseURL: stallingLLM(t).URL + "/v1", Model: "fake"})
	require.NoError(t, err)
	logs := newLogRecords("answer stream stopped")
	b := setup(t, options{corpus: true, answerer: client, logger: slog.New(logs)})

	ctx, cancel := context.WithCancel(b.ctx)
	events, closeStream := b.openStream(t, ctx, map[string]any{"message": "I smell gas after the earthquake"})
	meta, received := untilAnswer(t, events)
	cancel()
	closeStream()
	logs.wait(t, "answer stream stopped")

	ms := b.messages(t, meta.ConversationID)
	require.NotNil(t, ms[1].StoppedAt, "the turn is recorded as stopped")
	require.True(t, strings.HasPrefix(ms[1].Answer, received), "the recorded answer %q holds what the client got (%q)", ms[1].Answer, received)
	require.True(t, strings.HasPrefix(stalledSentence+"[", ms[1].Answer) || strings.HasPrefix(ms[1].Answer, stalledSentence+"["),
		"and only what the LLM sent before it stalled: %q", ms[1].Answer)
	require.NotContains(t, ms[1].Answer, "\n", "not the fact sheet")
	require.Empty(t, logs.errors(), "a client leaving is not an error")
}

// A stop asked of one replica stops the stream another replica sends.
func TestStopAcrossReplicas(t *testing.T) {
	t.Parallel()
	client, err := llm.New(llm.Config{BaseURL: stallingLLM(t).URL + "/v1", Model: "fake"})
	require.NoError(t, err)
	logs := newLogRecords()
	b := setup(t, options{corpus: true, answerer: client, logger: slog.New(logs), listenStops: true})
	replica := b.replica(t)

	// Wait until the streaming server listens, as serve's does from start-up.
	conn := b.connect(t)
	defer conn.Close(b.ctx)
	for deadline := time.Now().Add(time.Minute); ; {
		var n int
		require.NoError(t, conn.QueryRow(b.ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'LISTEN "ragd_stop"'`).Scan(&n))
		if n > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the server never listened for stops")
		time.Sleep(20 * time.Millisecond)
	}

	events, closeStream := b.openStream(t, b.ctx, map[string]any{"message": "I smell gas after the earthquake"})
	defer closeStream()
	meta, received := untilAnswer(t, events)
	resp, body := b.doAt(t, replica.URL, "POST", "/v1/messages/"+meta.MessageID+"/stop", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	stopped := decode[message](t, body)
	require.NotNil(t, stopped.StoppedAt, "the replica asked answers once the stop is recorded")

	var last string
	for ev := range events {
		last = ev.Type
		if ev.Type == "answer" {
			received += deltaOf(t, ev)
		}
	}
	require.Equal(t, "stopped", last, "the stream on the other replica ended with stopped")
	require.Equal(t, received, stopped.Answer, "the turn is recorded with what was sent")

	// Stopping it again, at a third replica, returns it as it is.
	other := b.replica(t)
	resp, body = b.doAt(t, other.URL, "POST", "/v1/messages/"+meta.MessageID+"/stop", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "stopping a stopped answer returns it: %s", body)
	require.Empty(t, logs.errors())
}
