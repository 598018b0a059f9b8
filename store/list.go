package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd"
)

// validatePage rejects a page that could return nothing.
func validatePage(p ragd.Page) error {
	if p.Limit < 1 {
		return fmt.Errorf("store: page limit %d must be at least 1", p.Limit)
	}
	return nil
}

// keysetClause adds "(at, id) < (after)" to a query ordered by at DESC, id DESC.
func keysetClause(p ragd.Page, at, id string, args []any) (string, []any) {
	if p.After == nil {
		return "", args
	}
	args = append(args, p.After.At, p.After.ID)
	return fmt.Sprintf(" AND (%s, %s) < ($%d, $%d)", at, id, len(args)-1, len(args)), args
}

// previewChars is how much of a conversation's first question its summary shows.
const previewChars = 120

// ListConversations returns a page of the conversations that are not deleted, most recently
// active first (a turn or a pin makes a conversation active; a rename does not).
func (s *Store) ListConversations(ctx context.Context, p ragd.Page) ([]ragd.ConversationSummary, error) {
	if err := validatePage(p); err != nil {
		return nil, err
	}
	where, args := keysetClause(p, "c.updated_at", "c.id", nil)
	args = append(args, p.Limit)
	rows, err := s.db.Query(ctx, `
		SELECT c.id, c.title, c.turn, c.next_letter, c.goal_turn, coalesce(c.ab_arm, ''), c.created_at, c.updated_at,
		       coalesce((SELECT left(m.content, `+fmt.Sprint(previewChars)+`) FROM messages m
		                 WHERE m.conversation_id = c.id AND m.role = 'user' ORDER BY m.turn LIMIT 1), '')
		FROM conversations c
		WHERE c.deleted_at IS NULL`+where+`
		ORDER BY c.updated_at DESC, c.id DESC
		LIMIT $`+fmt.Sprint(len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("store: listing conversations: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ragd.ConversationSummary, error) {
		var c ragd.ConversationSummary
		err := row.Scan(&c.ID, &c.Title, &c.Turn, &c.NextLetter, &c.GoalTurn, &c.ABArm, &c.CreatedAt, &c.UpdatedAt, &c.Preview)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: listing conversations: %w", err)
	}
	return out, nil
}

// RenameConversation sets a conversation's title ("" clears it).
func (s *Store) RenameConversation(ctx context.Context, id uuid.UUID, title string) (*ragd.Conversation, error) {
	c, err := scanConversation(s.db.QueryRow(ctx, `UPDATE conversations SET title = $2 WHERE id = $1 AND deleted_at IS NULL
		RETURNING `+conversationColumns, id, title))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("conversation %s: %w", id, ragd.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: renaming conversation %s: %w", id, err)
	}
	return &c, nil
}

// DeleteConversation hides a conversation from chat: it leaves the list, and asking, pinning or
// reading it as a chat is not found from then on. Its messages and citations stay, unchanged,
// for auditors. Deleting it again is not found.
func (s *Store) DeleteConversation(ctx context.Context, id uuid.UUID) error {
	tag, err := s.db.Exec(ctx, `UPDATE conversations SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL`, id, now())
	if err != nil {
		return fmt.Errorf("store: deleting conversation %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("conversation %s: %w", id, ragd.ErrNotFound)
	}
	return nil
}

// ListDocuments returns a page of the documents in search (not deleted), most recently updated
// first, with their current version's details.
func (s *Store) ListDocuments(ctx context.Context, f ragd.DocumentFilter) ([]ragd.DocumentSummary, error) {
	if err := validatePage(f.Page); err != nil {
		return nil, err
	}
	var args []any
	where := ""
	if q := strings.TrimSpace(f.Query); q != "" {
		args = append(args, "%"+likeEscaper.Replace(q)+"%")
		where = ` AND (d.title ILIKE $1 OR d.source_key ILIKE $1 OR coalesce(d.url, '') ILIKE $1 OR coalesce(d.path, '') ILIKE $1)`
	}
	ks, args := keysetClause(f.Page, "d.updated_at", "d.id", args)
	args = append(args, f.Limit)
	rows, err := s.db.Query(ctx, `
		SELECT d.id, d.source_key, d.format, d.title, coalesce(d.url, ''), coalesce(d.path, ''), d.version,
		       d.created_at, d.updated_at, d.deleted_at,
		       v.doc_id, v.version, v.content_hash, v.title, v.published_at, v.ingested_at, v.chunk_count, v.bytes
		FROM documents d
		JOIN document_versions v ON v.doc_id = d.id AND v.version = d.version
		WHERE d.deleted_at IS NULL`+where+ks+`
		ORDER BY d.updated_at DESC, d.id DESC
		LIMIT $`+fmt.Sprint(len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("store: listing documents: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ragd.DocumentSummary, error) {
		var d ragd.DocumentSummary
		v := &d.Current
		err := row.Scan(&d.ID, &d.SourceKey, &d.Format, &d.Title, &d.URL, &d.Path, &d.Version, &d.CreatedAt,
			&d.UpdatedAt, &d.DeletedAt, &v.DocID, &v.Version, &v.ContentHash, &v.Title, &v.PublishedAt,
			&v.IngestedAt, &v.Chunks, &v.Bytes)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: listing documents: %w", err)
	}
	return out, nil
}

// likeEscaper makes a user's text match literally inside a LIKE pattern.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
