package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/pgcluster"
)

// migrate and reindex have no search to warn about: without a model they do not say that
// vector search is off (serve does; ingest says its chunks get no vector).
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
	// ingest searches nothing either: it says what it stores, not that vector search is off
	// (the server that searches these chunks may have a model).
	require.Contains(t, string(out), "the chunks are stored without a vector, so only BM25 finds them")
	require.NotContains(t, string(out), "vector search is off")
}

// ragd db stop with nothing running says so.
func TestDBStopSaysNotRunning(t *testing.T) {
	dir := t.TempDir()
	out, err := ragdCmd(t, dbtest.NewDatabase(t), "db", "stop", "--dir", dir).Output()
	require.NoError(t, err, "%s", out)
	require.Equal(t, dir+": not running\n", string(out))
}

// ragd db start --set on a server that runs already refuses, naming --set: the server would keep
// its own settings. Without --set, starting it again is fine.
func TestDBStartSetOnARunningServer(t *testing.T) {
	parent := t.TempDir()
	if os.Geteuid() == 0 { // the server then runs as postgres, which must reach its directory
		require.NoError(t, os.Chmod(parent, 0o755))
		require.NoError(t, os.Chmod(filepath.Dir(parent), 0o755))
	}
	dir := filepath.Join(parent, "pg")
	dbURL := dbtest.NewDatabase(t)
	out, err := ragdCmd(t, dbURL, "db", "start", "--dir", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() {
		out, err := ragdCmd(t, dbURL, "db", "stop", "--dir", dir, "--force").CombinedOutput()
		require.NoError(t, err, "%s", out)
	})
	out, err = ragdCmd(t, dbURL, "db", "start", "--dir", dir, "--set", "work_mem=8MB").CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), "--set: the server in "+dir+" runs already")
	out, err = ragdCmd(t, dbURL, "db", "start", "--dir", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// After kill -9 (no clean-up runs), ragd db status says what happens next: a cluster no ragd
// process uses any more is adopted by the next command; a postmaster.pid of a dead server is
// replaced at the next start. (pgcluster's tests make both states for real.)
func TestDBStatusSaysWhatHappensNext(t *testing.T) {
	used := dbStatusText(pgcluster.State{Dir: "/d", Running: true, PID: 7, Owner: "ragd", InUse: true, URL: "postgres://x"})
	require.Equal(t, "/d: running, postmaster pid 7\nstopped by: the last ragd process that uses it, when it exits\n"+
		"used by ragd processes: true\nurl: postgres://x\n", used)
	orphan := dbStatusText(pgcluster.State{Dir: "/d", Running: true, PID: 7, Owner: "ragd", URL: "postgres://x"})
	require.Contains(t, orphan, "stopped by: nobody now: the ragd processes that used it are gone (killed?); the next ragd command adopts it, "+
		"and the last one to leave it stops it ('ragd db stop' stops it now)\nused by ragd processes: false\n")
	stale := dbStatusText(pgcluster.State{Dir: "/d", StalePID: true})
	require.Equal(t, "/d: not running; its postmaster.pid names a process that is gone (a server killed or crashed): "+
		"the next ragd command (or 'ragd db start') starts a new server and replaces that file\n", stale)
	require.Equal(t, "/d: not running\n", dbStatusText(pgcluster.State{Dir: "/d"}))
}
