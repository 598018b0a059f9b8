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
	_, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off")
	require.NoError(t, err)
	rows, err := tx.Query(ctx, "EXPLAIN "+currentVersionsSQL, []string{"a", "b"}, ragd.DefaultTenant)
	require.NoError(t, err)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, strings.Join(plan, "\n"), "documents_tenant_source_key")
}
