package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/internal/dbtest"
)

// Ingest's lookup of documents by source key can use the (tenant_id, source_key) index: a plan
// that had to scan the documents table made every batch of a large load slower than the last.
func TestCurrentVersionsUsesTheSourceKeyIndex(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tx := dbtest.TestTx(t)
	// With an empty table the planner's guesses make a full scan of another index as cheap as the
	// lookup, and which one it picks moves with what other tests leave in the statistics: give it
	// a table worth an index, and its statistics.
	_, err := tx.Exec(ctx, `INSERT INTO documents (id, source_key, format, version, tenant_id)
		SELECT gen_random_uuid(), 'key-' || g, 'text', 1, $1 FROM generate_series(1, 5000) g`, ragd.DefaultTenant)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `INSERT INTO document_versions (doc_id, version, content_hash, bytes, chunk_count, tenant_id)
		SELECT id, 1, 'hash', 1, 1, tenant_id FROM documents`)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "ANALYZE documents, document_versions")
	require.NoError(t, err)
	requireSourceKeyIndexSearch(t, tx)
}

// A bulk load is one transaction, whose growth autovacuum cannot see: without the statistics the
// load gathers as it goes, the lookup read every document of the tenant for each batch.
func TestLoadKeepsTheSourceKeyLookupOnItsIndex(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := New(dbtest.OwnTx(t))
	_, err := s.LoadThenIndex(ctx, BulkConfig{MaintenanceWorkMem: "64MB"}, func(ctx context.Context, tx *Store) error {
		for b := range 5 {
			vs := make([]ragd.NewVersion, 250)
			for i := range vs {
				key := fmt.Sprintf("grow-%d-%d", b, i)
				vs[i] = ragd.NewVersion{SourceKey: key, Format: "text", ContentHash: "h", Bytes: 1,
					Chunks: []ragd.Chunk{{Text: key, CharEnd: len(key), Tokens: 1}}}
			}
			if _, err := tx.SaveVersions(ctx, vs); err != nil {
				return err
			}
		}
		var tuples float64
		require.NoError(t, tx.db.QueryRow(ctx, "SELECT reltuples FROM pg_class WHERE oid = 'documents'::regclass").Scan(&tuples))
		require.GreaterOrEqual(t, tuples, float64(bulkFirstAnalyze), "the load has analyzed the documents it saved")
		requireSourceKeyIndexSearch(t, tx.db)
		return nil
	})
	require.NoError(t, err)
}

// requireSourceKeyIndexSearch checks that the lookup is an index search on both columns, not a
// scan of the table or of an index.
func requireSourceKeyIndexSearch(t *testing.T, db DB) {
	t.Helper()
	rows, err := db.Query(t.Context(), "EXPLAIN "+currentVersionsSQL, []string{"a", "b"}, ragd.DefaultTenant)
	require.NoError(t, err)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Regexp(t, `Index Scan using documents_tenant_source_key on documents d[^\n]*\n\s*Index Cond: \(\(tenant_id = [^\n]*AND \(source_key = ANY`, strings.Join(plan, "\n"))
}
