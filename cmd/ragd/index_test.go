package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/dbtest"
)

// TestIndexCatchesUpPerTenantAfterRestart stops a server, ingests into another tenant while it is
// down (through another data directory, so only the database knows), and starts it again on its
// own index: the catch-up at start-up puts the new chunks in that tenant's index, where that
// tenant finds them and the first does not.
func TestIndexCatchesUpPerTenantAfterRestart(t *testing.T) {
	dbURL := dbtest.NewDatabase(t)
	run := func(args ...string) string {
		t.Helper()
		out, err := ragdCmd(t, dbURL, args...).Output()
		require.NoError(t, err, "ragd %s: %s", strings.Join(args, " "), out)
		return string(out)
	}
	secret := func(out string) string {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	corpus, err := filepath.Abs("../../testdata/corpus")
	require.NoError(t, err)
	data := t.TempDir()
	run("--data-dir", data, "ingest", corpus)
	keyA := secret(run("keys", "create", "--role", "chat"))
	keyB := secret(run("keys", "create", "--tenant", "beta", "--role", "chat"))

	srv := startReplicaIn(t, "server", dbURL, data)
	srv.key = keyA
	require.NotEmpty(t, srv.ask(t, "", "What should I do if I smell gas after an earthquake?").Sources)
	srv.stop()

	notes := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("The zqvortex valve in the boiler room is checked every Monday."), 0o644))
	run("--data-dir", t.TempDir(), "ingest", "--tenant", "beta", notes)

	srv = startReplicaIn(t, "server again", dbURL, data)
	srv.key = keyB
	found := srv.ask(t, "", "zqvortex")
	require.Len(t, found.Sources, 1, "beta's document, ingested while the server was down, is in beta's index")
	srv.key = keyA
	require.Empty(t, srv.ask(t, "", "zqvortex").Sources, "and not in the default tenant's")

	tenants, err := os.ReadDir(filepath.Join(data, "index", "tenants"))
	require.NoError(t, err)
	require.Len(t, tenants, 2, "one index per tenant with chunks")
	require.True(t, slices.ContainsFunc(tenants, func(e os.DirEntry) bool { return e.Name() == "00000000-0000-0000-0000-000000000001" }))
}

// reindex --graph (or --embeddings) while a server holds the BM25 index does what it was asked in
// the database and leaves the index to the server, which follows the database; a plain reindex,
// whose whole point is the index, still refuses.
func TestReindexBesideARunningServer(t *testing.T) {
	dbURL, data := ingestedDataDir(t)
	startReplicaIn(t, "server", dbURL, data)

	out, err := ragdCmd(t, dbURL, "--data-dir", data, "reindex", "--graph").Output()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "into the knowledge graph")
	require.Contains(t, string(out), "did not rebuild the BM25 index")

	out, err = ragdCmd(t, dbURL, "--data-dir", data, "reindex").CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), "open in another process")
	require.Contains(t, string(out), "layout.bolt is held by pid", "which lock, and who holds it")
	require.Contains(t, string(out), "stop the process that holds it", "and what to do")

	// ingest beside the server says what it waits for before it waits, then leaves the index
	// to the server.
	corpus, err := filepath.Abs("../../testdata/corpus")
	require.NoError(t, err)
	out, err = ragdCmd(t, dbURL, "--data-dir", data, "ingest", corpus).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, 1, strings.Count(string(out), "waiting for the BM25 index's lock"), "%s", out)
	require.Contains(t, string(out), "catches up from the database by itself")
}

// ingestedDataDir makes a new database and a data directory into which `ragd ingest` put
// testdata/corpus, for a server to start on.
func ingestedDataDir(t *testing.T) (dbURL, data string) {
	t.Helper()
	dbURL, data = dbtest.NewDatabase(t), t.TempDir()
	corpus, err := filepath.Abs("../../testdata/corpus")
	require.NoError(t, err)
	out, err := ragdCmd(t, dbURL, "--data-dir", data, "ingest", corpus).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return dbURL, data
}
