package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// A stop of an answer stream may reach any replica while another sends the stream: the replica
// asked notifies stopChannel with the message id, every replica listens (ListenStops), the one
// that streams it stops and records the stop, and StopAnswer notifies stoppedChannel, which the
// replica asked waits for (RequestStop).
const (
	stopChannel    = "ragd_stop"
	stoppedChannel = "ragd_stopped"
)

// ListenStops calls onStop with every message whose stream a process asked to stop, until ctx
// ends or the connection fails. It needs a pool (it holds one connection for the listen).
func (s *Store) ListenStops(ctx context.Context, onStop func(msg uuid.UUID)) error {
	return s.listen(ctx, stopChannel, func(payload string) {
		if id, err := uuid.Parse(payload); err == nil {
			onStop(id)
		}
	})
}

// RequestStop asks every process to stop the answer stream of msg, and waits up to wait for the
// stop to be recorded. It reports false when none recorded it: no process streams it.
func (s *Store) RequestStop(ctx context.Context, msg uuid.UUID, wait time.Duration) (bool, error) {
	if s.pool == nil {
		return false, errors.New("store: requesting a stop needs a pool")
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("store: requesting a stop: %w", err)
	}
	// The connection listened: it goes back to the pool only after UNLISTEN.
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "UNLISTEN "+pgx.Identifier{stoppedChannel}.Sanitize())
		conn.Release()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{stoppedChannel}.Sanitize()); err != nil {
		return false, fmt.Errorf("store: requesting a stop: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_notify($1, $2)", stopChannel, msg.String()); err != nil {
		return false, fmt.Errorf("store: requesting a stop: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		n, err := conn.Conn().WaitForNotification(wctx)
		switch {
		case err != nil && ctx.Err() == nil && wctx.Err() != nil:
			return false, nil // nobody streams it
		case err != nil:
			return false, fmt.Errorf("store: requesting a stop: %w", err)
		case n.Payload == msg.String():
			return true, nil
		}
	}
}
