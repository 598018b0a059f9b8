package pgcluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// The ownership tests run each user of a cluster as a real process: this test binary, started
// again in the role of a ragd command (helperMain).

const (
	helperDirEnv      = "PGCLUSTER_TEST_USER_DIR"
	helperDetachedEnv = "PGCLUSTER_TEST_USER_DETACHED"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperDirEnv); dir != "" {
		os.Exit(helperMain(dir))
	}
	os.Exit(m.Run())
}

// helperMain uses the cluster in dir like a ragd command: it starts or joins it, says so on
// stdout, and leaves when its stdin is closed.
func helperMain(dir string) int {
	ctx := context.Background()
	c, err := Start(ctx, Config{Dir: dir, Detached: os.Getenv(helperDetachedEnv) != ""})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Printf("ready started=%t adopted=%t\n", c.started, c.adopted)
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := c.Close(ctx); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	return 0
}

// process is a ragd-like process using a cluster.
type process struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	ready   string // the helper's first line: "ready started=... adopted=..."
	stopped bool
}

func startUser(t *testing.T, dir string, detached bool) *process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperDirEnv+"="+dir)
	if detached {
		cmd.Env = append(cmd.Env, helperDetachedEnv+"=1")
	}
	cmd.Stderr = t.Output()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	u := &process{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		if !u.stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the user process said nothing")
	u.ready = strings.TrimSpace(line)
	require.True(t, strings.HasPrefix(u.ready, "ready "), u.ready)
	return u
}

// leave makes the process leave the cluster and exit.
func (u *process) leave(t *testing.T) {
	t.Helper()
	require.NoError(t, u.stdin.Close())
	require.NoError(t, u.cmd.Wait())
	u.stopped = true
}

// kill ends the process with SIGKILL: no clean-up of its own runs.
func (u *process) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, u.cmd.Process.Signal(syscall.SIGKILL))
	_ = u.cmd.Wait()
	u.stopped = true
}

func inspect(t *testing.T, dir string) State {
	t.Helper()
	st, err := Inspect(t.Context(), Config{Dir: dir, Logger: testLogger(t)})
	require.NoError(t, err)
	return st
}

// requireRunning checks that the server runs and answers, with the owner and use expected.
func requireRunning(t *testing.T, dir, owner string, inUse bool) {
	t.Helper()
	st := inspect(t, dir)
	require.True(t, st.Running, "the server should run")
	require.Equal(t, owner, st.Owner)
	require.Equal(t, inUse, st.InUse)
	requireSelectOne(t, dial(t, st.URL))
}

func requireStopped(t *testing.T, dir string) {
	t.Helper()
	st := inspect(t, dir)
	require.False(t, st.Running, "the server should be stopped")
	require.False(t, st.InUse)
	require.NoFileExists(t, dir+".owner")
}

// The case: `ragd ingest` started the cluster, `ragd serve` joined it, and the ingest
// finished first. The server must keep running for serve, and stop when serve leaves.
func TestOwnershipStarterLeavesFirst(t *testing.T) {
	t.Parallel()
	requirePostgres(t)
	dir := clusterDir(t)

	ingest := startUser(t, dir, false)
	require.Equal(t, "ready started=true adopted=false", ingest.ready)
	serve := startUser(t, dir, false)
	require.Equal(t, "ready started=false adopted=false", serve.ready)

	ingest.leave(t)
	requireRunning(t, dir, "ragd", true)
	serve.leave(t)
	requireStopped(t, dir)
}

func TestOwnershipJoinerLeavesFirst(t *testing.T) {
	t.Parallel()
	requirePostgres(t)
	dir := clusterDir(t)

	serve := startUser(t, dir, false)
	ingest := startUser(t, dir, false)
	require.Equal(t, "ready started=false adopted=false", ingest.ready)
	ingest.leave(t)
	requireRunning(t, dir, "ragd", true)
	serve.leave(t)
	requireStopped(t, dir)
}

// A user killed with SIGKILL runs no clean-up, but the kernel drops its lock: it neither keeps
// the server alive for ever nor lets it be stopped under the others.
func TestOwnershipAfterKill(t *testing.T) {
	t.Parallel()
	requirePostgres(t)

	t.Run("the only user", func(t *testing.T) {
		t.Parallel()
		dir := clusterDir(t)
		crashed := startUser(t, dir, false)
		crashed.kill(t)
		requireRunning(t, dir, "ragd", false) // an orphan: ragd's, but nobody uses it

		next := startUser(t, dir, false)
		require.Equal(t, "ready started=false adopted=true", next.ready)
		next.leave(t)
		requireStopped(t, dir)
	})

	t.Run("one of two users", func(t *testing.T) {
		t.Parallel()
		dir := clusterDir(t)
		starter := startUser(t, dir, false)
		crashed := startUser(t, dir, false)
		crashed.kill(t)
		requireRunning(t, dir, "ragd", true)
		starter.leave(t)
		requireStopped(t, dir)
	})

	t.Run("the server", func(t *testing.T) {
		t.Parallel()
		dir := clusterDir(t)
		first := startUser(t, dir, false)
		c := &Cluster{dir: dir, logger: testLogger(t)}
		pid, _, err := c.postmaster()
		require.NoError(t, err)
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

		// postmaster.pid names a dead process: the next user starts a new server (waiting, if
		// need be, for the dead one's children to let go of its shared memory) ...
		second := startUser(t, dir, false)
		require.Equal(t, "ready started=true adopted=false", second.ready)
		// ... which the first user, still there, does not stop when it leaves.
		first.leave(t)
		requireRunning(t, dir, "ragd", true)
		second.leave(t)
		requireStopped(t, dir)
	})
}

// A detached cluster (ragd db start) outlives its users until Stop, which refuses while one
// remains unless forced.
func TestOwnershipDetached(t *testing.T) {
	t.Parallel()
	requirePostgres(t)
	ctx := t.Context()
	dir := clusterDir(t)
	cfg := Config{Dir: dir, Logger: testLogger(t)}

	starter := startUser(t, dir, true)
	require.Equal(t, "ready started=true adopted=false", starter.ready)
	starter.leave(t)
	requireRunning(t, dir, "detached", false)

	serve := startUser(t, dir, false)
	require.Equal(t, "ready started=false adopted=false", serve.ready)
	require.ErrorIs(t, Stop(ctx, cfg, false), ErrInUse)
	requireRunning(t, dir, "detached", true)
	serve.leave(t)
	requireRunning(t, dir, "detached", false)

	require.NoError(t, Stop(ctx, cfg, false))
	requireStopped(t, dir)
	require.NoError(t, Stop(ctx, cfg, false), "stopping a stopped cluster is no error")

	// Detaching a cluster that a ragd process started for its own use keeps it running after
	// that process leaves.
	serve = startUser(t, dir, false)
	require.Equal(t, "ready started=true adopted=false", serve.ready)
	detacher := startUser(t, dir, true)
	detacher.leave(t)
	serve.leave(t)
	requireRunning(t, dir, "detached", false)

	// Forced, Stop stops a cluster in use.
	serve = startUser(t, dir, false)
	require.NoError(t, Stop(ctx, cfg, true))
	require.False(t, inspect(t, dir).Running)
	serve.leave(t)
	requireStopped(t, dir)
}

// A server started outside ragd (no record of it) is used and never stopped by ragd's users.
func TestOwnershipOutside(t *testing.T) {
	t.Parallel()
	requirePostgres(t)
	dir := clusterDir(t)
	cfg := Config{Dir: dir, Logger: testLogger(t)}

	starter := startUser(t, dir, true)
	starter.leave(t)
	require.NoError(t, os.Remove(dir+".owner")) // as if pg_ctl had started it
	requireRunning(t, dir, "outside", false)

	u := startUser(t, dir, false)
	require.Equal(t, "ready started=false adopted=false", u.ready)
	u.leave(t)
	requireRunning(t, dir, "outside", false)

	require.NoError(t, Stop(t.Context(), cfg, false))
	requireStopped(t, dir)
}

// Settings apply to a server Start starts.
func TestStartSettings(t *testing.T) {
	t.Parallel()
	cfg := Config{Dir: clusterDir(t), Logger: testLogger(t), Settings: map[string]string{"fsync": "off", "max_connections": "150"}}
	c := startCluster(t, cfg)
	conn := dial(t, c.URL())
	for name, want := range cfg.Settings {
		var got string
		require.NoError(t, conn.QueryRow(t.Context(), "SELECT current_setting($1)", name).Scan(&got))
		require.Equal(t, want, got, name)
	}

	_, err := Start(t.Context(), Config{Dir: clusterDir(t), Settings: map[string]string{"fsync": "off; rm -rf /"}})
	require.ErrorContains(t, err, "values letters, digits")
}
