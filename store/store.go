// Package store is ragd's system of record in PostgreSQL with pgvector: documents and versions,
// chunks and their embeddings, conversations and citations. Every call takes a context; errors
// wrap the ragd error kinds so callers can tell not-found and bad input from failures, and an
// unreachable or full database (ErrUnavailable) from a bug.
//
// # Tenants
//
// Every row belongs to a tenant, and the tenant travels in the context (ragd.WithPrincipal; the
// HTTP API puts the API key's there, command-line tools the --tenant's; no principal is the
// default tenant). Two walls keep tenants apart:
//
//   - PostgreSQL row-level security. The pool works as the role ragd_app (SET ROLE on connect),
//     which owns no table, so policies bind it and it cannot TRUNCATE or disable triggers; it
//     logs in as a login that is a member of ragd_app and nothing more (Config.OwnerURL
//     migrates; Login checks), so no session can switch back to a stronger role. Every
//     connection handed out gets set_config('ragd.tenant', <tenant>) from the context of the call
//     that acquired it (pgxpool's PrepareConn; skipped when the connection holds it already, see
//     actFor), so a query inside or outside a transaction runs as its caller's tenant. ragd.AllTenants(ctx) sets 'all' instead: only maintenance uses it
//     (the BM25 index's chunk feed, reindex, key lookup by hash).
//   - Explicit filters: the store's queries also say tenant_id = tenantOf(ctx) where they look
//     things up, so a policy mistake is not the only thing between tenants.
//
// To add a tenant-scoped table in a new migration:
//
//	CREATE TABLE things (
//	    id        uuid PRIMARY KEY,
//	    tenant_id uuid NOT NULL DEFAULT ragd_tenant() REFERENCES tenants (id),  -- inserts take the caller's
//	    ...
//	);
//	ALTER TABLE things ENABLE ROW LEVEL SECURITY;
//	CREATE POLICY tenant_isolation ON things USING (ragd_sees(tenant_id)) WITH CHECK (ragd_sees(tenant_id));
//
// (ragd_app is granted SELECT, INSERT, UPDATE, DELETE on new tables by default privileges; revoke
// what it must not do, as for message_citations.) Unique keys that name things for users are
// per tenant: UNIQUE (tenant_id, name). Then write queries as usual and add
// "AND tenant_id = $n" with tenantOf(ctx) to lookups by id. A test that connects with
// internal/dbtest.AppConn sees what row-level security alone lets a tenant see.
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/migrations"
)

// DB is what the store needs from PostgreSQL. Both *pgxpool.Pool and pgx.Tx satisfy it, so tests
// can run a store inside a transaction that is rolled back.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Config says where the database is and how to use it.
type Config struct {
	// URL is a libpq/pgx connection string: the login the pool works as (SET ROLE ragd_app on
	// every connection). It should be a login that is a member of ragd_app and nothing more
	// (Login tells).
	URL string
	// OwnerURL, when set, is the login that owns ragd's tables: migrations run as it, on a
	// connection of their own, and it grants ragd_app to URL's login. Empty: URL's login
	// migrates, and so owns the tables.
	OwnerURL string
	// Schema, when set, holds ragd's tables instead of public (the eval command uses one schema
	// per dataset). It is created when missing; pgvector stays in public.
	Schema string
	// EmbeddingDim is the dimension of chunk embeddings; checked against the schema at open.
	EmbeddingDim int
	// Migrate applies pending migrations at open; when false a pending migration is an error.
	Migrate bool
	// MaxConns caps the pool; 0 lets pgx choose.
	MaxConns int32
	// EfSearch is pgvector's hnsw.ef_search: the candidate list size of a k-NN search. It must be
	// at least the k asked for to return k results; larger trades speed for recall.
	EfSearch int
	Logger   *slog.Logger
}

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if c.EmbeddingDim == 0 {
		c.EmbeddingDim = 384
	}
	if c.EfSearch == 0 {
		c.EfSearch = 100
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	if c.URL == "" {
		return errors.New("store: database URL is empty")
	}
	if c.EfSearch < 1 || c.EfSearch > 1000 {
		return fmt.Errorf("store: ef_search %d out of range 1..1000", c.EfSearch)
	}
	if strings.ContainsAny(c.Schema, "\"\x00") {
		return fmt.Errorf("store: schema name %q must not contain quotes or NUL", c.Schema)
	}
	return nil
}

// Store reads and writes ragd's tables. It implements ragd.Store, the storage interface the
// other packages are given; what only the command line and tests use (listening for changes,
// embedding back-fill, evaluation helpers, reads by version or source key) is on Store alone.
type Store struct {
	db       DB
	pool     *pgxpool.Pool // nil when the store wraps a transaction
	efSearch int
	// searchSet says that the connections start with hnsw.ef_search = efSearch and
	// hnsw.iterative_scan set (a pool's do; a wrapped transaction's need not).
	searchSet bool
	logger    *slog.Logger
	health    *health
	bulk      *bulkLoad // inside LoadThenIndex: the load's growth, for its statistics
}

// The command line hands *Store to ask, server, ingest and index as a ragd.Store; this fails the
// build, here rather than there, when the two drift.
var _ ragd.Store = (*Store)(nil)

// Open connects, migrates (or checks the schema version), checks the embedding dimension, and
// returns a store over a connection pool.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	pcfg, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("store: parsing database URL: %w", err)
	}
	if cfg.Schema != "" {
		pcfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{cfg.Schema}.Sanitize() + ", public"
	}
	if cfg.MaxConns > 0 {
		pcfg.MaxConns = cfg.MaxConns
	}
	owner := pcfg.ConnConfig.Copy()
	if cfg.OwnerURL != "" {
		ocfg, err := pgx.ParseConfig(cfg.OwnerURL)
		if err != nil {
			return nil, fmt.Errorf("store: parsing the owner's database URL: %w", err)
		}
		if cfg.Schema != "" {
			ocfg.RuntimeParams["search_path"] = pcfg.ConnConfig.RuntimeParams["search_path"]
		}
		owner = ocfg
	}
	if err := prepare(ctx, owner, cfg, pcfg.ConnConfig.User); err != nil {
		return nil, err
	}
	// Every connection starts with the vector search's settings (in the startup packet: no round
	// trip), so a search needs no transaction of its own to set them (SearchVector).
	pcfg.ConnConfig.RuntimeParams["hnsw.ef_search"] = fmt.Sprint(cfg.EfSearch)
	pcfg.ConnConfig.RuntimeParams["hnsw.iterative_scan"] = iterativeScan
	if pcfg.ConnConfig.ConnectTimeout == 0 { // the URL's connect_timeout, when it has one
		// A server that does not answer makes a request wait at most this long before its 503.
		pcfg.ConnConfig.ConnectTimeout = 3 * time.Second
	}
	pcfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		// ragd works as ragd_app, which owns nothing: row-level security applies to it, and it
		// cannot TRUNCATE or disable triggers. A login that is only its member (NOINHERIT or not)
		// has nothing more to return to; Login says whether the URL's login has.
		if _, err := conn.Exec(ctx, "SET ROLE "+AppRole); err != nil {
			return fmt.Errorf("store: SET ROLE %s (the login of the database URL must be a member): %w", AppRole, err)
		}
		registerUUID(conn.TypeMap())
		return pgxvec.RegisterTypes(ctx, conn)
	}
	// Every connection handed out acts for the request's tenant (and key): row-level security
	// reads the settings, and inserts take the tenant by default.
	pcfg.PrepareConn = func(ctx context.Context, conn *pgx.Conn) (bool, error) {
		if err := actFor(ctx, conn); err != nil {
			return false, err // the connection is destroyed: what it holds is unknown
		}
		return true, nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("store: %w: %w", ragd.ErrUnavailable, err)
	}
	h := &health{}
	return &Store{db: classifyDB{pool, h}, pool: pool, efSearch: cfg.EfSearch, searchSet: true, logger: cfg.Logger, health: h}, nil
}

// prepare runs on a single connection (the owner's, when there is one) before the pool exists,
// because the pool registers the vector type on connect and that type exists only after the first
// migration. login is the pool's login, which a separate owner makes a member of ragd_app.
func prepare(ctx context.Context, ccfg *pgx.ConnConfig, cfg Config, login string) error {
	conn, err := pgx.ConnectConfig(ctx, ccfg)
	if err != nil {
		return fmt.Errorf("store: connecting: %w: %w", ragd.ErrUnavailable, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	schema := cfg.Schema
	if schema == "" {
		schema = "public"
	}
	migrate := cfg.Migrate
	if migrate {
		// With nothing pending there is nothing to do: a login that may not migrate (ragd's own,
		// with no --migrate-database-url) serves a schema its owner migrated, where CREATE
		// SCHEMA's privilege check would refuse it. If the version cannot be read, migrating
		// says why. A newer schema is refused here, before a login that may not migrate tries.
		var exists bool
		err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists)
		migrate = err != nil || !exists
		if !migrate {
			err := migrations.Check(ctx, conn, schema)
			if errors.Is(err, migrations.ErrAhead) {
				return fmt.Errorf("store: %w", err)
			}
			migrate = err != nil
		}
	}
	if migrate {
		if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
			return fmt.Errorf("store: creating schema %s%s: %w", schema, cannotMigrate(err, ccfg.User), err)
		}
		opts := migrations.Options{Schema: schema, EmbeddingDim: cfg.EmbeddingDim, Logger: cfg.Logger}
		if err := migrations.Migrate(ctx, conn, opts); err != nil {
			return fmt.Errorf("store%s: %w", cannotMigrate(err, ccfg.User), err)
		}
	} else if !cfg.Migrate {
		if cfg.OwnerURL == "" {
			// A login that is only a member of ragd_app (NOINHERIT perhaps) reads the schema's
			// version as ragd_app.
			if _, err := conn.Exec(ctx, `SELECT CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = $1)
				AND pg_has_role(session_user, $1, 'MEMBER') THEN set_config('role', $1, false) END`, AppRole); err != nil {
				return fmt.Errorf("store: %w: %w", ragd.ErrUnavailable, err)
			}
		}
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
			return fmt.Errorf("store: %w: %w", ragd.ErrUnavailable, err)
		}
		if !exists {
			return fmt.Errorf("store: schema %q does not exist: %w", schema, migrations.ErrBehind)
		}
		if err := migrations.Check(ctx, conn, schema); err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	if cfg.OwnerURL != "" && login != ccfg.User {
		if err := grantApp(ctx, conn, login); err != nil {
			return err
		}
	}
	dim, err := embeddingDim(ctx, conn, schema)
	if err != nil {
		return err
	}
	if dim != cfg.EmbeddingDim {
		return fmt.Errorf("store: the database stores %d-dimensional embeddings but the embedding model gives %d: use a new database (or --schema) for this model", dim, cfg.EmbeddingDim)
	}
	return nil
}

func embeddingDim(ctx context.Context, conn *pgx.Conn, schema string) (int, error) {
	var dim int
	err := conn.QueryRow(ctx, `
		SELECT atttypmod FROM pg_attribute
		WHERE attrelid = to_regclass(quote_ident($1) || '.chunks') AND attname = 'embedding'`, schema).Scan(&dim)
	if err != nil {
		return 0, fmt.Errorf("store: reading embedding dimension: %w", err)
	}
	return dim, nil
}

// New wraps an existing connection or transaction, for tests and for work inside a transaction.
func New(db DB) *Store {
	h := &health{}
	return &Store{db: classifyDB{db, h}, efSearch: 100, logger: slog.Default(), health: h}
}

// Close releases the pool.
func (s *Store) Close() {
	if s.pool != nil {
		s.pool.Close()
	}
}

// Ping checks that the database answers and that it did not say its disk was full lately, for
// readiness probes.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("store: %w: %w", ragd.ErrUnavailable, err)
	}
	if s.health.diskFull() {
		return &unavailableError{"disk full", errors.New("PostgreSQL refused a write for lack of disk space")}
	}
	return nil
}

// InTx runs fn with a store bound to one transaction, committed when fn returns nil and rolled
// back otherwise. Inside a transaction it nests as a savepoint.
func (s *Store) InTx(ctx context.Context, fn func(tx *Store) error) error {
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(&Store{db: classifyDB{tx, s.health}, efSearch: s.efSearch, searchSet: s.searchSet, logger: s.logger, health: s.health, bulk: s.bulk}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("store: commit: %w", s.health.classify(err))
	}
	s.health.wrote()
	return nil
}

// seqLockKey serializes writers that take chunk_seq values, so sequence order is commit order
// and a reader catching up by sequence never skips a row committed late.
const seqLockKey = 0x72616764 // "ragd"

func lockSeq(ctx context.Context, db DB) error {
	if _, err := db.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", seqLockKey); err != nil {
		return fmt.Errorf("store: taking write lock: %w", err)
	}
	return nil
}

// changesChannel is notified when chunk changes commit; PostgreSQL delivers a NOTIFY only if its
// transaction commits, so a listener never catches up to a rolled-back write.
const changesChannel = "ragd_chunk_changes"

func notifyChanges(ctx context.Context, db DB) error {
	if _, err := db.Exec(ctx, "SELECT pg_notify($1, '')", changesChannel); err != nil {
		return fmt.Errorf("store: notify: %w", err)
	}
	return nil
}

// ListenChanges calls onChange whenever chunk changes commit, from any process, until ctx ends
// or the connection fails. It needs a pool (it holds one connection for the listen).
func (s *Store) ListenChanges(ctx context.Context, onChange func()) error {
	return s.listen(ctx, changesChannel, func(string) { onChange() })
}

// listen calls fn with the payload of every notification on channel until ctx ends or the
// connection fails, on a connection of its own from the pool.
func (s *Store) listen(ctx context.Context, channel string, fn func(payload string)) error {
	if s.pool == nil {
		return errors.New("store: listening needs a pool")
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: listen: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return fmt.Errorf("store: listen: %w", err)
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("store: listen: %w", err)
		}
		fn(n.Payload)
	}
}

// now is the store's clock; a var so tests can move it.
var now = func() time.Time { return time.Now().UTC() }
