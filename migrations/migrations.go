// Package migrations holds ragd's numbered SQL migrations, embedded in the binary and applied with
// tern (pgx-native, plain SQL files, templating for the embedding dimension).
package migrations

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/tern/v2/migrate"
)

//go:embed *.sql
var files embed.FS

// versionTable is tern's bookkeeping table, qualified by schema so a search_path that falls back
// to public never reads another schema's version.
func versionTable(schema string) string {
	if schema == "" {
		schema = "public"
	}
	return pgx.Identifier{schema, "schema_version"}.Sanitize()
}

// Options are what the SQL templates need.
type Options struct {
	// Schema holds the tables; "" means public. The connection's search_path must put it first.
	Schema string
	// EmbeddingDim is the length of chunks.embedding. It is fixed when the schema is created;
	// a model of another dimension needs a new database (or schema).
	EmbeddingDim int
	Logger       *slog.Logger
	// Version stops at that migration; 0 applies them all. Only tests of upgrades stop early.
	Version int32
}

func (o Options) validate() error {
	if o.EmbeddingDim < 1 || o.EmbeddingDim > 16000 {
		return fmt.Errorf("embedding dimension %d out of range 1..16000", o.EmbeddingDim)
	}
	return nil
}

// Migrate applies every pending migration. Concurrent callers are safe: tern holds an advisory
// lock while it migrates.
func Migrate(ctx context.Context, conn *pgx.Conn, opts Options) error {
	if err := opts.validate(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// tern would refuse too, but in its words (a current version "outside the valid versions").
	if err := Check(ctx, conn, opts.Schema); errors.Is(err, ErrAhead) {
		return fmt.Errorf("migrate: %w", err)
	}
	m, err := migrate.NewMigrator(ctx, conn, versionTable(opts.Schema))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// tern renders the templates while loading, so the data must be in place first.
	m.Data = map[string]any{"embedding_dim": opts.EmbeddingDim}
	if err := m.LoadMigrations(files); err != nil {
		return fmt.Errorf("migrate: loading migrations: %w", err)
	}
	if opts.Logger != nil {
		m.OnStart = func(seq int32, name, direction, _ string) {
			opts.Logger.InfoContext(ctx, "applying migration", slog.Int("seq", int(seq)), slog.String("name", name), slog.String("direction", direction))
		}
	}
	if opts.Version > 0 {
		err = m.MigrateTo(ctx, opts.Version)
	} else {
		err = m.Migrate(ctx)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// ErrBehind means the database schema is older than this binary's migrations.
var ErrBehind = errors.New("database schema is behind: run `ragd migrate`")

// ErrAhead means the database schema is newer than this binary's migrations: a newer ragd
// migrated it. ragd never migrates down.
var ErrAhead = errors.New("database schema is newer than this ragd: a newer ragd migrated it; run that version or a newer one (ragd never migrates down)")

// Check reports ErrBehind when migrations are pending in schema ("" is public), so a server never
// runs on an old schema, and ErrAhead when a newer ragd migrated it, so an older one never writes
// rows without what the newer schema keeps (a turn recorded by ragd of 009 left the conversation's
// sticky invariants of 011 without the one it stated). It only reads the version table (tern's
// migrator would try to create it, which ragd's unprivileged login may not), so ragd_app can check.
func Check(ctx context.Context, conn *pgx.Conn, schema string) error {
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		return fmt.Errorf("checking schema version: %w", err)
	}
	var v int32
	err = conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+versionTable(schema)).Scan(&v)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UndefinedTable:
		v = 0
	case err != nil:
		return fmt.Errorf("checking schema version: %w", err)
	}
	switch latest := int32(len(names)); {
	case v < latest:
		return fmt.Errorf("%w (at version %d of %d)", ErrBehind, v, latest)
	case v > latest:
		return fmt.Errorf("%w (at version %d; this ragd knows %d)", ErrAhead, v, latest)
	}
	return nil
}

// Fingerprint identifies the migrations' content; tests name their template databases with it so
// a changed migration never meets a stale template.
func Fingerprint() string {
	h := sha256.New()
	_ = fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}
