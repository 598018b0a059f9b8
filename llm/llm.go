// Package llm streams an answer grounded in a turn's fact sheet from an OpenAI-compatible chat
// endpoint (OpenAI, Ollama, vLLM, llama.cpp and the like). The model is told to cite the fact
// sheet's markers; since a model may still invent markers, every delta passes through a
// MarkerFilter on its way out, so a marker that is not a citation of the turn never reaches the
// client or the stored answer.
package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ragd/ragd"
)

// Config says which chat endpoint and model answer, and how.
type Config struct {
	// BaseURL is the API root the chat completions path is appended to, for example
	// http://localhost:11434/v1 (Ollama) or https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token; it may be empty for local servers.
	APIKey string
	// Model is the model name as the endpoint knows it. Required.
	Model string
	// Timeout bounds a whole answer, streaming included.
	Timeout time.Duration
	// MaxTokens caps the answer's length in tokens.
	MaxTokens int
	// Temperature is the sampling temperature, in (0, 2]. Zero means the default: the wire format
	// omits a zero temperature, so the endpoint would use its own default (1 for OpenAI) instead of
	// zero. For near-greedy decoding use a small value such as 0.01.
	Temperature float32
}

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = 60 * time.Second
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = 512
	}
	if c.Temperature == 0 {
		// Low, for answers that stay close to the facts, but not zero, which the wire format
		// cannot carry (see Temperature).
		c.Temperature = 0.2
	}
	return c
}

// Validate checks the settings. It does not reach the endpoint.
func (c Config) Validate() error {
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return fmt.Errorf("base url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base url %q: want an http or https URL such as http://localhost:11434/v1", c.BaseURL)
	}
	if strings.TrimSpace(c.Model) == "" {
		return errors.New("model is required")
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("timeout %s must be positive", c.Timeout)
	}
	if c.MaxTokens < 1 || c.MaxTokens > 65536 {
		return fmt.Errorf("max tokens %d out of range 1..65536", c.MaxTokens)
	}
	if c.Temperature <= 0 || c.Temperature > 2 {
		return fmt.Errorf("temperature %g out of range (0, 2]", c.Temperature)
	}
	return nil
}

// Client answers questions from facts through one chat endpoint and model. It is safe for
// concurrent use.
type Client struct {
	cfg     Config
	api     *openai.Client
	request openai.ChatCompletionRequest // every setting but the messages
}

// New returns a client for cfg after filling defaults and validating it.
func New(cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	req := openai.ChatCompletionRequest{
		Model:       cfg.Model,
		MaxTokens:   cfg.MaxTokens,
		Temperature: cfg.Temperature,
		Stream:      true,
	}
	// OpenAI's reasoning models (o1, o3, gpt-5, ...) refuse max_tokens and a temperature, and
	// go-openai rejects such requests before sending them. Asking go-openai's own validator keeps
	// the list of those models in one place; local servers know max_tokens, so it stays the
	// default.
	validator := openai.NewReasoningValidator()
	if validator.Validate(req) != nil {
		req.MaxCompletionTokens, req.MaxTokens, req.Temperature = req.MaxTokens, 0, 0
		if err := validator.Validate(req); err != nil {
			return nil, fmt.Errorf("llm: model %q: %w", cfg.Model, err)
		}
	}
	return &Client{cfg: cfg, api: openai.NewClientWithConfig(oc), request: req}, nil
}

// Answer streams the model's answer to p to onDelta (see Messages for the prompt), with citation
// markers checked live: a marker that is not the marker of one of p.Facts is removed (by a MarkerFilter) before it reaches onDelta.
// It returns the full cleaned answer, which is exactly the text passed to onDelta, and the phantom
// markers it dropped, in order and deduplicated.
//
// onDelta may be nil when only the full answer is wanted. onDelta returning an error stops the
// stream, and Answer returns that error as it is. A failing endpoint (unreachable, an error
// status, a broken stream, or no complete answer within the configured Timeout) gives an error
// wrapping ragd.ErrUnavailable; ctx ending gives ctx's error. On every error the answer and
// phantoms so far are returned too, so that the caller can keep what the client has already seen.
//
// An empty question or a fact whose marker is not capital letters then digits is a caller error
// (ragd.ErrInvalid), reported before anything is sent.
func (c *Client) Answer(ctx context.Context, p Prompt, onDelta func(string) error) (answer string, phantoms []string, err error) {
	if strings.TrimSpace(p.Question) == "" {
		return "", nil, ragd.Invalidf("question", "must not be empty")
	}
	valid := make(map[string]bool, len(p.Facts))
	for i, f := range p.Facts {
		// The filter only recognizes this form, so a fact with another could never be cited.
		if !isMarker(f.Marker) {
			return "", nil, ragd.Invalidf(fmt.Sprintf("facts[%d].marker", i),
				"%q is not a citation marker (capital letters, then digits)", f.Marker)
		}
		valid[f.Marker] = true
	}
	req := c.request
	req.Messages = Messages(p)

	reqCtx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	stream, err := c.api.CreateChatCompletionStream(reqCtx, req)
	if err != nil {
		return "", nil, c.failed(ctx, reqCtx, err)
	}
	// Closing the body early is also how an onDelta error stops the model: the endpoint sees the
	// connection go and stops generating.
	defer stream.Close()

	filter := NewMarkerFilter(valid)
	var out strings.Builder
	emit := func(s string) error {
		if s == "" {
			return nil
		}
		out.WriteString(s)
		if onDelta == nil {
			return nil
		}
		return onDelta(s)
	}
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out.String(), filter.Phantoms(), c.failed(ctx, reqCtx, err)
		}
		// One choice is asked for; chunks without one (a usage chunk at the end) carry no text.
		if len(chunk.Choices) == 0 {
			continue
		}
		// A refusal is the model's answer too, sent in its own field; without it the client would
		// see nothing at all. Reasoning text (reasoning_content) is the model's scratch work, not
		// the answer, and is not passed on.
		delta := chunk.Choices[0].Delta
		if err := emit(filter.Write(delta.Content + delta.Refusal)); err != nil {
			return out.String(), filter.Phantoms(), err
		}
	}
	if err := emit(filter.Flush()); err != nil {
		return out.String(), filter.Phantoms(), err
	}
	return out.String(), filter.Phantoms(), nil
}

// failed classifies an error from the endpoint. The caller giving up is reported as such: it
// says nothing about the model. Everything else, the Timeout included, means the model cannot
// serve right now.
func (c *Client) failed(ctx, reqCtx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("llm: answer: %w", ctx.Err())
	case reqCtx.Err() != nil:
		return fmt.Errorf("llm: %w: model %q gave no complete answer within %s: %w",
			ragd.ErrUnavailable, c.cfg.Model, c.cfg.Timeout, reqCtx.Err())
	case errors.Is(err, openai.ErrChatCompletionInvalidModel):
		// Refused by go-openai before sending: a configuration error, not an outage.
		return fmt.Errorf("llm: model %q: %w", c.cfg.Model, err)
	default:
		return fmt.Errorf("llm: %w: model %q at %s: %w", ragd.ErrUnavailable, c.cfg.Model, c.cfg.BaseURL, err)
	}
}
