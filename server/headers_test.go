package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/server"
)

// Every response carries X-Content-Type-Options: nosniff, as the page's files did alone: API
// answers, errors (401, 404, 405), the spec, /metrics on the API and apart.
func TestEveryResponseIsNoSniff(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	for _, r := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/healthz", http.StatusOK},
		{"GET", "/openapi.json", http.StatusOK},
		{"GET", "/metrics", http.StatusOK},
		{"GET", "/v1/documents", http.StatusOK},
		{"GET", "/v1/nowhere", http.StatusNotFound},
		{"PUT", "/v1/documents", http.StatusMethodNotAllowed},
		{"GET", "/", http.StatusOK},
	} {
		req, err := http.NewRequestWithContext(t.Context(), r.method, b.srv.URL+r.path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, r.status, resp.StatusCode, "%s %s", r.method, r.path)
		require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), "%s %s", r.method, r.path)
	}
	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": ""})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), "an error of /v1/ask")

	srv := server.New(b.cfg, b.deps)
	t.Cleanup(srv.Close)
	rec := httptest.NewRecorder()
	srv.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"), "metrics apart")
}
