package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd"
)

// IdempotentTurn returns the turn an Idempotency-Key made, or ErrNotFound.
func (s *Store) IdempotentTurn(ctx context.Context, key string) (*ragd.IdempotentTurn, error) {
	var t ragd.IdempotentTurn
	err := s.db.QueryRow(ctx, `SELECT request_hash, conversation_id, message_id, response, created_at
		FROM idempotency_keys WHERE key = $1`, key).Scan(&t.RequestHash, &t.ConversationID, &t.MessageID, &t.Response, &t.CreatedAt)
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
