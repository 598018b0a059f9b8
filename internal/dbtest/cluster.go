package dbtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ragd/ragd/pgcluster"
)

// Cluster is a private PostgreSQL server of one test, run by package pgcluster (ragd's one way to
// run a private PostgreSQL), for tests that stop and start the server: the shared test server
// must never be stopped. It runs detached, so only Stop, Restart's stop and the test's end stop it.
type Cluster struct {
	cfg pgcluster.Config
	url string
	app string
}

// NewCluster starts a private cluster in a temporary directory and stops it when the test ends.
// It is a fresh cluster: ragd migrates it when it opens its store. Durability is off (fsync and
// friends): the cluster is thrown away, and a fast stop still shuts down cleanly.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		// The server runs as the postgres account, which must pass through the directory and its
		// parent (os.MkdirTemp makes them 0700).
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatalf("dbtest: %v", err)
			}
		}
	}
	c := &Cluster{cfg: pgcluster.Config{Dir: filepath.Join(dir, "pg"), Detached: true,
		Settings: map[string]string{"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}}}
	c.Start(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := pgcluster.Stop(ctx, c.cfg, true); err != nil {
			t.Errorf("dbtest: stopping the test's cluster: %v", err)
		}
	})
	return c
}

// URL is the cluster's database as its superuser, which owns ragd's tables once migrated.
func (c *Cluster) URL() string { return c.url }

// AppURL is the cluster's database as ragd's serving login: a member of ragd_app and nothing
// more (pgcluster.Cluster.AppURL).
func (c *Cluster) AppURL() string { return c.app }

// Stop stops the server in fast mode (open sessions are disconnected), under whatever uses it.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	if err := pgcluster.Stop(t.Context(), c.cfg, true); err != nil {
		t.Fatalf("dbtest: stopping the cluster: %v", err)
	}
}

// Start starts the server again (or the first time).
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	pc, err := pgcluster.Start(t.Context(), c.cfg)
	if err != nil {
		t.Fatalf("dbtest: starting a private cluster (PostgreSQL and pgvector must be installed: scripts/setup.sh): %v", err)
	}
	c.url, c.app = pc.URL(), pc.AppURL()
	// Detached: leaving it keeps it running until Stop.
	if err := pc.Close(t.Context()); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
}
