package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd"
)

// Titles returns the distinct titles of the documents in search (their current versions) with
// their chunks, for the names a conversation's focus can recognise: the caller's tenant's only.
func (s *Store) Titles(ctx context.Context) ([]ragd.Title, error) {
	rows, err := s.db.Query(ctx, `
		SELECT v.title, sum(v.chunk_count)::int FROM documents d
		JOIN document_versions v ON v.doc_id = d.id AND v.version = d.version
		WHERE d.deleted_at IS NULL AND v.title <> '' AND d.tenant_id = $1
		GROUP BY v.title ORDER BY v.title`, tenantOf(ctx))
	if err != nil {
		return nil, fmt.Errorf("store: reading titles: %w", err)
	}
	titles, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ragd.Title])
	if err != nil {
		return nil, fmt.Errorf("store: reading titles: %w", err)
	}
	return titles, nil
}
