package store

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/internal/dbtest"
)

// A conversation's rows name their conversation and its tenant in one foreign key (migration
// 012): a message written under another tenant than its conversation's is refused, which the
// two keys it replaced (conversation, tenant apart) let through; one under the conversation's
// own tenant is written. Every table of a conversation's rows has that key and neither of the
// two it replaced.
func TestConversationRowsBelongToTheConversationsTenant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx := dbtest.TestTx(t)
	other := uuid.New()
	_, err := tx.Exec(ctx, `INSERT INTO tenants (id, name) VALUES ($1, $2)`, other, "other-"+other.String()[:8])
	require.NoError(t, err)
	conv := uuid.New()
	_, err = tx.Exec(ctx, `SELECT set_config('ragd.tenant', $1, true)`, ragd.DefaultTenant.String())
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `INSERT INTO conversations (id) VALUES ($1)`, conv)
	require.NoError(t, err)

	insert := `INSERT INTO messages (id, conversation_id, turn, role, content) VALUES ($1, $2, 1, 'user', 'hi')`
	_, err = tx.Exec(ctx, `SAVEPOINT s`)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT set_config('ragd.tenant', $1, true)`, other.String())
	require.NoError(t, err)
	_, err = tx.Exec(ctx, insert, uuid.New(), conv)
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "a message of another tenant's conversation is refused: %v", err)
	require.Equal(t, "23503", pgErr.Code)
	require.Equal(t, "messages_conversation_tenant_fkey", pgErr.ConstraintName)
	_, err = tx.Exec(ctx, `ROLLBACK TO SAVEPOINT s`)
	require.NoError(t, err)

	_, err = tx.Exec(ctx, `SELECT set_config('ragd.tenant', $1, true)`, ragd.DefaultTenant.String())
	require.NoError(t, err)
	_, err = tx.Exec(ctx, insert, uuid.New(), conv)
	require.NoError(t, err, "a message of the tenant's own conversation is written")

	rows, err := tx.Query(ctx, `
		SELECT c.conrelid::regclass::text, pg_get_constraintdef(c.oid)
		FROM pg_constraint c
		WHERE c.contype = 'f' AND c.conrelid::regclass::text = ANY ($1)
		  AND (c.confrelid = 'conversations'::regclass OR c.confrelid = 'tenants'::regclass)
		ORDER BY 1`, []string{"messages", "message_citations", "conversation_markers", "conversation_sources",
		"goal_capsules", "idempotency_keys", "message_feedback"})
	require.NoError(t, err)
	keys := map[string][]string{}
	for rows.Next() {
		var table, def string
		require.NoError(t, rows.Scan(&table, &def))
		keys[table] = append(keys[table], def)
	}
	require.NoError(t, rows.Err())
	require.Len(t, keys, 7)
	for table, defs := range keys {
		require.Equal(t, []string{"FOREIGN KEY (conversation_id, tenant_id) REFERENCES conversations(id, tenant_id)"}, defs, table)
	}
}
