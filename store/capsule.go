package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd"
)

// capsules reads the capsules of a conversation's finished goals, oldest first.
func (s *Store) capsules(ctx context.Context, conv uuid.UUID) ([]ragd.Capsule, error) {
	rows, err := s.db.Query(ctx, `SELECT first_turn, last_turn, text, method FROM goal_capsules
		WHERE conversation_id = $1 ORDER BY first_turn`, conv)
	if err != nil {
		return nil, fmt.Errorf("store: reading capsules of %s: %w", conv, err)
	}
	caps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ragd.Capsule, error) {
		var c ragd.Capsule
		err := row.Scan(&c.First, &c.Last, &c.Text, &c.Method)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: reading capsules of %s: %w", conv, err)
	}
	return caps, nil
}

// queueCapsules adds the capsules a turn wrote to its batch. A goal has one capsule: a second
// one for the same goal fails the turn.
func queueCapsules(b *pgx.Batch, conv uuid.UUID, caps []ragd.Capsule, ts time.Time) {
	for _, c := range caps {
		b.Queue(`INSERT INTO goal_capsules (conversation_id, first_turn, last_turn, text, method, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, conv, c.First, c.Last, c.Text, c.Method, ts)
	}
}
