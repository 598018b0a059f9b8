package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/migrations"
)

// childEnv makes this test binary a test process using databases named with its value.
const childEnv = "DBTEST_CHILD_PREFIX"

func TestMain(m *testing.M) {
	if p := os.Getenv(childEnv); p != "" {
		prefix = p
	}
	os.Exit(Main(m))
}

// TestChildUsesTheDatabases is the child process's work (it does nothing in the parent): a
// database of its own and a transaction on the shared one.
func TestChildUsesTheDatabases(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		return
	}
	conn := connect(t, NewDatabase(t))
	defer conn.Close(context.Background())
	_, err := TestTx(t).Exec(context.Background(), "SELECT 1 FROM documents")
	require.NoError(t, err)
}

// A test process drops the template and the shared database it made when it ends, unless
// another test process (here, this one) still holds them; the last one out drops them.
func TestTestProcessesLeaveNoDatabases(t *testing.T) {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	p := "ragd_test_dbtest_" + hex.EncodeToString(b) + "_"
	ctx := context.Background()
	admin := connect(t, withDatabase(t, ServerURL(t), "postgres"))
	t.Cleanup(func() { admin.Close(ctx) }) // after the cleanup below, which uses it
	databases := func() []string {
		rows, err := admin.Query(ctx, "SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY 1", p)
		require.NoError(t, err)
		var names []string
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			names = append(names, n)
		}
		require.NoError(t, rows.Err())
		return names
	}
	child := func() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildUsesTheDatabases$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+p)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	t.Cleanup(func() { // whatever the outcome
		for _, db := range databases() {
			_, _ = admin.Exec(ctx, "DROP DATABASE "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)")
		}
	})

	child()
	require.Empty(t, databases(), "a test process alone drops what it made")

	other := connect(t, withDatabase(t, ServerURL(t), "postgres")) // another package's process
	_, err := other.Exec(ctx, "SELECT pg_advisory_lock_shared(hashtext($1), 0)", p+"tmpl_"+migrations.Fingerprint())
	require.NoError(t, err)
	child()
	require.Equal(t, []string{p + "tmpl_" + migrations.Fingerprint(), p + "tx_" + migrations.Fingerprint()}, databases(),
		"a process that still runs keeps them")
	// As Main lets go (a session's end releases its locks only after Close returns).
	_, err = other.Exec(ctx, "SELECT pg_advisory_unlock_shared(hashtext($1), 0)", p+"tmpl_"+migrations.Fingerprint())
	require.NoError(t, err)
	require.NoError(t, other.Close(ctx))
	child()
	require.Empty(t, databases(), "the last one out drops them")
}
