package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd"
)

const citationSelect = `
	SELECT mc.id, mc.message_id, mc.conversation_id, mc.marker, mc.fact_summary, mc.score, mc.origin, mc.rank,
	       mc.doc_id, mc.doc_version, v.title, coalesce(d.url, ''), coalesce(d.path, ''), mc.chunk_id, c.text,
	       coalesce(mc.page_start, 0), coalesce(mc.page_end, 0), mc.created_at
	FROM message_citations mc
	JOIN chunks c ON c.id = mc.chunk_id
	JOIN document_versions v ON v.doc_id = mc.doc_id AND v.version = mc.doc_version
	JOIN documents d ON d.id = mc.doc_id`

func scanCitation(row pgx.CollectableRow) (ragd.Citation, error) {
	var c ragd.Citation
	err := row.Scan(&c.ID, &c.MessageID, &c.ConversationID, &c.Marker, &c.Fact, &c.Score, &c.Origin, &c.Rank,
		&c.DocID, &c.DocVersion, &c.DocTitle, &c.DocURL, &c.DocPath, &c.ChunkID, &c.ChunkText,
		&c.PageStart, &c.PageEnd, &c.CreatedAt)
	return c, err
}

// MessageCitations returns the citations of one message in answer order. A message without
// citations (a user message, or a turn that found nothing) has none; an unknown id is an error.
func (s *Store) MessageCitations(ctx context.Context, msg uuid.UUID) ([]ragd.Citation, error) {
	var exists bool
	if err := s.db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM messages WHERE id = $1)", msg).Scan(&exists); err != nil {
		return nil, fmt.Errorf("store: reading message %s: %w", msg, err)
	}
	if !exists {
		return nil, fmt.Errorf("message %s: %w", msg, ragd.ErrNotFound)
	}
	rows, err := s.db.Query(ctx, citationSelect+` WHERE mc.message_id = $1 ORDER BY mc.rank, mc.id`, msg)
	if err != nil {
		return nil, fmt.Errorf("store: reading citations of %s: %w", msg, err)
	}
	cs, err := pgx.CollectRows(rows, scanCitation)
	if err != nil {
		return nil, fmt.Errorf("store: reading citations of %s: %w", msg, err)
	}
	return cs, nil
}

// Citations calls fn for every citation the filter selects, in id (creation) order, streaming
// rows so an export of any size runs in constant memory. fn returning an error stops it.
func (s *Store) Citations(ctx context.Context, f ragd.CitationFilter, fn func(ragd.Citation) error) error {
	var w filter
	w.add("mc.tenant_id = $%d", tenantOf(ctx))
	if f.ConversationID != uuid.Nil {
		w.add("mc.conversation_id = $%d", f.ConversationID)
	}
	if f.DocID != uuid.Nil {
		w.add("mc.doc_id = $%d", f.DocID)
	}
	if !f.From.IsZero() {
		w.add("mc.created_at >= $%d", f.From)
	}
	if !f.To.IsZero() {
		w.add("mc.created_at < $%d", f.To)
	}
	if f.AfterID > 0 {
		w.add("mc.id > $%d", f.AfterID)
	}
	q := citationSelect + w.where() + " ORDER BY mc.id"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return stream(ctx, s, "citations", q, w.args, scanCitation, fn)
}

// stream runs a query and calls fn for each row as scan reads it, in constant memory: the
// audit exports. fn returning an error stops it with that error.
func stream[T any](ctx context.Context, s *Store, what, q string, args []any, scan func(pgx.CollectableRow) (T, error), fn func(T) error) error {
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("store: reading %s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return fmt.Errorf("store: reading %s: %w", what, err)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: reading %s: %w", what, err)
	}
	return nil
}
