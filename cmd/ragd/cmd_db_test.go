package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/dbtest"
)

// migrate and reindex have no search to warn about: without a model they do not say that
// vector search is off (serve and ingest do).
func TestMaintenanceDoesNotWarnOfModels(t *testing.T) {
	dbURL, data := ingestedDataDir(t)
	for _, args := range [][]string{{"migrate"}, {"--data-dir", data, "reindex"}} {
		out, err := ragdCmd(t, dbURL, args...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.NotContains(t, string(out), "no embedding model configured", "ragd %s", strings.Join(args, " "))
	}
	out, err := ragdCmd(t, dbURL, "--data-dir", t.TempDir(), "ingest", "../../testdata/corpus/fire.md").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "no embedding model configured")
}

// ragd db stop with nothing running says so.
func TestDBStopSaysNotRunning(t *testing.T) {
	dir := t.TempDir()
	out, err := ragdCmd(t, dbtest.NewDatabase(t), "db", "stop", "--dir", dir).Output()
	require.NoError(t, err, "%s", out)
	require.Equal(t, dir+": not running\n", string(out))
}
