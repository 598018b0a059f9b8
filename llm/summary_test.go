package llm_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/llm"
	"github.com/ragd/ragd/token"
)

var goal = []compact.Message{
	{Turn: 1, Role: "user", Text: "A cheap Italian restaurant in the centre, please."},
	{Turn: 1, Role: "assistant", Text: "Pasta Palace. Shall I book?"},
	{Turn: 2, Role: "user", Text: "Yes, for 2 at 19:00."},
}

func completion(content string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "model": "test-model",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]string{"role": "assistant", "content": content}}}})
	}
}

// A capsule is one plain completion: the goal's messages in, the model's summary out, cut to
// the capsule's budget.
func TestSummarize(t *testing.T) {
	t.Parallel()
	summary := "A cheap Italian restaurant in the centre.\nsettled: name=Pasta Palace; people=2; time=19:00; status=booked"
	srv, reqs := endpoint(t, completion("  "+summary+"\n"))
	c := newClient(t, llm.Config{BaseURL: srv.URL + "/v1"})

	got, err := c.Summarize(context.Background(), goal, 100)
	require.NoError(t, err)
	require.Equal(t, summary, got)
	req := <-reqs
	require.Equal(t, "/v1/chat/completions", req.path)
	require.Equal(t, false, req.fields["stream"], "a summary is not streamed")
	require.EqualValues(t, 100, req.fields["max_tokens"])
	require.Equal(t, llm.SummaryMessages(goal), req.body.Messages)
	require.Contains(t, req.body.Messages[1].Content, "[turn 2] user: Yes, for 2 at 19:00.")

	got, err = c.Summarize(context.Background(), goal, 5)
	require.NoError(t, err)
	require.LessOrEqual(t, token.Count(got), 5, "cut to the budget")
	require.True(t, strings.HasPrefix(summary, got))
}

func TestSummarizeFailures(t *testing.T) {
	t.Parallel()
	down, _ := endpoint(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	})
	_, err := newClient(t, llm.Config{BaseURL: down.URL + "/v1"}).Summarize(context.Background(), goal, 100)
	require.ErrorIs(t, err, ragd.ErrUnavailable)

	empty, _ := endpoint(t, completion("   "))
	_, err = newClient(t, llm.Config{BaseURL: empty.URL + "/v1"}).Summarize(context.Background(), goal, 100)
	require.ErrorContains(t, err, "empty")
}
