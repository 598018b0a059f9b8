package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
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

	// A database URL that cannot work: reaching it would be a different error.
	cli, err := parse(t, nil, "serve", "--listen", addr, "--data-dir", t.TempDir(),
		"--database-url", "postgres://ragd@/ragd?host=/nonexistent")
	require.NoError(t, err)
	a := newApp(&cli.Config, slog.New(slog.DiscardHandler))
	defer a.close()

	err = cli.Serve.Run(t.Context(), a)
	require.ErrorIs(t, err, syscall.EADDRINUSE)
	require.ErrorContains(t, err, "--listen "+addr)
	require.Nil(t, a.store, "the store is not opened when the port is taken")
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
