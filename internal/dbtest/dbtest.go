// Package dbtest gives tests a real PostgreSQL with pgvector: a fresh migrated database per test
// (cloned from a template, dropped afterwards), or a transaction on a shared migrated database
// that is rolled back when the test ends. The server comes from RAGD_TEST_DATABASE_URL, which
// scripts/test.sh sets after starting a throwaway cluster.
//
// The template and the shared database are made once per server and migration content and
// shared by the test processes running at the same time (go test runs packages in parallel).
// Each such process holds a shared advisory lock on them while it runs; a package using dbtest
// calls Main from its TestMain, which on the way out drops both when no other process holds the
// lock, so a test run leaves no database behind.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	neturl "net/url"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/ragd/ragd/migrations"
)

// EnvURL names the variable holding the server's connection URL (any database on it).
const EnvURL = "RAGD_TEST_DATABASE_URL"

// Dim is the embedding dimension of test databases: that of the stand-in models.
const Dim = 384

// ServerURL returns the test server's URL, failing the test with instructions when it is unset:
// a database test that silently skips would hide a broken CI.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Fatalf("%s is not set: run the tests with scripts/test.sh (it starts a throwaway PostgreSQL), or point it at a server with pgvector installed", EnvURL)
	}
	return u
}

// withDatabase returns url with its database name replaced.
func withDatabase(t testing.TB, raw, db string) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	if err != nil {
		t.Fatalf("dbtest: parsing %s: %v", EnvURL, err)
	}
	u.Path = "/" + db
	return u.String()
}

func connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatalf("dbtest: connecting: %v", err)
	}
	return conn
}

// ensureDatabase creates db as a migrated database once per server and migration content. Test
// processes run in parallel, so creation happens under an advisory lock.
func ensureDatabase(t testing.TB, db string, from string) {
	t.Helper()
	ctx := context.Background()
	admin := connect(t, withDatabase(t, ServerURL(t), "postgres"))
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1))", db); err != nil {
		t.Fatalf("dbtest: lock: %v", err)
	}
	defer admin.Exec(ctx, "SELECT pg_advisory_unlock(hashtext($1))", db) //nolint:errcheck // closing the session releases it anyway
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", db).Scan(&exists); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	if exists {
		return
	}
	create := "CREATE DATABASE " + pgx.Identifier{db}.Sanitize()
	if from != "" {
		create += " TEMPLATE " + pgx.Identifier{from}.Sanitize()
	}
	if _, err := admin.Exec(ctx, create); err != nil {
		t.Fatalf("dbtest: %s: %v", create, err)
	}
	if from != "" {
		return
	}
	conn := connect(t, withDatabase(t, ServerURL(t), db))
	defer conn.Close(ctx)
	if err := migrations.Migrate(ctx, conn, migrations.Options{EmbeddingDim: Dim}); err != nil {
		t.Fatalf("dbtest: migrating template: %v", err)
	}
}

// prefix begins the name of every database dbtest makes (dbtest's own test changes it, to
// watch databases no other test process uses).
var prefix = "ragd_test_"

func templateName() string { return prefix + "tmpl_" + migrations.Fingerprint() }

func sharedName() string { return prefix + "tx_" + migrations.Fingerprint() }

// use is this process's hold on the template and the shared database: a session holding the
// shared advisory lock (hashtext(template), 0) from the first test that needs them until Main
// ends (or the process dies, which ends the session).
var use struct {
	sync.Mutex
	main bool // Main runs this process's tests
	conn *pgx.Conn
}

// Main runs a package's tests (call it from TestMain: os.Exit(dbtest.Main(m))) and then drops
// the template and the shared database, unless another test process still holds them.
func Main(m *testing.M) int {
	use.Lock()
	use.main = true
	use.Unlock()
	code := m.Run()
	use.Lock()
	defer use.Unlock()
	if use.conn == nil {
		return code // no test here needed them
	}
	ctx := context.Background()
	// Unlocking is synchronous; closing alone is not: the server ends the session after Close
	// returns, and until then dropUnused would find this process's own hold and keep the
	// databases (it did, under load).
	_, _ = use.conn.Exec(ctx, "SELECT pg_advisory_unlock_shared(hashtext($1), 0)", templateName())
	_ = use.conn.Close(ctx) // lets go of this process's hold
	use.conn = nil
	if err := dropUnused(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "dbtest: leaving the test template behind: %v\n", err)
	}
	return code
}

// hold takes this process's hold on the template and the shared database, once.
func hold(t testing.TB) {
	t.Helper()
	use.Lock()
	defer use.Unlock()
	if use.conn != nil {
		return
	}
	if !use.main {
		t.Fatalf("dbtest: the package's TestMain must run its tests with dbtest.Main (os.Exit(dbtest.Main(m))), which drops the test databases afterwards")
	}
	conn := connect(t, withDatabase(t, ServerURL(t), "postgres"))
	// Waits while a process that ended is dropping them; it is recreated afterwards.
	if _, err := conn.Exec(context.Background(), "SELECT pg_advisory_lock_shared(hashtext($1), 0)", templateName()); err != nil {
		t.Fatalf("dbtest: holding the template: %v", err)
	}
	use.conn = conn
}

// dropUnused drops the template and the shared database if no test process holds them.
func dropUnused(ctx context.Context) error {
	u := os.Getenv(EnvURL)
	pu, err := neturl.Parse(u)
	if err != nil {
		return err
	}
	pu.Path = "/postgres"
	admin, err := pgx.Connect(ctx, pu.String())
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	var free bool
	if err := admin.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtext($1), 0)", templateName()).Scan(&free); err != nil {
		return err
	}
	if !free {
		return nil // another test process runs; the last one drops them
	}
	// Not WITH (FORCE): a session still in either (a test process that does not hold the lock)
	// keeps it.
	for _, db := range []string{sharedName(), templateName()} {
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()); err != nil {
			return err
		}
	}
	return nil
}

// NewDatabase creates a migrated database for this test alone and returns its URL. It is dropped
// when the test ends. Use it when the code under test opens its own pool or commits.
func NewDatabase(t testing.TB) string {
	t.Helper()
	tmpl := templateName()
	hold(t)
	ensureDatabase(t, tmpl, "")
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := prefix + hex.EncodeToString(b)
	ctx := context.Background()
	admin := connect(t, withDatabase(t, ServerURL(t), "postgres"))
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s",
		pgx.Identifier{name}.Sanitize(), pgx.Identifier{tmpl}.Sanitize())); err != nil {
		t.Fatalf("dbtest: creating test database: %v", err)
	}
	t.Cleanup(func() {
		admin := connect(t, withDatabase(t, ServerURL(t), "postgres"))
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("dbtest: dropping %s: %v", name, err)
		}
	})
	return withDatabase(t, ServerURL(t), name)
}

// TestTx begins a transaction on a shared migrated database and rolls it back when the test
// ends, so tests see an empty schema and leave nothing behind.
func TestTx(t testing.TB) pgx.Tx {
	t.Helper()
	shared := sharedName()
	hold(t)
	ensureDatabase(t, templateName(), "")
	ensureDatabase(t, shared, templateName())
	return beginRolledBack(t, withDatabase(t, ServerURL(t), shared))
}

// OwnTx is TestTx on a database of the test's own (NewDatabase), for code that takes table
// locks (DROP INDEX, ANALYZE): on the shared database those make parallel tests wait on one
// another, and two such tests deadlocked there.
func OwnTx(t testing.TB) pgx.Tx {
	t.Helper()
	return beginRolledBack(t, NewDatabase(t))
}

// beginRolledBack begins a transaction on url that is rolled back when the test ends.
func beginRolledBack(t testing.TB, url string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, url)
	if err := pgxvec.RegisterTypes(ctx, conn); err != nil {
		t.Fatalf("dbtest: registering vector types: %v", err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatalf("dbtest: begin: %v", err)
	}
	t.Cleanup(func() {
		_ = tx.Rollback(ctx)
		_ = conn.Close(ctx)
	})
	return tx
}

// AppURL returns url as a login that is a member of ragd_app and nothing more: how ragd is meant
// to log in (the database's owner migrates). Roles belong to the server, so every test database
// shares the login.
func AppURL(t testing.TB, url string) string {
	t.Helper()
	ctx := context.Background()
	admin := connect(t, url)
	defer admin.Close(ctx)
	_, err := admin.Exec(ctx, `DO $$ BEGIN
		CREATE ROLE ragd_test_login LOGIN NOSUPERUSER NOBYPASSRLS IN ROLE ragd_app;
		EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`)
	if err != nil {
		t.Fatalf("dbtest: creating the login role: %v", err)
	}
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	u.User = neturl.User("ragd_test_login")
	return u.String()
}

// AppConn connects to the database at url as AppURL's login, acting for tenant (the ragd.tenant
// setting): what row-level security alone lets ragd see, with none of the store's own filters.
// The session has no more powerful role to return to.
func AppConn(t testing.TB, url, tenant string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, AppURL(t, url))
	if err != nil {
		t.Fatalf("dbtest: connecting as ragd_test_login: %v", err)
	}
	if _, err := conn.Exec(ctx, "SELECT set_config('ragd.tenant', $1, false)", tenant); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return conn
}
