package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd"
)

// SaveFeedback records a rating of an assistant message of a conversation of the caller's
// tenant that is not deleted, replacing an earlier rating of the same message. Only the key that
// asked the turn rates its answer (or an admin), as only it records the reply. The turn's mode
// and arm are copied in from the message and its conversation. A flag on a source the message
// did not cite is invalid.
func (s *Store) SaveFeedback(ctx context.Context, f ragd.NewFeedback) (*ragd.Feedback, error) {
	if f.Rating != ragd.RatingUp && f.Rating != ragd.RatingDown {
		return nil, ragd.Invalidf("rating", "must be up or down, got %q", f.Rating)
	}
	var out *ragd.Feedback
	err := s.InTx(ctx, func(tx *Store) error {
		var role, mode, arm string
		var conv uuid.UUID
		var turn int
		var asker *uuid.UUID
		err := tx.db.QueryRow(ctx, `SELECT m.role, m.conversation_id, m.turn, coalesce(m.meta->>'mode', ''), coalesce(c.ab_arm, ''), m.key_id
			FROM messages m JOIN conversations c ON c.id = m.conversation_id
			WHERE m.id = $1 AND c.deleted_at IS NULL AND m.tenant_id = $2`, f.MessageID, tenantOf(ctx)).Scan(&role, &conv, &turn, &mode, &arm, &asker)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("message %s: %w", f.MessageID, ragd.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: reading message %s: %w", f.MessageID, err)
		}
		if role != "assistant" {
			return ragd.Invalidf("id", "message %s is the user's: feedback rates an answer", f.MessageID)
		}
		if p := ragd.PrincipalOf(ctx); p.Role != ragd.RoleAdmin && !p.All && asker != nil && *asker != p.KeyID {
			return fmt.Errorf("turn %d can be rated only by the key that asked it: %w", turn, ragd.ErrForbidden)
		}
		if err := tx.checkFlags(ctx, f); err != nil {
			return err
		}
		sources := f.Sources
		if sources == nil {
			sources = []ragd.SourceFlag{}
		}
		flags, err := json.Marshal(sources)
		if err != nil {
			return fmt.Errorf("store: encoding source flags: %w", err)
		}
		var previous string
		err = tx.db.QueryRow(ctx, `SELECT rating FROM message_feedback WHERE message_id = $1 AND tenant_id = $2 FOR UPDATE`,
			f.MessageID, tenantOf(ctx)).Scan(&previous)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("store: reading the rating of %s: %w", f.MessageID, err)
		}
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		ts := now()
		fb := ragd.Feedback{Tenant: tenantOf(ctx), MessageID: f.MessageID, ConversationID: conv, Turn: turn, Rating: f.Rating, Reason: f.Reason,
			Sources: sources, Mode: mode, Arm: arm, Previous: previous}
		err = tx.db.QueryRow(ctx, `
			INSERT INTO message_feedback (id, message_id, conversation_id, rating, reason, sources, mode, arm, created_at, updated_at, tenant_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10)
			ON CONFLICT (message_id) DO UPDATE SET rating = excluded.rating, reason = excluded.reason,
				sources = excluded.sources, updated_at = excluded.updated_at
			RETURNING id, created_at, updated_at`, id, f.MessageID, conv, f.Rating, f.Reason, flags, mode, arm, ts, tenantOf(ctx)).
			Scan(&fb.ID, &fb.CreatedAt, &fb.UpdatedAt)
		if err != nil {
			return fmt.Errorf("store: saving feedback on %s: %w", f.MessageID, err)
		}
		out = &fb
		return nil
	})
	return out, err
}

// checkFlags refuses flags on sources the message did not cite and flags that are not known.
func (s *Store) checkFlags(ctx context.Context, f ragd.NewFeedback) error {
	if len(f.Sources) == 0 {
		return nil
	}
	rows, err := s.db.Query(ctx, `SELECT DISTINCT rtrim(marker, '0123456789') FROM message_citations WHERE message_id = $1 AND tenant_id = $2`,
		f.MessageID, tenantOf(ctx))
	if err != nil {
		return fmt.Errorf("store: reading citations of %s: %w", f.MessageID, err)
	}
	letters, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("store: reading citations of %s: %w", f.MessageID, err)
	}
	for i, sf := range f.Sources {
		switch {
		case !slices.Contains(ragd.SourceFlags, sf.Flag):
			return ragd.Invalidf(fmt.Sprintf("sources[%d].flag", i), "must be one of %s, got %q", strings.Join(ragd.SourceFlags, ", "), sf.Flag)
		case !slices.Contains(letters, sf.Source):
			return ragd.Invalidf(fmt.Sprintf("sources[%d].source", i), "the message cites no source %q (it cites %s)", sf.Source, strings.Join(letters, ", "))
		}
	}
	return nil
}

const feedbackColumns = `f.id, f.tenant_id, f.message_id, f.conversation_id, m.turn, f.rating, f.reason, f.sources, f.mode, f.arm, f.created_at, f.updated_at`

func scanFeedback(row pgx.CollectableRow) (ragd.Feedback, error) {
	var f ragd.Feedback
	var flags []byte
	err := row.Scan(&f.ID, &f.Tenant, &f.MessageID, &f.ConversationID, &f.Turn, &f.Rating, &f.Reason, &flags, &f.Mode, &f.Arm, &f.CreatedAt, &f.UpdatedAt)
	if err == nil {
		err = json.Unmarshal(flags, &f.Sources)
	}
	return f, err
}

// Feedback calls fn for every feedback of the caller's tenant the filter selects (every
// tenant's for maintenance, ragd.AllTenants), in id order, streaming rows so an export of any
// size runs in constant memory. fn returning an error stops it.
func (s *Store) Feedback(ctx context.Context, f ragd.FeedbackFilter, fn func(ragd.Feedback) error) error {
	var w filter
	if !ragd.PrincipalOf(ctx).All {
		w.add("f.tenant_id = $%d", tenantOf(ctx))
	}
	if f.ConversationID != uuid.Nil {
		w.add("f.conversation_id = $%d", f.ConversationID)
	}
	if !f.From.IsZero() {
		w.add("f.updated_at >= $%d", f.From)
	}
	if !f.To.IsZero() {
		w.add("f.updated_at < $%d", f.To)
	}
	if f.AfterID != uuid.Nil {
		w.add("f.id > $%d", f.AfterID)
	}
	q := "SELECT " + feedbackColumns + " FROM message_feedback f JOIN messages m ON m.id = f.message_id" + w.where() +
		" ORDER BY f.id"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return stream(ctx, s, "feedback", q, w.args, scanFeedback, fn)
}

// ModeBaselines returns the persisted drift baselines of the caller's tenant (of every tenant for
// maintenance, ragd.AllTenants), by tenant, as the mode package wrote them.
func (s *Store) ModeBaselines(ctx context.Context) (map[uuid.UUID][]byte, error) {
	q, args := `SELECT tenant_id, baseline FROM mode_baselines`, []any{}
	if !ragd.PrincipalOf(ctx).All {
		q, args = q+` WHERE tenant_id = $1`, append(args, tenantOf(ctx))
	}
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: reading mode baselines: %w", err)
	}
	out := map[uuid.UUID][]byte{}
	var tenant uuid.UUID
	var b []byte
	_, err = pgx.ForEachRow(rows, []any{&tenant, &b}, func() error {
		out[tenant] = append([]byte(nil), b...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: reading mode baselines: %w", err)
	}
	return out, nil
}

// SaveModeBaseline persists the caller's tenant's drift baseline (JSON), replacing the one it had.
func (s *Store) SaveModeBaseline(ctx context.Context, baseline []byte) error {
	if !json.Valid(baseline) {
		return ragd.Invalidf("baseline", "is not JSON")
	}
	_, err := s.db.Exec(ctx, `INSERT INTO mode_baselines (tenant_id, baseline, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (tenant_id) DO UPDATE SET baseline = excluded.baseline, updated_at = excluded.updated_at`, tenantOf(ctx), baseline, now())
	if err != nil {
		return fmt.Errorf("store: saving the mode baseline: %w", err)
	}
	return nil
}

// NextExperimentSlot hands out the caller's tenant's next assignment slot of an experiment
// design: 0, 1, 2, ... in the order new conversations ask, whichever server asks.
func (s *Store) NextExperimentSlot(ctx context.Context, design string) (int64, error) {
	var slot int64
	err := s.db.QueryRow(ctx, `INSERT INTO experiment_slots (tenant_id, design, next_slot) VALUES ($1, $2, 1)
		ON CONFLICT (tenant_id, design) DO UPDATE SET next_slot = experiment_slots.next_slot + 1
		RETURNING next_slot - 1`, tenantOf(ctx), design).Scan(&slot)
	if err != nil {
		return 0, fmt.Errorf("store: taking an experiment slot: %w", err)
	}
	return slot, nil
}

// ExperimentStats returns, for the caller's tenant, per arm (the conversation's, fixed at its first turn) and mode (the
// turn's), the turns of the filter's period with their context tokens, latency and feedback.
func (s *Store) ExperimentStats(ctx context.Context, f ragd.ExperimentFilter) ([]ragd.ArmStratum, error) {
	w := filter{conds: []string{"m.role = 'assistant'"}}
	w.add("m.tenant_id = $%d", tenantOf(ctx))
	if !f.From.IsZero() {
		w.add("m.created_at >= $%d", f.From)
	}
	if !f.To.IsZero() {
		w.add("m.created_at < $%d", f.To)
	}
	q := `SELECT coalesce(c.ab_arm, ''), coalesce(m.meta->>'mode', ''), count(*), count(DISTINCT m.conversation_id),
			coalesce(sum((m.meta->'context'->>'used')::bigint), 0), coalesce(sum((m.meta->>'latency_ms')::bigint), 0),
			count(fb.id), count(fb.id) FILTER (WHERE fb.rating = 'up'), count(fb.id) FILTER (WHERE fb.rating = 'down')
		FROM messages m
		JOIN conversations c ON c.id = m.conversation_id
		LEFT JOIN message_feedback fb ON fb.message_id = m.id` + w.where() + `
		GROUP BY 1, 2 ORDER BY 1, 2`
	rows, err := s.db.Query(ctx, q, w.args...)
	if err != nil {
		return nil, fmt.Errorf("store: reading experiment figures: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ragd.ArmStratum])
	if err != nil {
		return nil, fmt.Errorf("store: reading experiment figures: %w", err)
	}
	return out, nil
}
