package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/server"
)

// With MetricsApart the API has no /metrics (it needs no key and names every tenant), and
// Metrics serves the API's own series for a listener apart from it.
func TestMetricsApart(t *testing.T) {
	b := setup(t, options{cfg: server.Config{MetricsApart: true}})
	resp, _ := b.do(t, "GET", "/healthz", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = b.do(t, "GET", "/metrics", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "no /metrics on the API")

	srv := server.New(b.cfg, b.deps)
	t.Cleanup(srv.Close)
	apart := httptest.NewServer(srv.Metrics())
	t.Cleanup(apart.Close)
	api := httptest.NewServer(srv.Handler())
	t.Cleanup(api.Close)
	resp, err := http.Get(api.URL + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	resp, err = http.Get(apart.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `ragd_http_request_duration_seconds_count{method="GET",route="/healthz",status="200"} 1`,
		"the API's requests, counted in the registry Metrics serves")
	require.Contains(t, string(body), "ragd_bm25_open_tenant_indexes", "the server's gauges")
	require.NotContains(t, string(body), `route="/metrics"`, "a scrape is not an API request")
}
