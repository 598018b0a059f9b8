package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// BulkConfig tunes LoadThenIndex.
type BulkConfig struct {
	// MaintenanceWorkMem is PostgreSQL's maintenance_work_mem for the index build. pgvector
	// builds the HNSW graph in memory while it fits and much more slowly once it does not: at
	// 1M x 384 the graph takes about 3 GB.
	MaintenanceWorkMem string
	// ParallelWorkers is max_parallel_maintenance_workers for the build; 0 keeps the server's.
	ParallelWorkers int
}

// LoadStats says where a bulk load spent its time.
type LoadStats struct {
	DropIndex  time.Duration
	BuildIndex time.Duration
	Analyze    time.Duration
	Indexes    []string // the vector indexes rebuilt
}

// LoadThenIndex runs load in one transaction with the chunks' vector (HNSW) indexes dropped, and
// builds them again before it commits. Inserting into an HNSW index costs a graph search per row
// (300-700 rows/s measured on 2 cores), COPY into an unindexed table about 100k rows/s, and one
// build at the end a fraction of the inserts' time. The indexes are rebuilt from their own
// definitions read from the catalog, so the migrations stay their one source. Everything is one
// transaction, so a failure or a crash leaves the table and its indexes as they were.
//
// Dropping an index locks the table until the commit: readers wait. It is meant for loading a
// corpus before serving it (ragd eval scale), not beside a server answering from the table.
func (s *Store) LoadThenIndex(ctx context.Context, cfg BulkConfig, load func(ctx context.Context, tx *Store) error) (LoadStats, error) {
	var st LoadStats
	err := s.InTx(ctx, func(tx *Store) error {
		tx.bulk = &bulkLoad{}
		defs, err := tx.vectorIndexes(ctx)
		if err != nil {
			return err
		}
		t := time.Now()
		err = tx.asOwner(ctx, func() error {
			for _, d := range defs {
				if _, err := tx.db.Exec(ctx, "DROP INDEX "+pgx.Identifier{d.Schema, d.Name}.Sanitize()); err != nil {
					return fmt.Errorf("store: dropping %s before the load: %w", d.Name, err)
				}
				st.Indexes = append(st.Indexes, d.Name)
			}
			return nil
		})
		if err != nil {
			return err
		}
		st.DropIndex = time.Since(t)
		if err := load(ctx, tx); err != nil {
			return err
		}
		t = time.Now()
		if err := tx.asOwner(ctx, func() error { return tx.buildIndexes(ctx, cfg, defs) }); err != nil {
			return err
		}
		st.BuildIndex = time.Since(t)
		// Without statistics the planner guesses that a tenant has a few dozen chunks and sorts
		// them all by distance instead of searching the HNSW index: 65 ms instead of 7 at 10k,
		// and linear in the corpus. Autovacuum would analyze the table a minute or more after the
		// commit; a server started at once would plan its first searches blind.
		t = time.Now()
		if err := tx.asOwner(ctx, func() error {
			if _, err := tx.db.Exec(ctx, "ANALYZE chunks"); err != nil {
				return fmt.Errorf("store: analyzing chunks after the load: %w", err)
			}
			return nil
		}); err != nil {
			return err
		}
		st.Analyze = time.Since(t)
		return nil
	})
	return st, err
}

// bulkLoad keeps a load's lookups on their indexes. The load is one transaction, so autovacuum
// never sees its tables grow, and the planner keeps the statistics of tables that were empty:
// ingest's source-key lookup (currentVersionsSQL) then read every document of the tenant for each
// batch, and a 1M-document load slowed from 100k documents a minute to 100k in 14. The load
// analyzes the tables it grows each time they double, as autovacuum would between transactions:
// about ten times for a million documents, a fraction of a second each.
type bulkLoad struct {
	written, analyzedAt int // documents saved by the load, and when it last analyzed
}

// bulkFirstAnalyze is how many documents a load saves before its first ANALYZE: below that,
// any plan reads little.
const bulkFirstAnalyze = 1000

// saved counts n more documents saved by the load in s, and analyzes the tables the source-key
// lookup reads when they have doubled since the last time.
func (b *bulkLoad) saved(ctx context.Context, s *Store, n int) error {
	b.written += n
	if b.written < max(bulkFirstAnalyze, 2*b.analyzedAt) {
		return nil
	}
	b.analyzedAt = b.written
	// Only the tables' owner may analyze them (ragd_app would get a warning and no statistics).
	return s.asOwner(ctx, func() error {
		if _, err := s.db.Exec(ctx, "ANALYZE documents, document_versions"); err != nil {
			return fmt.Errorf("store: analyzing documents during the load: %w", err)
		}
		return nil
	})
}

// asOwner runs fn, inside s's transaction, as the login user, who ran the migrations and owns
// the tables: ragd works as ragd_app, which may neither drop nor create their indexes. The load
// between the two stays ragd_app's, under row-level security like any ingest.
func (s *Store) asOwner(ctx context.Context, fn func() error) error {
	var role string
	if err := s.db.QueryRow(ctx, "SELECT current_user").Scan(&role); err != nil {
		return fmt.Errorf("store: reading the current role: %w", err)
	}
	if _, err := s.db.Exec(ctx, "SET LOCAL ROLE NONE"); err != nil {
		return fmt.Errorf("store: acting as the owner of the tables: %w", err)
	}
	if err := fn(); err != nil {
		return err
	}
	if _, err := s.db.Exec(ctx, "SET LOCAL ROLE "+pgx.Identifier{role}.Sanitize()); err != nil {
		return fmt.Errorf("store: acting as %s again: %w", role, err)
	}
	return nil
}

type indexDef struct {
	Schema, Name, SQL string
}

// vectorIndexes lists the HNSW indexes on chunks with their CREATE statements.
func (s *Store) vectorIndexes(ctx context.Context) ([]indexDef, error) {
	rows, err := s.db.Query(ctx, `
		SELECT n.nspname, i.relname, pg_get_indexdef(i.oid)
		FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_namespace n ON n.oid = i.relnamespace
		JOIN pg_am am ON am.oid = i.relam
		WHERE x.indrelid = 'chunks'::regclass AND am.amname = 'hnsw'
		ORDER BY i.relname`)
	if err != nil {
		return nil, fmt.Errorf("store: reading vector indexes: %w", err)
	}
	defs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[indexDef])
	if err != nil {
		return nil, fmt.Errorf("store: reading vector indexes: %w", err)
	}
	return defs, nil
}

// buildIndexes creates the indexes with the build's settings, local to the transaction s is in.
func (s *Store) buildIndexes(ctx context.Context, cfg BulkConfig, defs []indexDef) error {
	if cfg.MaintenanceWorkMem != "" {
		if _, err := s.db.Exec(ctx, "SELECT set_config('maintenance_work_mem', $1, true)", cfg.MaintenanceWorkMem); err != nil {
			return fmt.Errorf("store: maintenance_work_mem %q: %w", cfg.MaintenanceWorkMem, err)
		}
	}
	if cfg.ParallelWorkers > 0 {
		if _, err := s.db.Exec(ctx, "SELECT set_config('max_parallel_maintenance_workers', $1, true)", fmt.Sprint(cfg.ParallelWorkers)); err != nil {
			return fmt.Errorf("store: max_parallel_maintenance_workers: %w", err)
		}
	}
	for _, d := range defs {
		t := time.Now()
		if _, err := s.db.Exec(ctx, d.SQL); err != nil {
			return fmt.Errorf("store: building %s: %w", d.Name, err)
		}
		s.logger.InfoContext(ctx, "vector index built", slog.String("index", d.Name), slog.Duration("took", time.Since(t)))
	}
	return nil
}

// Sizes are the bytes on disk of the chunks table and of each of its indexes.
type Sizes struct {
	ChunksTable int64            // heap and TOAST, without indexes
	Indexes     map[string]int64 // by index name
}

// StorageSizes reads the on-disk sizes of the chunks table and its indexes.
func (s *Store) StorageSizes(ctx context.Context) (Sizes, error) {
	out := Sizes{Indexes: map[string]int64{}}
	if err := s.db.QueryRow(ctx, "SELECT pg_table_size('chunks')").Scan(&out.ChunksTable); err != nil {
		return out, fmt.Errorf("store: table size: %w", err)
	}
	rows, err := s.db.Query(ctx, `
		SELECT i.relname, pg_relation_size(i.oid)
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid = 'chunks'::regclass`)
	if err != nil {
		return out, fmt.Errorf("store: index sizes: %w", err)
	}
	var name string
	var size int64
	_, err = pgx.ForEachRow(rows, []any{&name, &size}, func() error {
		out.Indexes[name] = size
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("store: index sizes: %w", err)
	}
	return out, nil
}

// SharedBuffers returns the size of the server's shared buffers (shared_buffers) in bytes: an
// index searched often answers from memory only while it fits there.
func (s *Store) SharedBuffers(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.QueryRow(ctx, `SELECT setting::bigint * current_setting('block_size')::bigint
		FROM pg_settings WHERE name = 'shared_buffers'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: shared_buffers: %w", err)
	}
	return n, nil
}

// Prewarm reads every page of index into PostgreSQL's shared buffers with pg_prewarm (a contrib
// extension, created when missing, which takes a superuser login) and returns how many it read.
// Pages past the size of the shared buffers evict the ones read first.
func (s *Store) Prewarm(ctx context.Context, index string) (int64, error) {
	var blocks int64
	err := s.InTx(ctx, func(tx *Store) error {
		return tx.asOwner(ctx, func() error {
			if _, err := tx.db.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_prewarm SCHEMA public"); err != nil {
				return fmt.Errorf("store: creating pg_prewarm: %w", err)
			}
			var schema string
			err := tx.db.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
				WHERE e.extname = 'pg_prewarm'`).Scan(&schema)
			if err != nil {
				return fmt.Errorf("store: finding pg_prewarm: %w", err)
			}
			q := fmt.Sprintf("SELECT %s.pg_prewarm($1::regclass, 'buffer')", pgx.Identifier{schema}.Sanitize())
			if err := tx.db.QueryRow(ctx, q, index).Scan(&blocks); err != nil {
				return fmt.Errorf("store: prewarming %s: %w", index, err)
			}
			return nil
		})
	})
	return blocks, err
}

// DataDirectory returns the server's data directory, or "" when the role may not read it.
func (s *Store) DataDirectory(ctx context.Context) (dataDir string, err error) {
	err = s.db.QueryRow(ctx, "SELECT coalesce(current_setting('data_directory', true), '')").Scan(&dataDir)
	if err != nil {
		return "", fmt.Errorf("store: data directory: %w", err)
	}
	return dataDir, nil
}

// SearchVectorExact is SearchVector without the index: the true k nearest active chunks, by a
// scan of the table. For measuring the recall of the HNSW search; slow on large tables.
func (s *Store) SearchVectorExact(ctx context.Context, q []float32, k int) ([]int64, error) {
	var ids []int64
	err := s.InTx(ctx, func(tx *Store) error {
		if _, err := tx.db.Exec(ctx, "SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off"); err != nil {
			return fmt.Errorf("store: exact search settings: %w", err)
		}
		rows, err := tx.db.Query(ctx, `SELECT id FROM chunks WHERE active AND embedding IS NOT NULL
			ORDER BY embedding <=> $1 LIMIT $2`, pgvector.NewVector(q), k)
		if err != nil {
			return fmt.Errorf("store: exact search: %w", err)
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("store: exact search: %w", err)
		}
		return nil
	})
	return ids, err
}

// CountChunks returns how many chunks are searchable.
func (s *Store) CountChunks(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, "SELECT count(*) FROM chunks WHERE active").Scan(&n); err != nil {
		return 0, fmt.Errorf("store: counting chunks: %w", err)
	}
	return n, nil
}

// DropSchema removes a schema and everything in it. It refuses public: it exists for the
// throwaway schemas of evaluation runs.
func DropSchema(ctx context.Context, url, schema string) error {
	if schema == "" || schema == "public" {
		return fmt.Errorf("store: refusing to drop schema %q", schema)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("store: connecting: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("store: dropping schema %s: %w", schema, err)
	}
	return nil
}
