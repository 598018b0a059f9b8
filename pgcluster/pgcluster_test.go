package pgcluster

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// These tests run real PostgreSQL servers (installed by scripts/setup.sh) in temporary
// directories; they fail when PostgreSQL is not installed. When they run as root, the servers
// run as the "postgres" user.

func TestStart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := Config{Dir: clusterDir(t), Logger: testLogger(t)}

	first := startCluster(t, cfg)
	require.True(t, first.started)
	conn := dial(t, first.URL())
	requireSelectOne(t, conn)
	_, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector")
	require.NoError(t, err)
	var vec string
	require.NoError(t, conn.QueryRow(ctx, "SELECT '[1,2,3]'::vector::text").Scan(&vec))
	require.Equal(t, "[1,2,3]", vec)
	_, err = conn.Exec(ctx, `CREATE TABLE chunks (id int PRIMARY KEY, embedding vector(3));
		INSERT INTO chunks VALUES (1, '[1,2,3]')`)
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))

	// Starting the running cluster again joins it, and leaving does not stop it under its
	// other user.
	second := startCluster(t, cfg)
	require.False(t, second.started)
	require.Equal(t, first.URL(), second.URL())
	require.NoError(t, second.Close(ctx))
	requireSelectOne(t, dial(t, first.URL()))

	// The last to leave stops it.
	require.NoError(t, first.Close(ctx))
	require.NoError(t, first.Close(ctx), "Close is idempotent")
	_, err = pgx.Connect(ctx, first.URL())
	require.Error(t, err, "the server should be down")

	// A restart finds the data again.
	third := startCluster(t, cfg)
	require.True(t, third.started)
	var embedding string
	require.NoError(t, dial(t, third.URL()).QueryRow(ctx,
		"SELECT embedding::text FROM chunks WHERE id = 1").Scan(&embedding))
	require.Equal(t, "[1,2,3]", embedding)
}

func TestStartLeftoverPostmasterPID(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := Config{Dir: clusterDir(t), Logger: testLogger(t)}

	c := startCluster(t, cfg)
	pidFile := filepath.Join(c.dir, "postmaster.pid")
	pidData, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	require.NoError(t, c.Close(ctx))
	require.False(t, inspect(t, cfg.Dir).StalePID, "a server stopped cleanly leaves no postmaster.pid")

	// writePIDFile leaves the postmaster.pid a crashed server would, naming process pid.
	writePIDFile := func(pid int) {
		_, rest, _ := strings.Cut(string(pidData), "\n")
		require.NoError(t, os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"+rest), 0o600))
		require.NoError(t, c.account.chown(pidFile))
	}

	// A live process of the server's user in the file reads as a running server that never
	// answers, and the error says what to do.
	live := exec.Command("sleep", "60")
	live.SysProcAttr = c.account.sysProcAttr()
	require.NoError(t, live.Start())
	t.Cleanup(func() {
		_ = live.Process.Kill()
		_ = live.Wait()
	})
	writePIDFile(live.Process.Pid)
	// Only the wait for the server is bounded: Start's earlier steps (postgres --version,
	// initdb's checks) can take seconds on a loaded machine, and a deadline striking them
	// fails differently.
	leftover, err := open(ctx, cfg)
	require.NoError(t, err)
	shortCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err = leftover.ensureRunning(shortCtx, nil)
	t.Log(err)
	require.ErrorContains(t, err, "if no server runs there, remove that file")

	// A process that has exited is recognized as stale.
	exited := exec.Command("true")
	require.NoError(t, exited.Run())
	writePIDFile(exited.Process.Pid)
	st := inspect(t, cfg.Dir)
	require.False(t, st.Running)
	require.True(t, st.StalePID, "ragd db status says the file is left from a server that is gone")
	c = startCluster(t, cfg)
	require.True(t, c.started)
	requireSelectOne(t, dial(t, c.URL()))
}

func TestStartErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name          string
		dir           func(t *testing.T) string
		binDir        func(t *testing.T) string
		needsPostgres bool
		wantErrIs     error
		wantErr       string
	}{
		{
			name:    "no dir",
			dir:     func(*testing.T) string { return "" },
			wantErr: "Config.Dir is required",
		},
		{
			name: "socket path too long",
			dir: func(t *testing.T) string {
				return filepath.Join(t.TempDir(), strings.Repeat("d", maxSocketPath))
			},
			wantErr: "over the 107-byte limit",
		},
		{
			name:      "no PostgreSQL in bin dir",
			dir:       clusterDir,
			binDir:    func(t *testing.T) string { return t.TempDir() },
			wantErrIs: ErrNoPostgres,
		},
		{
			name: "cluster of another major version",
			dir: func(t *testing.T) string {
				dir := clusterDir(t)
				require.NoError(t, os.Mkdir(dir, 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "PG_VERSION"), []byte("9.6\n"), 0o600))
				return dir
			},
			needsPostgres: true,
			wantErr:       "was made by PostgreSQL 9.6",
		},
		{
			name: "dir holds something else",
			dir: func(t *testing.T) string {
				dir := clusterDir(t)
				require.NoError(t, os.Mkdir(dir, 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600))
				return dir
			},
			needsPostgres: true,
			wantErr:       "exists but is not empty", // from initdb's output
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.needsPostgres {
				requirePostgres(t)
			}
			cfg := Config{Dir: tt.dir(t), Logger: testLogger(t)}
			if tt.binDir != nil {
				cfg.BinDir = tt.binDir(t)
			}

			c, err := Start(t.Context(), cfg)
			require.Nil(t, c)
			t.Log(err)
			if tt.wantErrIs != nil {
				require.ErrorIs(t, err, tt.wantErrIs)
			}
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestStartAsRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the server runs as another user only when the caller is root")
	}
	requirePostgres(t)

	t.Run("parent not traversable", func(t *testing.T) {
		t.Parallel()
		private := filepath.Join(filepath.Dir(clusterDir(t)), "private")
		require.NoError(t, os.Mkdir(private, 0o700))

		_, err := Start(t.Context(), Config{Dir: filepath.Join(private, "pg"), Logger: testLogger(t)})
		t.Log(err)
		require.ErrorContains(t, err, private+" (mode -rwx------, owner uid 0) is not traversable by that user")
		require.ErrorContains(t, err, "--data-dir")
		require.NoFileExists(t, filepath.Join(private, "pg"))
	})

	t.Run("unknown user", func(t *testing.T) {
		t.Parallel()
		_, err := Start(t.Context(), Config{Dir: clusterDir(t), User: "ragd-no-such-user", Logger: testLogger(t)})
		t.Log(err)
		require.ErrorContains(t, err, "ragd-no-such-user")
	})
}

func TestConnString(t *testing.T) {
	// Not parallel: it checks that PGPORT from the environment does not change the port.
	t.Setenv("PGPORT", "6543")

	tests := []struct {
		name    string
		sockDir string
		want    string
	}{
		{
			name:    "plain",
			sockDir: "/var/lib/ragd/postgres/sock",
			want:    "postgres://ragd@/ragd?host=%2Fvar%2Flib%2Fragd%2Fpostgres%2Fsock&port=5432&sslmode=disable",
		},
		{
			name:    "odd characters",
			sockDir: "/tmp/my data/it's+&é/sock",
			want:    "postgres://ragd@/ragd?host=%2Ftmp%2Fmy%20data%2Fit%27s%2B%26%C3%A9%2Fsock&port=5432&sslmode=disable",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := connString(tt.sockDir, "ragd")
			require.Equal(t, tt.want, got)

			cfg, err := pgx.ParseConfig(got)
			require.NoError(t, err)
			require.Equal(t, tt.sockDir, cfg.Host)
			require.EqualValues(t, 5432, cfg.Port)
			require.Equal(t, "ragd", cfg.User)
			require.Equal(t, "ragd", cfg.Database)
			require.Nil(t, cfg.TLSConfig)
		})
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()

	tests := []struct {
		output    string
		want      string
		wantMajor string
	}{
		{"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n", "15.18", "15"},
		{"postgres (PostgreSQL) 17.2\n", "17.2", "17"},
		{"postgres (PostgreSQL) 18beta1\n", "18beta1", "18"},
		{"postgres (PostgreSQL) 16devel", "16devel", "16"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			got, err := parseVersion(tt.output)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.wantMajor, majorVersion(got))
		})
	}

	_, err := parseVersion("command not found")
	require.ErrorContains(t, err, "unexpected output")
}

func TestQuoteConf(t *testing.T) {
	t.Parallel()

	tests := map[string]string{
		"/var/lib/ragd/postgres/sock": `'/var/lib/ragd/postgres/sock'`,
		"/tmp/it's":                   `'/tmp/it''s'`,
		`C:\data`:                     `'C:\\data'`,
	}
	for in, want := range tests {
		require.Equal(t, want, quoteConf(in), in)
	}
}

// clusterDir returns a path for a new cluster directory, in a fresh temporary directory.
// When the tests run as root, the server runs as the "postgres" user, which must be able to
// pass through the temporary directory and its parent (os.MkdirTemp makes it 0700).
func clusterDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		require.NoError(t, os.Chmod(dir, 0o755))
		require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	}
	return filepath.Join(dir, "pg")
}

// startCluster starts the cluster cfg describes and leaves it when the test ends.
func startCluster(t *testing.T, cfg Config) *Cluster {
	t.Helper()
	c, err := Start(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close(context.Background())) })
	return c
}

// requirePostgres fails the test when PostgreSQL is not installed: a skipped test would hide
// a machine that cannot run ragd's private cluster.
func requirePostgres(t *testing.T) {
	t.Helper()
	_, err := findBinDir(t.Context(), "")
	require.NoError(t, err, "install PostgreSQL with scripts/setup.sh")
}

func dial(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func requireSelectOne(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	var one int
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT 1").Scan(&one))
	require.Equal(t, 1, one)
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}
