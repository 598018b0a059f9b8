package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	sse "github.com/tmaxmax/go-sse"

	"github.com/ragd/ragd/server"
)

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	req := map[string]any{"message": "smoke alarm batteries", "mode_hint": "task"}
	resp, firstBody := b.do(t, "POST", "/v1/ask", req, "Idempotency-Key", "turn-1")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", firstBody)
	require.Empty(t, resp.Header.Get("Idempotent-Replayed"))
	first := decode[askResponse](t, firstBody)
	counts := func() [2]int { return [2]int{b.count(t, "conversations"), b.count(t, "messages")} }
	before := counts()
	require.Equal(t, [2]int{1, 2}, before)

	// A retry returns the first turn, whole, and makes none.
	resp, body := b.do(t, "POST", "/v1/ask", req, "Idempotency-Key", "turn-1")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, "true", resp.Header.Get("Idempotent-Replayed"))
	require.JSONEq(t, string(firstBody), string(body), "the retry's response is the first one")
	require.Equal(t, before, counts())

	// A retry may ask for a stream: the same turn comes as events.
	resp, body = b.do(t, "POST", "/v1/ask", req, "Idempotency-Key", "turn-1", "Accept", "text/event-stream")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var types []string
	var meta askResponse
	var done struct {
		Answer string `json:"answer"`
	}
	for ev, err := range sse.Read(bytes.NewReader(body), nil) {
		require.NoError(t, err)
		types = append(types, ev.Type)
		switch ev.Type {
		case "meta":
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &meta))
		case "done":
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &done))
		}
	}
	require.Equal(t, "meta", types[0])
	require.Equal(t, "done", types[len(types)-1])
	require.Len(t, types, len(first.Sources)+3)
	require.Equal(t, first.MessageID, meta.MessageID)
	require.Equal(t, first.Answer, done.Answer)
	require.Equal(t, before, counts())

	// The same key for another request is refused and changes nothing.
	for _, other := range []map[string]any{
		{"message": "smoke alarm batteries?", "mode_hint": "task"},
		{"message": "smoke alarm batteries", "mode_hint": "debug"},
		{"message": "smoke alarm batteries", "mode_hint": "task", "conversation_id": first.ConversationID},
	} {
		resp, body = b.do(t, "POST", "/v1/ask", other, "Idempotency-Key", "turn-1")
		require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, "%s", body)
		require.Contains(t, string(body), "different request")
	}
	require.Equal(t, before, counts())

	// The deprecated name of the mode hint asks the same thing.
	resp, body = b.do(t, "POST", "/v1/ask", map[string]any{"message": "smoke alarm batteries", "intent": "task"}, "Idempotency-Key", "turn-1")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, first.MessageID, decode[askResponse](t, body).MessageID)

	// A follow-up with its own key: retried, it stays turn 2.
	follow := map[string]any{"conversation_id": first.ConversationID, "message": "how often should I test them"}
	var ids []string
	for range 2 {
		resp, body = b.do(t, "POST", "/v1/ask", follow, "Idempotency-Key", "turn-2")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		r := decode[askResponse](t, body)
		require.Equal(t, 2, r.Turn)
		ids = append(ids, r.MessageID)
	}
	require.Equal(t, ids[0], ids[1])
	require.Len(t, b.messages(t, first.ConversationID), 4)

	// Concurrent requests with one key make one turn: the others replay it or are told to wait.
	var wg sync.WaitGroup
	statuses := make([]int, 4)
	bodies := make([][]byte, 4)
	for i := range statuses {
		wg.Go(func() {
			resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": "generator indoors"}, "Idempotency-Key", "race")
			statuses[i], bodies[i] = resp.StatusCode, body
		})
	}
	wg.Wait()
	made := map[string]bool{}
	for i, st := range statuses {
		require.Contains(t, []int{http.StatusOK, http.StatusConflict}, st, "%s", bodies[i])
		if st == http.StatusOK {
			made[decode[askResponse](t, bodies[i]).MessageID] = true
		}
	}
	require.Len(t, made, 1, "one turn for one key")
	require.Equal(t, 2, b.count(t, "conversations"))

	// Malformed keys.
	for _, key := range []string{strings.Repeat("k", 256), "two words", "é"} {
		resp, body = b.do(t, "POST", "/v1/ask", req, "Idempotency-Key", key)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
		require.Contains(t, string(body), "Idempotency-Key")
	}

	// A finished answer has no stream to stop.
	resp, body = b.do(t, "POST", "/v1/messages/"+first.MessageID+"/stop", nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), "not streaming")
}

func TestCORS(t *testing.T) {
	t.Parallel()
	require.Error(t, server.Config{CORSOrigins: []string{"chat.example.com"}}.Validate())
	require.Error(t, server.Config{CORSOrigins: []string{"https://chat.example.com/app"}}.Validate())
	require.NoError(t, server.Config{CORSOrigins: []string{"https://chat.example.com", "http://localhost:3000", "*"}}.Validate())

	preflight := func(b *testBundle, origin string) *http.Response {
		req, err := http.NewRequestWithContext(b.ctx, "OPTIONS", b.srv.URL+"/v1/ask", nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type, idempotency-key, authorization")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	b := setup(t, options{cfg: server.Config{CORSOrigins: []string{"https://chat.example.com"}}})
	resp := preflight(b, "https://chat.example.com")
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Equal(t, "https://chat.example.com", resp.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), "idempotency-key")
	require.Contains(t, resp.Header.Get("Access-Control-Allow-Methods"), "PATCH")
	require.Empty(t, preflight(b, "https://evil.example.net").Header.Get("Access-Control-Allow-Origin"))
	resp, _ = b.do(t, "GET", "/v1/conversations", nil, "Origin", "https://chat.example.com")
	require.Equal(t, "https://chat.example.com", resp.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, resp.Header.Get("Access-Control-Expose-Headers"), "Idempotent-Replayed")

	off := setup(t, options{})
	require.Empty(t, preflight(off, "https://chat.example.com").Header.Get("Access-Control-Allow-Origin"), "CORS is off by default")
	resp, _ = off.do(t, "GET", "/v1/conversations", nil, "Origin", "https://chat.example.com")
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
}
