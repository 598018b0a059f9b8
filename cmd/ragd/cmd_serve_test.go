package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/dbtest"
)

// A taken port is reported at once, naming the flag, before the database or a model is opened.
func TestServeReportsATakenPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	addr := taken.Addr().String()

	a, err := serveWithoutDatabase(t, "--listen", addr)
	require.ErrorIs(t, err, syscall.EADDRINUSE)
	require.ErrorContains(t, err, "--listen "+addr)
	require.Nil(t, a.store, "the store is not opened when the port is taken")
}

// serveWithoutDatabase runs `ragd serve` with args and a database URL that cannot work
// (reaching it would be a different error), for the errors found before the database is opened.
func serveWithoutDatabase(t *testing.T, args ...string) (*app, error) {
	t.Helper()
	cli, err := parse(t, nil, append([]string{"serve", "--data-dir", t.TempDir(), "--database-url", "postgres://ragd@/ragd?host=/nonexistent"}, args...)...)
	require.NoError(t, err)
	a := newApp(&cli.Config, slog.New(slog.DiscardHandler))
	t.Cleanup(a.close)
	return a, cli.Serve.Run(t.Context(), a)
}

// startServe runs cli's `ragd serve` in this process and returns once /readyz answers at addr,
// with the lines it logs (each also passed to the test's output) and stop, which stops it and
// waits for it to return. stop runs again, harmlessly, when the test ends, before the app closes
// (the store's close waits for the server's connections).
func startServe(t *testing.T, cli *CLI, addr string) (lines <-chan string, stop func()) {
	t.Helper()
	logs := logLines{out: t.Output(), lines: make(chan string, 1000)}
	a := newApp(&cli.Config, slog.New(slog.NewTextHandler(logs, nil)))
	t.Cleanup(a.close)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- cli.Serve.Run(ctx, a) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(stop)
	require.NoError(t, waitReady(t.Context(), "http://"+addr, time.Minute))
	return logs.lines, stop
}

// A server that was asked to stop returns and lets go of everything it opened: the store's
// close waits for every pooled connection, so a background worker still holding one would hang
// here (the test's deadline catches that).
func TestServeStopsCleanly(t *testing.T) {
	addr, cli := serveOnNewDatabase(t)
	a := newApp(&cli.Config, slog.New(slog.NewTextHandler(t.Output(), nil)))

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- cli.Serve.Run(ctx, a) }()
	require.NoError(t, waitReady(t.Context(), "http://"+addr, time.Minute))
	resp, err := http.Get(fmt.Sprintf("http://%s/healthz", addr))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	cancel()
	require.NoError(t, <-done)
	a.close()
	_, err = net.Dial("tcp", addr)
	require.Error(t, err, "the port is released")
}

// freeAddr returns a loopback address no one listens on, for a server to start on.
func freeAddr(t *testing.T) string {
	t.Helper()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, free.Close())
	return free.Addr().String()
}

// serveOnNewDatabase parses `ragd serve` on a free loopback address and a fresh migrated
// database, which it reaches as the application login; it returns the address.
func serveOnNewDatabase(t *testing.T) (string, *CLI) {
	t.Helper()
	addr := freeAddr(t)
	url := dbtest.NewDatabase(t)
	cli, err := parse(t, nil, "serve", "--listen", addr, "--data-dir", t.TempDir(),
		"--database-url", dbtest.AppURL(t, url), "--migrate-database-url", url)
	require.NoError(t, err)
	return addr, cli
}

// A login that could get past row-level security is refused, naming the flag that accepts it.
func TestServeRefusesAPrivilegedLogin(t *testing.T) {
	url := dbtest.NewDatabase(t)
	cli, err := parse(t, nil, "serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--database-url", url)
	require.NoError(t, err)
	a := newApp(&cli.Config, slog.New(slog.NewTextHandler(t.Output(), nil)))
	defer a.close()
	err = cli.Serve.Run(t.Context(), a)
	require.ErrorContains(t, err, "is a superuser")
	require.ErrorContains(t, err, "--insecure-db-login")
	require.ErrorContains(t, err, "--migrate-database-url")
}

// On an address other than loopback, serve refuses to start while no key exists (anyone who
// reaches it would be every tenant's admin), naming the value the user gave and the way out.
func TestServeRefusesAnOpenNonLoopbackAddress(t *testing.T) {
	url := dbtest.NewDatabase(t)
	cli, err := parse(t, nil, "serve", "--listen", "0.0.0.0:0", "--data-dir", t.TempDir(),
		"--database-url", dbtest.AppURL(t, url), "--migrate-database-url", url)
	require.NoError(t, err)
	a := newApp(&cli.Config, slog.New(slog.DiscardHandler))
	defer a.close()
	err = cli.Serve.Run(t.Context(), a)
	require.ErrorContains(t, err, "--listen 0.0.0.0:0 is not a loopback address and no API key exists")
	require.ErrorContains(t, err, "--insecure")
}

// /metrics needs no key and names every tenant with its drift and error rates, so serve puts it
// on the API's address only while that is loopback; --metrics-listen serves it alone on an
// address of its own, off nowhere. Each case is a real server, one after another on one database.
func TestServeMetricsWhere(t *testing.T) {
	url := dbtest.NewDatabase(t)
	appURL := dbtest.AppURL(t, url)
	for _, tc := range []struct {
		name string
		// everywhere listens on 0.0.0.0 (every address, so not loopback only), else on 127.0.0.1.
		everywhere bool
		args       []string
		apart      bool // --metrics-listen a free address
		onAPI      bool // /metrics answers on the API's address
		log        string
	}{
		{name: "loopback API, default", onAPI: true},
		{name: "non-loopback API, default", everywhere: true, args: []string{"--insecure"},
			log: "/metrics is not served: the API listens on a non-loopback address"},
		{name: "loopback API, its own address", apart: true, log: "metrics served"},
		{name: "non-loopback API, its own address", everywhere: true, args: []string{"--insecure"}, apart: true, log: "metrics served"},
		{name: "off", args: []string{"--metrics-listen", "off"}, log: "metrics served nowhere (--metrics-listen off)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := freeAddr(t) // 127.0.0.1:PORT, which a server on 0.0.0.0:PORT answers too
			listen := api
			if tc.everywhere {
				_, port, err := net.SplitHostPort(api)
				require.NoError(t, err)
				listen = "0.0.0.0:" + port
			}
			args := append([]string{"serve", "--listen", listen, "--data-dir", t.TempDir(),
				"--database-url", appURL, "--migrate-database-url", url}, tc.args...)
			var apart string
			if tc.apart {
				apart = freeAddr(t)
				args = append(args, "--metrics-listen", apart)
			}
			cli, err := parse(t, nil, args...)
			require.NoError(t, err)
			lines, stop := startServe(t, cli, api)
			require.Equal(t, http.StatusOK, statusOf(t, "http://"+api+"/healthz"))

			var log strings.Builder
			for len(lines) > 0 { // what serve logged before it was ready
				log.WriteString(<-lines)
			}
			if tc.log != "" {
				require.Contains(t, log.String(), tc.log)
			}
			if tc.onAPI || tc.apart {
				require.NotContains(t, log.String(), "/metrics is not served")
			}
			if strings.Contains(tc.log, "not served") {
				require.Contains(t, log.String(), "--metrics-listen", "the line says how to serve it")
			}

			want := http.StatusNotFound
			if tc.onAPI {
				want = http.StatusOK
			}
			require.Equal(t, want, statusOf(t, "http://"+api+"/metrics"), "/metrics on the API's address")
			if tc.apart {
				body := get(t, "http://"+apart+"/metrics")
				require.Contains(t, body, `ragd_http_request_duration_seconds_count{method="GET",route="/healthz",status="200"}`,
					"the API's own series, from its registry")
				require.Equal(t, http.StatusNotFound, statusOf(t, "http://"+apart+"/healthz"), "/metrics alone: not the API")
				require.Equal(t, http.StatusNotFound, statusOf(t, "http://"+apart+"/v1/conversations"))
			}

			stop()
			if tc.apart {
				_, err := net.Dial("tcp", apart)
				require.Error(t, err, "the metrics listener stops with the server")
			}
		})
	}
}

// testClient gives up on a server that accepts a connection and never answers (no timing is
// asserted: a minute is only there so that such a server fails the test rather than hangs it).
var testClient = &http.Client{Timeout: time.Minute}

// statusOf is the status of a GET of u.
func statusOf(t *testing.T, u string) int {
	t.Helper()
	resp, err := testClient.Get(u)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// get is the body of a GET of u, which must answer 200.
func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := testClient.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	return string(body)
}

// A --metrics-listen that cannot work stops serve at once, naming the flag, before the database
// or a model is opened.
func TestServeRefusesABadMetricsAddress(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	api := freeAddr(t)
	_, port, err := net.SplitHostPort(api)
	require.NoError(t, err)
	for _, tc := range []struct {
		listen, metrics string
		want            string
	}{
		{api, "9090", `--metrics-listen "9090": want HOST:PORT`},
		{api, "0", `--metrics-listen "0": want HOST:PORT (like 127.0.0.1:9090), or off to serve /metrics nowhere`},
		{api, "OFF", `--metrics-listen "OFF": want HOST:PORT`},
		{api, "127.0.0.1:http-alt-nope", "--metrics-listen 127.0.0.1:http-alt-nope: "},
		{api, taken.Addr().String(), "--metrics-listen " + taken.Addr().String() + ": "},
		{api, api, "--metrics-listen " + api + " is the API's address (--listen " + api + ")"},
		{"0.0.0.0:" + port, api, "--metrics-listen " + api + " is the API's address (--listen 0.0.0.0:" + port + ")"},
		{api, ":" + port, "--metrics-listen :" + port + " is the API's address"},
	} {
		t.Run(tc.metrics, func(t *testing.T) {
			a, err := serveWithoutDatabase(t, "--listen", tc.listen, "--metrics-listen", tc.metrics)
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, a.store, "the store is not opened")
			if tc.metrics == taken.Addr().String() {
				require.ErrorIs(t, err, syscall.EADDRINUSE)
			}
			_, err = net.Dial("tcp", api)
			require.Error(t, err, "the API's port is let go")
		})
	}
}

// --ingest-in-request: a negative number stops serve naming the flag; 0 is server.Config's no
// bound, not its default.
func TestServeIngestInRequest(t *testing.T) {
	_, err := serveWithoutDatabase(t, "--listen", freeAddr(t), "--ingest-in-request", "-1")
	require.ErrorContains(t, err, "--ingest-in-request must be 0 (no bound) or more, got -1")
	for flag, want := range map[string]int{"": 4, "0": -1, "1": 1} {
		args := []string{"serve"}
		if flag != "" {
			args = append(args, "--ingest-in-request", flag)
		}
		cli, err := parse(t, nil, args...)
		require.NoError(t, err)
		require.Equal(t, want, cli.Serve.ingestInRequest(), "--ingest-in-request %q", flag)
	}
}
