package eval

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The load keeps a connection per worker: at 8 in flight, 400 requests open about 8 connections,
// not one for most requests (the default transport keeps only two idle per host).
func TestLoadKeepsItsConnections(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"timings": [{"stage": "bm25", "ms": 1.5}, {"stage": "total", "ms": 2}]}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	qs := make([]Query, 400)
	for i := range qs {
		qs[i] = Query{ID: fmt.Sprint(i), Text: "q"}
	}
	const inFlight = 8
	r, err := Load(context.Background(), LoadConfig{URL: srv.URL, Queries: qs, Warmup: 5, Concurrency: inFlight})
	require.NoError(t, err)
	require.Equal(t, len(qs), r.Requests)
	require.LessOrEqual(t, conns.Load(), int64(2*inFlight), "connections opened for %d requests", len(qs)+5)
}

// A request over Timeout ends the run with an error rather than waiting for the server: the
// handler here never answers until the client gives up.
func TestLoadTimeoutEndsTheRun(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release: // the server need not notice the client left for Close to return
		}
	}))
	defer srv.Close()
	defer close(release)
	_, err := Load(context.Background(), LoadConfig{URL: srv.URL, Queries: []Query{{ID: "1", Text: "q"}}, Timeout: time.Millisecond})
	require.ErrorContains(t, err, "Client.Timeout exceeded")
}
