package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	sse "github.com/tmaxmax/go-sse"

	"github.com/ragd/ragd/llm"
)

// fakeLLM is an OpenAI-compatible chat endpoint: no LLM exists on these machines. It answers by
// citing the first marker it finds in the prompt and one it invents, a few bytes per chunk so
// markers arrive split across deltas, as real token streams split them.
func fakeLLM(t *testing.T) *httptest.Server {
	t.Helper()
	return fakeChat(t, func(w http.ResponseWriter, _ *http.Request, marker string) {
		answer := fmt.Sprintf("Leave the building [%s]. Call the gas company [ZZ99].", marker)
		for i := 0; i < len(answer); i += 4 {
			sendDelta(w, answer[i:min(i+4, len(answer))])
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
}

// fakeChat is an OpenAI-compatible streaming chat endpoint whose answer is written by answer,
// given the first citation marker of the prompt: no LLM exists on these machines.
func fakeChat(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, marker string)) *httptest.Server {
	t.Helper()
	markerRE := regexp.MustCompile(`\[([A-Z]+[0-9]+)\]`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !req.Stream || len(req.Messages) == 0 ||
			r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		m := markerRE.FindStringSubmatch(req.Messages[len(req.Messages)-1].Content)
		if m == nil {
			http.Error(w, "no facts in the prompt", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		answer(w, r, m[1])
	}))
	t.Cleanup(srv.Close)
	return srv
}

// deltaOf reads an answer event's delta.
func deltaOf(t *testing.T, ev sse.Event) string {
	t.Helper()
	var d struct {
		Delta string `json:"delta"`
	}
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &d))
	return d.Delta
}

// sendDelta writes one chunk of an OpenAI-compatible streamed chat completion.
func sendDelta(w http.ResponseWriter, content string) {
	chunk := map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": "fake",
		"choices": []map[string]any{{"index": 0, "delta": map[string]string{"content": content}}}}
	b, _ := json.Marshal(chunk)
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.(http.Flusher).Flush()
}

func TestAnswerWithLLM(t *testing.T) {
	t.Parallel()
	client, err := llm.New(llm.Config{BaseURL: fakeLLM(t).URL + "/v1", Model: "fake"})
	require.NoError(t, err)
	b := setup(t, options{corpus: true, answerer: client})

	// Streamed: deltas arrive live, the invented marker never does.
	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": "I smell gas after the earthquake"}, "Accept", "text/event-stream")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var streamed strings.Builder
	var types []string
	var meta askResponse
	var done struct {
		Answer   string   `json:"answer"`
		Phantoms []string `json:"phantom_markers"`
	}
	for ev, err := range sse.Read(bytes.NewReader(body), nil) {
		require.NoError(t, err)
		if len(types) == 0 || types[len(types)-1] != ev.Type {
			types = append(types, ev.Type)
		}
		switch ev.Type {
		case "meta":
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &meta))
		case "answer":
			var d struct {
				Delta string `json:"delta"`
			}
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &d))
			require.NotContains(t, d.Delta, "ZZ", "a phantom marker is never streamed, not even in part")
			streamed.WriteString(d.Delta)
		case "done":
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &done))
		}
	}
	require.Equal(t, []string{"meta", "source", "context", "answer", "done"}, types)
	require.Equal(t, "Leave the building [A1]. Call the gas company.", streamed.String())
	require.Equal(t, streamed.String(), done.Answer)
	require.Equal(t, []string{"ZZ99"}, done.Phantoms)

	cites := b.citationsOf(t, meta.MessageID)
	require.Contains(t, markersOf(cites), "A1", "every marker left in the answer is a citation of the message")

	// The stored answer is the cleaned one.
	resp, body = b.do(t, "GET", "/v1/conversations/"+meta.ConversationID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `"answer":"Leave the building [A1]. Call the gas company."`)
	require.NotContains(t, string(body), "ZZ99")

	// As JSON: the same answer, whole.
	resp, body = b.do(t, "POST", "/v1/ask", map[string]any{"conversation_id": meta.ConversationID, "message": "and should I shut off the gas valve?"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	r := decode[askResponse](t, body)
	require.Equal(t, []string{"ZZ99"}, r.Phantoms)
	require.NotContains(t, r.Answer, "ZZ99")
	require.Regexp(t, `^Leave the building \[[A-Z]+[0-9]+\]\. Call the gas company\.$`, r.Answer)
}

func TestAnswerFailureKeepsTheTurn(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	client, err := llm.New(llm.Config{BaseURL: down.URL + "/v1", Model: "fake"})
	require.NoError(t, err)
	b := setup(t, options{corpus: true, answerer: client})

	// JSON: the recorded turn is returned with its fact sheet, and says the LLM failed.
	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": "smoke alarms"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	r := decode[askResponse](t, body)
	require.Contains(t, r.Retrieval.Skipped["answer"], "the LLM failed")
	checkTurn(t, r)

	// Stream: the sources went out, then an error event with a problem document.
	resp, body = b.do(t, "POST", "/v1/ask", map[string]any{"message": "smoke alarms"}, "Accept", "text/event-stream")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var last sse.Event
	for ev, err := range sse.Read(bytes.NewReader(body), nil) {
		require.NoError(t, err)
		last = ev
	}
	require.Equal(t, "error", last.Type)
	require.Contains(t, last.Data, `"status":503`)
}
