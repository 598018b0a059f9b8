package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/store"
)

// An Idempotency-Key is recorded with its turn, refused to a second turn while it lives, and free
// again once it expires; recording a key prunes expired ones.
func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx := dbtest.TestTx(t)
	s := store.New(tx)
	turn := func(key string) (*ragd.TurnResult, error) {
		return s.Turn(ctx, ragd.ConversationRef{ID: uuid.Must(uuid.NewV7()), New: true}, func(*ragd.ConversationState) (*ragd.TurnWrite, error) {
			return &ragd.TurnWrite{UserMessage: "q", Answer: "a", Idempotency: &ragd.Idempotency{Key: key, RequestHash: []byte{1}}}, nil
		})
	}
	first, err := turn("k1")
	require.NoError(t, err)
	got, err := s.IdempotentTurn(ctx, "k1")
	require.NoError(t, err)
	require.Equal(t, first.AssistantMessageID, got.MessageID)
	require.Nil(t, got.Response, "no response until it is kept")
	require.NoError(t, s.SaveIdempotentResponse(ctx, "k1", []byte(`{"answer":"a"}`)))
	got, err = s.IdempotentTurn(ctx, "k1")
	require.NoError(t, err)
	require.JSONEq(t, `{"answer":"a"}`, string(got.Response))

	_, err = turn("k1")
	require.ErrorIs(t, err, ragd.ErrConflict, "a live key makes one turn")
	_, err = s.IdempotentTurn(ctx, "nope")
	require.ErrorIs(t, err, ragd.ErrNotFound)
	require.ErrorIs(t, s.SaveIdempotentResponse(ctx, "nope", []byte(`{}`)), ragd.ErrNotFound)

	// A day later the key is forgotten, and the next key prunes it.
	_, err = tx.Exec(ctx, `UPDATE idempotency_keys SET created_at = created_at - $1::interval WHERE key = 'k1'`, "25 hours")
	require.NoError(t, err)
	_, err = s.IdempotentTurn(ctx, "k1")
	require.True(t, errors.Is(err, ragd.ErrNotFound), "an expired key is not found: %v", err)
	again, err := turn("k1")
	require.NoError(t, err, "an expired key may be used again")
	got, err = s.IdempotentTurn(ctx, "k1")
	require.NoError(t, err)
	require.Equal(t, again.AssistantMessageID, got.MessageID)

	_, err = tx.Exec(ctx, `UPDATE idempotency_keys SET created_at = created_at - $1::interval WHERE key = 'k1'`, "25 hours")
	require.NoError(t, err)
	_, err = turn("k2")
	require.NoError(t, err)
	var left int
	require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE key = 'k1'`).Scan(&left))
	require.Zero(t, left, "recording a key pruned the expired one")
}
