package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/llm"
)

var (
	question = "What colour are the sky and the grass?"
	facts    = []llm.Fact{
		{Marker: "A1", Text: "The sky is blue.", Source: "Weather report, 2024-05-01"},
		{Marker: "B1", Text: "Grass is green.", Source: "Garden guide"},
	}
)

// request is one request as the fake endpoint received it.
type request struct {
	path   string
	auth   string
	body   openai.ChatCompletionRequest
	fields map[string]any // the body's top-level JSON fields, to see what was left out
}

// endpoint starts a fake OpenAI-compatible chat endpoint. It records every request, then lets
// serve answer it.
func endpoint(t *testing.T, serve http.HandlerFunc) (*httptest.Server, <-chan request) {
	t.Helper()
	reqs := make(chan request, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read request: %v", err)
			return
		}
		req := request{path: r.URL.Path, auth: r.Header.Get("Authorization")}
		if err := json.Unmarshal(raw, &req.body); err != nil {
			t.Errorf("decode request: %v", err)
		}
		if err := json.Unmarshal(raw, &req.fields); err != nil {
			t.Errorf("decode request: %v", err)
		}
		reqs <- req
		serve(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, reqs
}

// stream writes a streamed chat completion the way OpenAI does: server-sent events whose data is
// a chat.completion.chunk, each followed by a blank line, ending with "data: [DONE]".
type stream struct {
	w http.ResponseWriter
}

func startStream(w http.ResponseWriter) *stream {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &stream{w: w}
	s.chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	return s
}

func (s *stream) chunk(delta map[string]any, finish any) {
	b, _ := json.Marshal(map[string]any{
		"id":                 "chatcmpl-test",
		"object":             "chat.completion.chunk",
		"created":            1717000000,
		"model":              "test-model",
		"system_fingerprint": "fp_test",
		"choices": []map[string]any{
			{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish},
		},
	})
	s.data(string(b))
}

func (s *stream) content(text string) { s.chunk(map[string]any{"content": text}, nil) }

func (s *stream) data(payload string) {
	fmt.Fprintf(s.w, "data: %s\n\n", payload)
	s.w.(http.Flusher).Flush()
}

func (s *stream) done() {
	s.chunk(map[string]any{}, "stop")
	s.data("[DONE]")
}

// streamAll answers with deltas as one complete stream.
func streamAll(deltas ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := startStream(w)
		for _, d := range deltas {
			s.content(d)
		}
		s.done()
	}
}

// hang blocks until the client goes away (or a safety limit passes).
func hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

func newClient(t *testing.T, cfg llm.Config) *llm.Client {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	c, err := llm.New(cfg)
	require.NoError(t, err)
	return c
}

// The answer streams through live, phantom markers never reach onDelta, and the request carries
// the configuration and the prompt.
func TestAnswer(t *testing.T) {
	t.Parallel()

	// The endpoint holds the end of the answer back until onDelta has seen its beginning, so the
	// test only passes if deltas are passed on as they arrive.
	seenStart := make(chan struct{})
	srv, reqs := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		s := startStream(w)
		for _, d := range []string{"The sky is blue [A", "1]. Grass is", " purple [X"} {
			s.content(d)
		}
		select {
		case <-seenStart:
		case <-time.After(5 * time.Second):
			t.Error("onDelta did not get the start of the answer while the stream was open")
			return
		}
		for _, d := range []string{"9][B1", ", Y7]. Water [X9] is wet."} {
			s.content(d)
		}
		s.done()
	})
	c := newClient(t, llm.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})

	var deltas []string
	var once sync.Once
	answer, phantoms, err := c.Answer(context.Background(), llm.Prompt{Question: question, Facts: facts}, func(d string) error {
		deltas = append(deltas, d)
		if strings.Contains(strings.Join(deltas, ""), "[A1]") {
			once.Do(func() { close(seenStart) })
		}
		return nil
	})
	require.NoError(t, err)

	want := "The sky is blue [A1]. Grass is purple [B1]. Water is wet."
	require.Equal(t, want, answer)
	require.Equal(t, []string{"X9", "Y7"}, phantoms)
	require.Equal(t, answer, strings.Join(deltas, ""), "the answer is what onDelta got")
	require.Greater(t, len(deltas), 2)
	for _, d := range deltas {
		require.NotContains(t, d, "X9")
		require.NotContains(t, d, "Y7")
	}

	req := <-reqs
	require.Equal(t, "/v1/chat/completions", req.path)
	require.Equal(t, "Bearer sk-test", req.auth)
	require.Equal(t, "test-model", req.body.Model)
	require.True(t, req.body.Stream)
	require.Equal(t, 512, req.body.MaxTokens)
	require.Equal(t, float32(0.2), req.body.Temperature)
	require.Equal(t, llm.Messages(llm.Prompt{Question: question, Facts: facts}), req.body.Messages)
	require.Contains(t, req.body.Messages[1].Content, "[A1] (Weather report, 2024-05-01) The sky is blue.")
	require.Contains(t, req.body.Messages[1].Content, "[B1] (Garden guide) Grass is green.")
	require.Contains(t, req.body.Messages[1].Content, question)
}

func TestAnswerRequest(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		cfg   llm.Config
		check func(t *testing.T, req request)
	}{
		{
			name: "APIKeySent",
			cfg:  llm.Config{APIKey: "sk-test"},
			check: func(t *testing.T, req request) {
				require.Equal(t, "Bearer sk-test", req.auth)
			},
		},
		{
			name: "NoAPIKeyNoHeader",
			cfg:  llm.Config{},
			check: func(t *testing.T, req request) {
				require.Empty(t, req.auth)
			},
		},
		{
			name: "Settings",
			cfg:  llm.Config{Model: "llama3.2", MaxTokens: 64, Temperature: 0.7},
			check: func(t *testing.T, req request) {
				require.Equal(t, "llama3.2", req.body.Model)
				require.Equal(t, 64, req.body.MaxTokens)
				require.Equal(t, float32(0.7), req.body.Temperature)
			},
		},
		{
			// go-openai refuses max_tokens and a temperature for reasoning models, so they get
			// max_completion_tokens and the endpoint's temperature.
			name: "ReasoningModel",
			cfg:  llm.Config{Model: "o3-mini"},
			check: func(t *testing.T, req request) {
				require.Equal(t, "o3-mini", req.body.Model)
				require.Equal(t, 512, req.body.MaxCompletionTokens)
				require.NotContains(t, req.fields, "max_tokens")
				require.NotContains(t, req.fields, "temperature")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			srv, reqs := endpoint(t, streamAll("Blue [A1]."))
			tt.cfg.BaseURL = srv.URL + "/v1"
			c := newClient(t, tt.cfg)
			answer, _, err := c.Answer(context.Background(), llm.Prompt{Question: question, Facts: facts}, nil) // only the answer
			require.NoError(t, err)
			require.Equal(t, "Blue [A1].", answer)
			req := <-reqs
			require.True(t, req.body.Stream)
			tt.check(t, req)
		})
	}
}

// Whatever goes wrong at the endpoint, the caller gets ragd.ErrUnavailable, and keeps what the
// client has already been sent.
func TestAnswerEndpointFails(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name       string
		serve      http.HandlerFunc
		closed     bool // the endpoint is gone before the request
		wantAnswer string
		check      func(t *testing.T, err error)
	}{
		{
			name: "ServerError",
			serve: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprint(w, `{"error":{"message":"boom","type":"server_error","code":null}}`)
			},
			check: func(t *testing.T, err error) {
				var apiErr *openai.APIError
				require.ErrorAs(t, err, &apiErr)
				require.Equal(t, http.StatusInternalServerError, apiErr.HTTPStatusCode)
				require.ErrorContains(t, err, "boom")
			},
		},
		{
			name: "ServerErrorNotJSON",
			serve: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "internal error", http.StatusInternalServerError)
			},
			check: func(t *testing.T, err error) {
				var reqErr *openai.RequestError
				require.ErrorAs(t, err, &reqErr)
				require.Equal(t, http.StatusInternalServerError, reqErr.HTTPStatusCode)
			},
		},
		{
			name: "Unauthorized",
			serve: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
			},
			check: func(t *testing.T, err error) { require.ErrorContains(t, err, "Incorrect API key") },
		},
		{
			name: "ErrorInStream",
			serve: func(w http.ResponseWriter, r *http.Request) {
				s := startStream(w)
				s.content("Partial [A1]")
				s.data(`{"error":{"message":"overloaded","type":"server_error"}}`)
			},
			wantAnswer: "Partial [A1]",
			check:      func(t *testing.T, err error) { require.ErrorContains(t, err, "overloaded") },
		},
		{
			name:   "Unreachable",
			closed: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			srv, _ := endpoint(t, tt.serve)
			if tt.closed {
				srv.Close()
			}
			c := newClient(t, llm.Config{BaseURL: srv.URL + "/v1"})
			answer, _, err := c.Answer(context.Background(), llm.Prompt{Question: question, Facts: facts}, func(string) error { return nil })
			require.ErrorIs(t, err, ragd.ErrUnavailable)
			require.Equal(t, tt.wantAnswer, answer)
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}

// A hanging endpoint cannot hold a turn beyond the caller's deadline or the configured Timeout.
// The caller's own deadline is reported as such; the Timeout means the model is unavailable.
func TestAnswerDeadline(t *testing.T) {
	t.Parallel()

	beforeHeaders := func(w http.ResponseWriter, r *http.Request) { hang(r) }
	midStream := func(w http.ResponseWriter, r *http.Request) {
		startStream(w).content("Partial answer")
		hang(r)
	}
	tests := []struct {
		name            string
		serve           http.HandlerFunc
		callerTimeout   time.Duration
		configTimeout   time.Duration
		wantUnavailable bool
		wantAnswer      string
	}{
		// Mid-stream cases allow three seconds, so that the first delta surely arrives before the
		// deadline even on a loaded machine.
		{name: "CallerBeforeHeaders", serve: beforeHeaders, callerTimeout: 100 * time.Millisecond},
		{name: "CallerMidStream", serve: midStream, callerTimeout: 3 * time.Second, wantAnswer: "Partial answer"},
		{name: "TimeoutBeforeHeaders", serve: beforeHeaders, configTimeout: 100 * time.Millisecond, wantUnavailable: true},
		{name: "TimeoutMidStream", serve: midStream, configTimeout: 3 * time.Second, wantUnavailable: true,
			wantAnswer: "Partial answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			srv, _ := endpoint(t, tt.serve)
			c := newClient(t, llm.Config{BaseURL: srv.URL + "/v1", Timeout: tt.configTimeout})
			ctx := context.Background()
			if tt.callerTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.callerTimeout)
				defer cancel()
			}

			// A client that ignored the deadline would hang here on the endpoint that never
			// answers, and go test's own timeout would report it.
			answer, _, err := c.Answer(ctx, llm.Prompt{Question: question, Facts: facts}, func(string) error { return nil })
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Equal(t, tt.wantUnavailable, errors.Is(err, ragd.ErrUnavailable))
			require.Equal(t, tt.wantAnswer, answer)
		})
	}
}

// An onDelta error (the client went away, say) stops the stream: no more deltas, the error comes
// back as it is, and the endpoint sees the connection close, so it can stop generating.
func TestAnswerStopsOnDeltaError(t *testing.T) {
	t.Parallel()

	closed := make(chan bool, 1)
	srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		s := startStream(w)
		s.content("First part.")
		select {
		case <-r.Context().Done():
			closed <- true
		case <-time.After(5 * time.Second):
			closed <- false
			s.content(" Second part.")
			s.done()
		}
	})
	c := newClient(t, llm.Config{BaseURL: srv.URL + "/v1"})

	errGone := errors.New("client went away")
	calls := 0
	answer, _, err := c.Answer(context.Background(), llm.Prompt{Question: question, Facts: facts}, func(string) error {
		calls++
		return errGone
	})
	require.ErrorIs(t, err, errGone)
	require.NotErrorIs(t, err, ragd.ErrUnavailable)
	require.Equal(t, 1, calls)
	require.Equal(t, "First part.", answer)
	require.True(t, <-closed, "the endpoint's connection was closed")
}

// Bad input is refused before anything is sent.
func TestAnswerInvalidInput(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		question string
		facts    []llm.Fact
	}{
		{name: "EmptyQuestion", question: "", facts: facts},
		{name: "BlankQuestion", question: " \n\t", facts: facts},
		{name: "LowerCaseMarker", question: question, facts: []llm.Fact{{Marker: "a1", Text: "x"}}},
		{name: "BracketedMarker", question: question, facts: []llm.Fact{{Marker: "[A1]", Text: "x"}}},
		{name: "EmptyMarker", question: question, facts: []llm.Fact{{Marker: "", Text: "x"}}},
		{name: "DigitsFirstMarker", question: question, facts: []llm.Fact{{Marker: "1A", Text: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			srv, reqs := endpoint(t, streamAll("unused"))
			c := newClient(t, llm.Config{BaseURL: srv.URL + "/v1"})
			_, _, err := c.Answer(context.Background(), llm.Prompt{Question: tt.question, Facts: tt.facts}, func(string) error { return nil })
			require.ErrorIs(t, err, ragd.ErrInvalid)
			require.Empty(t, reqs)
		})
	}
}

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		cfg  llm.Config
		want llm.Config
	}{
		{
			name: "Zero",
			cfg:  llm.Config{},
			want: llm.Config{Timeout: 60 * time.Second, MaxTokens: 512, Temperature: 0.2},
		},
		{
			name: "SetKept",
			cfg:  llm.Config{BaseURL: "http://x/v1", Model: "m", Timeout: time.Second, MaxTokens: 9, Temperature: 1},
			want: llm.Config{BaseURL: "http://x/v1", Model: "m", Timeout: time.Second, MaxTokens: 9, Temperature: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, tt.cfg.WithDefaults())
		})
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()

	ok := llm.Config{BaseURL: "http://localhost:11434/v1", Model: "llama3.2"}.WithDefaults()
	with := func(change func(c *llm.Config)) llm.Config {
		c := ok
		change(&c)
		return c
	}
	tests := []struct {
		name    string
		cfg     llm.Config
		wantErr string // empty: valid
	}{
		{name: "Ollama", cfg: ok},
		{name: "OpenAI", cfg: with(func(c *llm.Config) { c.BaseURL, c.APIKey = "https://api.openai.com/v1", "sk-x" })},
		{name: "TemperatureTwo", cfg: with(func(c *llm.Config) { c.Temperature = 2 })},
		{name: "NoBaseURL", cfg: with(func(c *llm.Config) { c.BaseURL = "" }), wantErr: "base url"},
		{name: "NoScheme", cfg: with(func(c *llm.Config) { c.BaseURL = "localhost:11434/v1" }), wantErr: "base url"},
		{name: "NotHTTP", cfg: with(func(c *llm.Config) { c.BaseURL = "ftp://example.com/v1" }), wantErr: "base url"},
		{name: "NoHost", cfg: with(func(c *llm.Config) { c.BaseURL = "http:///v1" }), wantErr: "base url"},
		{name: "Unparsable", cfg: with(func(c *llm.Config) { c.BaseURL = "http://[::1" }), wantErr: "base url"},
		{name: "NoModel", cfg: with(func(c *llm.Config) { c.Model = "" }), wantErr: "model is required"},
		{name: "BlankModel", cfg: with(func(c *llm.Config) { c.Model = "  " }), wantErr: "model is required"},
		{name: "ZeroTimeout", cfg: with(func(c *llm.Config) { c.Timeout = 0 }), wantErr: "timeout"},
		{name: "NegativeTimeout", cfg: with(func(c *llm.Config) { c.Timeout = -time.Second }), wantErr: "timeout"},
		{name: "ZeroMaxTokens", cfg: with(func(c *llm.Config) { c.MaxTokens = 0 }), wantErr: "max tokens"},
		{name: "HugeMaxTokens", cfg: with(func(c *llm.Config) { c.MaxTokens = 1 << 20 }), wantErr: "max tokens"},
		{name: "NegativeTemperature", cfg: with(func(c *llm.Config) { c.Temperature = -0.1 }), wantErr: "temperature"},
		{name: "HighTemperature", cfg: with(func(c *llm.Config) { c.Temperature = 2.5 }), wantErr: "temperature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestNew(t *testing.T) {
	t.Parallel()

	_, err := llm.New(llm.Config{BaseURL: "http://localhost:11434/v1"})
	require.ErrorContains(t, err, "llm: model is required")

	c, err := llm.New(llm.Config{BaseURL: "http://localhost:11434/v1", Model: "llama3.2"})
	require.NoError(t, err)
	require.NotNil(t, c)
}

func TestMessages(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		question string
		facts    []llm.Fact
		wantUser string
	}{
		{
			name:     "Facts",
			question: "  What colour is the sky?\n",
			facts: []llm.Fact{
				{Marker: "A1", Text: "The sky is\nblue.", Source: "Weather report, 2024-05-01"},
				{Marker: "AB12", Text: "  Grass is green. ", Source: ""},
			},
			wantUser: "Facts:\n" +
				"[A1] (Weather report, 2024-05-01) The sky is blue.\n" +
				"[AB12] Grass is green.\n" +
				"\nQuestion: What colour is the sky?",
		},
		{
			name:     "NoFacts",
			question: "Why?",
			wantUser: "Facts:\n(none)\n\nQuestion: Why?",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			msgs := llm.Messages(llm.Prompt{Question: tt.question, Facts: tt.facts})
			require.Len(t, msgs, 2)
			require.Equal(t, openai.ChatMessageRoleSystem, msgs[0].Role)
			for _, rule := range []string{"only", "[A1]", "Never invent markers", "do not answer"} {
				require.Contains(t, msgs[0].Content, rule)
			}
			require.Equal(t, openai.ChatMessageRoleUser, msgs[1].Role)
			require.Equal(t, tt.wantUser, msgs[1].Content)
			require.Equal(t, msgs, llm.Messages(llm.Prompt{Question: tt.question, Facts: tt.facts}), "deterministic")
		})
	}
}

// With the turn's context bundle, the system message carries the conversation (its rules
// first) and the user message the bundle's evidence instead of the bare fact list.
func TestMessagesWithContext(t *testing.T) {
	t.Parallel()
	p := llm.Prompt{Question: "and the taxi?", Facts: []llm.Fact{{Marker: "A1", Text: "Taxis wait outside."}},
		Context:  "## rules\n- [hard_constraint] We must not sit near the kitchen\n\n## capsules\n- goal (turns 1-2): table for 2",
		Evidence: "[A1] Taxis wait outside. (City guide, 2024-05-01)\n[A1] passage (City guide, 2024-05-01):\nTaxis wait outside the station."}
	msgs := llm.Messages(p)
	require.Len(t, msgs, 2)
	require.Contains(t, msgs[0].Content, "Never invent markers")
	require.Contains(t, msgs[0].Content, "- [hard_constraint] We must not sit near the kitchen")
	require.Contains(t, msgs[0].Content, "goal (turns 1-2): table for 2")
	require.True(t, strings.HasPrefix(msgs[1].Content, "Evidence:\n[A1] Taxis wait outside."), msgs[1].Content)
	require.True(t, strings.HasSuffix(msgs[1].Content, "\nQuestion: and the taxi?"), msgs[1].Content)
	require.NotContains(t, msgs[1].Content, "Facts:")
	require.Equal(t, msgs, llm.Messages(p), "deterministic")
}
