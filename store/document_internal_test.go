package store

import (
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
	rows, err := tx.Query(ctx, "EXPLAIN "+currentVersionsSQL, []string{"a", "b"}, ragd.DefaultTenant)
	require.NoError(t, err)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	// The lookup is an index search on both columns, not a scan of the table or of an index.
	require.Regexp(t, `Index Scan using documents_tenant_source_key on documents d[^\n]*\n\s*Index Cond: \(\(tenant_id = [^\n]*AND \(source_key = ANY`, strings.Join(plan, "\n"))
}
