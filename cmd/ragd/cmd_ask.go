package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd/server"
)

type askCmd struct {
	Message      string        `arg:"" help:"The question."`
	URL          string        `help:"Base URL of the running server." default:"http://127.0.0.1:8080" name:"url"`
	Conversation string        `help:"Continue this conversation (its id)."`
	Key          string        `help:"API key to send as the bearer (ragd keys create); empty sends none, for a server open on loopback."`
	Wait         time.Duration `help:"Wait this long for the server to be ready." default:"0s"`
	JSON         bool          `help:"Print the response as JSON."`
}

// sharedFlags are the shared flags ask reads: only the log's, for its own errors. The others
// configure the server it asks.
func (askCmd) sharedFlags() []string { return []string{"log-level", "log-format"} }

// Run asks a running server one question and prints its answer and sources: a client for
// trying ragd from a terminal without other tools.
func (c askCmd) Run(ctx context.Context) error {
	base := strings.TrimRight(c.URL, "/")
	// The API's errors name its fields (conversation_id): check the id here, naming the flag.
	if c.Conversation != "" {
		if id, err := uuid.Parse(c.Conversation); err != nil || id == uuid.Nil {
			return fmt.Errorf("--conversation %q is not a conversation id: give the id a first `ragd ask` printed (\"conversation ID, turn 1\")", c.Conversation)
		}
	}
	if err := waitReady(ctx, base, c.Wait); err != nil {
		return err
	}
	req := map[string]any{"message": c.Message}
	if c.Conversation != "" {
		req["conversation_id"] = c.Conversation
	}
	body, _ := json.Marshal(req)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/ask", bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.Key != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.Key)
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return c.failure(resp, raw)
	}
	if c.JSON {
		_, err := os.Stdout.Write(append(raw, '\n'))
		return err
	}
	var r struct {
		ConversationID string `json:"conversation_id"`
		Turn           int    `json:"turn"`
		Answer         string `json:"answer"`
		Sources        []struct {
			Letter string `json:"letter"`
			Title  string `json:"title"`
			URL    string `json:"url"`
			Path   string `json:"path"`
			Score  float64
		} `json:"sources"`
		Timings []struct {
			Stage string  `json:"stage"`
			MS    float64 `json:"ms"`
		} `json:"timings"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	fmt.Printf("conversation %s, turn %d\n\n%s\n\nsources:\n", r.ConversationID, r.Turn, r.Answer)
	for _, s := range r.Sources {
		where := s.URL
		if where == "" {
			where = s.Path
		}
		fmt.Printf("  [%s] %s  %s\n", s.Letter, s.Title, where)
	}
	for _, t := range r.Timings {
		if t.Stage == "total" {
			fmt.Printf("\nanswered in %.1f ms\n", t.MS)
		}
	}
	return nil
}

// failure is the error of a turn the server refused: its problem's detail, with the flag to
// change when the problem is one of ask's flags (the key, the conversation).
func (c askCmd) failure(resp *http.Response, raw []byte) error {
	var p server.Problem
	if json.Unmarshal(raw, &p) != nil || p.Detail == "" {
		return fmt.Errorf("%s: %s", resp.Status, raw)
	}
	err := fmt.Errorf("%s: %s", resp.Status, p.Detail)
	switch {
	case resp.StatusCode == http.StatusUnauthorized && c.Key == "":
		return fmt.Errorf("%w; give ask a key with --key KEY (or RAGD_KEY; `ragd keys create` makes one)", err)
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%w; check --key (or RAGD_KEY)", err)
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w; --key's role may not ask (it needs chat or admin)", err)
	case resp.StatusCode == http.StatusNotFound && c.Conversation != "":
		return fmt.Errorf("%w; --conversation names no conversation of --key's tenant (deleted, or mistyped)", err)
	}
	return err
}

// waitReady polls /readyz until it answers 200 or the wait is over.
func waitReady(ctx context.Context, base string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("/readyz answered %s", resp.Status)
			}
			return fmt.Errorf("server at %s not ready: %w", base, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
