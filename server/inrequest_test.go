package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/server"
)

// Document posts worked on inside their requests are bounded (each may hold 64 MiB): with two
// URL ingests held mid-fetch by the page's own server, a third post is a 503 with Retry-After at
// once and stores nothing; once one of the two has its answer, a post is taken again.
func TestIngestsInRequestsAreBounded(t *testing.T) {
	t.Parallel()
	b, release, answers := holdTwoFetches(t, 2)
	upload := map[string]any{"text": "How to keep a smoke alarm's battery fresh.", "title": "Third post", "format": "text"}
	resp, body := b.do(t, "POST", "/v1/documents", upload)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	require.Equal(t, "2", resp.Header.Get("Retry-After"))
	require.Contains(t, string(body), "ragd is busy: 2 documents are being ingested inside their requests (--ingest-in-request); retry later",
		"says what is full, not that a dependency is down")
	resp, body = b.do(t, "GET", "/v1/documents?q=Third", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.JSONEq(t, `{"documents":[]}`, string(body), "the refused post stored nothing")

	// One held post ends: its slot is free by the time its client has the answer.
	release()
	a := <-answers
	require.NoError(t, a.err)
	require.Equal(t, http.StatusCreated, a.status)
	resp, body = b.do(t, "POST", "/v1/documents", upload)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	release()
	a = <-answers
	require.NoError(t, a.err)
	require.Equal(t, http.StatusCreated, a.status)
}

// A negative IngestInRequest (`ragd serve --ingest-in-request 0`) bounds nothing.
func TestIngestsInRequestsUnbounded(t *testing.T) {
	t.Parallel()
	b, release, answers := holdTwoFetches(t, -1)
	resp, body := b.do(t, "POST", "/v1/documents", map[string]any{"text": "How to keep a smoke alarm's battery fresh.", "format": "text"})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	for range 2 {
		release()
		a := <-answers
		require.NoError(t, a.err)
		require.Equal(t, http.StatusCreated, a.status)
	}
}

type postAnswer struct {
	status int
	err    error
}

// holdTwoFetches serves a server with IngestInRequest n and returns once two posts of URLs are
// inside their requests, held by the page's server until release is called (once for each).
func holdTwoFetches(t *testing.T, n int) (b *testBundle, release func(), answers <-chan postAnswer) {
	t.Helper()
	arrived := make(chan string)
	next := make(chan struct{})
	done := make(chan struct{})
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.URL.Path
		select {
		case <-next:
		case <-done:
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "The page %s says how to store rainwater in barrels.", r.URL.Path)
	}))
	t.Cleanup(page.Close)
	b = setup(t, options{cfg: server.Config{IngestInRequest: n,
		Fetcher: ingest.FetchConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}.Client()}})
	// Cleanups run last first: the held pages are let go before ragd's server closes (Close
	// waits for the posts in flight, which wait for their pages), and that before the page's.
	t.Cleanup(func() { close(done) })

	// The held posts run on goroutines of their own (require is for the test's goroutine).
	out := make(chan postAnswer, 2)
	for _, path := range []string{"/a", "/b"} {
		go func() {
			raw, _ := json.Marshal(map[string]string{"url": page.URL + path})
			resp, err := http.Post(b.srv.URL+"/v1/documents", "application/json", bytes.NewReader(raw))
			if err != nil {
				out <- postAnswer{err: err}
				return
			}
			resp.Body.Close()
			out <- postAnswer{status: resp.StatusCode}
		}()
	}
	held := map[string]bool{}
	for len(held) < 2 {
		select {
		case p := <-arrived:
			held[p] = true
		case a := <-out:
			t.Fatalf("a post answered (%d, %v) before its page was served", a.status, a.err)
		}
	}
	return b, func() { next <- struct{}{} }, out
}
