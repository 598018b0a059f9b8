package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd"
)

// IdempotencyTTL is how long an Idempotency-Key is remembered: a retry within it gets the first
// turn back; after it the key is free again.
const IdempotencyTTL = 24 * time.Hour

// idempotencyPrune is how many expired keys each new key removes: more than one, so the table
// shrinks whenever keys keep coming.
const idempotencyPrune = 10

// IdempotentTurn returns the turn an Idempotency-Key made within IdempotencyTTL, or ErrNotFound.
func (s *Store) IdempotentTurn(ctx context.Context, key string) (*ragd.IdempotentTurn, error) {
	var t ragd.IdempotentTurn
	err := s.db.QueryRow(ctx, `SELECT request_hash, conversation_id, message_id, response, created_at
		FROM idempotency_keys WHERE key = $1 AND created_at >= $2`, key, now().Add(-IdempotencyTTL)).Scan(&t.RequestHash, &t.ConversationID, &t.MessageID, &t.Response, &t.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("idempotency key %q: %w", key, ragd.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: reading idempotency key: %w", err)
	}
	return &t, nil
}

// SaveIdempotentResponse keeps the complete response of the turn a key made, for its retries.
func (s *Store) SaveIdempotentResponse(ctx context.Context, key string, response []byte) error {
	tag, err := s.db.Exec(ctx, `UPDATE idempotency_keys SET response = $2 WHERE key = $1`, key, response)
	if err != nil {
		return fmt.Errorf("store: saving the response of idempotency key %q: %w", key, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("idempotency key %q: %w", key, ragd.ErrNotFound)
	}
	return nil
}
