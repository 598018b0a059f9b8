package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/kg"
)

// GraphMaxPerChunk caps the entities of one chunk that edges link (see kg.Edges).
const GraphMaxPerChunk = 16

// SaveVersions records a batch of documents in one transaction. A document whose content hash
// equals its current version's is left alone; a changed one gets a new version whose chunks
// replace the old ones in search, while the old chunks stay readable for the citations that point
// at them. A deleted document that is ingested again comes back as a new version.
func (s *Store) SaveVersions(ctx context.Context, vs []ragd.NewVersion) ([]ragd.SaveResult, error) {
	keys := make([]string, len(vs))
	seen := make(map[string]bool, len(vs))
	for i, v := range vs {
		if err := validateVersion(v); err != nil {
			return nil, err
		}
		if seen[v.SourceKey] {
			return nil, ragd.Invalidf("source_key", "%q appears twice in one batch", v.SourceKey)
		}
		seen[v.SourceKey] = true
		keys[i] = v.SourceKey
	}
	var results []ragd.SaveResult
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		results, err = tx.saveVersions(ctx, vs, keys)
		return err
	})
	if err == nil && s.bulk != nil {
		err = s.bulk.saved(ctx, s, len(vs))
	}
	return results, err
}

// validateVersion rejects a version SaveVersions cannot record, before anything is written.
func validateVersion(v ragd.NewVersion) error {
	switch {
	case v.SourceKey == "":
		return ragd.Invalidf("source_key", "empty")
	case v.ContentHash == "":
		return ragd.Invalidf("content_hash", "empty")
	case v.Format == "":
		return ragd.Invalidf("format", "empty")
	case len(v.Chunks) == 0:
		return ragd.Invalidf("chunks", "document %q has no chunks", v.SourceKey)
	case v.Entities != nil && len(v.Entities) != len(v.Chunks):
		return ragd.Invalidf("entities", "document %q has %d chunks and %d entity lists", v.SourceKey, len(v.Chunks), len(v.Entities))
	}
	return nil
}

type current struct {
	id      uuid.UUID
	version int
	hash    string
	chunks  int
	deleted bool
}

func (s *Store) saveVersions(ctx context.Context, vs []ragd.NewVersion, keys []string) ([]ragd.SaveResult, error) {
	if err := lockSeq(ctx, s.db); err != nil {
		return nil, err
	}
	existing, err := s.currentVersions(ctx, keys, true)
	if err != nil {
		return nil, err
	}
	results := make([]ragd.SaveResult, len(vs))
	batch := &pgx.Batch{}
	var rows [][]any
	ts := now()
	for i, v := range vs {
		cur, ok := existing[v.SourceKey]
		switch {
		case ok && cur.hash == v.ContentHash && !cur.deleted:
			results[i] = ragd.SaveResult{DocID: cur.id, Version: cur.version, Status: ragd.Unchanged}
			continue
		case ok:
			results[i] = ragd.SaveResult{DocID: cur.id, Version: cur.version + 1, Status: ragd.Updated}
			batch.Queue(`
				UPDATE documents SET version = $2, title = $3, url = $4, path = $5, format = $6,
				       updated_at = $7, deleted_at = NULL
				WHERE id = $1`, cur.id, cur.version+1, v.Title, nullable(v.URL), nullable(v.Path), v.Format, ts)
			batch.Queue(`
				UPDATE chunks SET active = false, seq = nextval('chunk_seq')
				WHERE doc_id = $1 AND active`, cur.id)
		default:
			id, err := uuid.NewV7()
			if err != nil {
				return nil, fmt.Errorf("store: new document id: %w", err)
			}
			results[i] = ragd.SaveResult{DocID: id, Version: 1, Status: ragd.Created}
			batch.Queue(`
				INSERT INTO documents (id, source_key, format, title, url, path, version, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $7)`,
				id, v.SourceKey, v.Format, v.Title, nullable(v.URL), nullable(v.Path), ts)
		}
		r := results[i]
		batch.Queue(`
			INSERT INTO document_versions (doc_id, version, content_hash, title, published_at, ingested_at, chunk_count, bytes)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			r.DocID, r.Version, v.ContentHash, v.Title, v.PublishedAt, ts, len(v.Chunks), v.Bytes)
		for j, c := range v.Chunks {
			rows = append(rows, chunkRow(r.DocID, r.Version, j, c))
		}
	}
	if batch.Len() > 0 {
		if err := s.db.SendBatch(ctx, batch).Close(); err != nil {
			return nil, fmt.Errorf("store: saving documents: %w", err)
		}
	}
	if len(rows) > 0 {
		// PostgreSQL refuses COPY into a table under row-level security: the rows are copied into
		// a temporary table of this transaction, then inserted, where the policy checks them.
		cols := strings.Join(chunkColumns, ", ")
		if _, err := s.db.Exec(ctx, "CREATE TEMP TABLE IF NOT EXISTS chunks_load AS SELECT "+cols+" FROM chunks WITH NO DATA"); err != nil {
			return nil, fmt.Errorf("store: writing chunks: %w", err)
		}
		if _, err := s.db.CopyFrom(ctx, pgx.Identifier{"chunks_load"}, chunkColumns, pgx.CopyFromRows(rows)); err != nil {
			return nil, fmt.Errorf("store: writing chunks: %w", err)
		}
		if _, err := s.db.Exec(ctx, "INSERT INTO chunks ("+cols+") SELECT "+cols+" FROM chunks_load"); err != nil {
			return nil, fmt.Errorf("store: writing chunks: %w", err)
		}
		if _, err := s.db.Exec(ctx, "TRUNCATE chunks_load"); err != nil {
			return nil, fmt.Errorf("store: writing chunks: %w", err)
		}
		if err := notifyChanges(ctx, s.db); err != nil {
			return nil, err
		}
	}
	if err := s.saveEntities(ctx, vs, results); err != nil {
		return nil, err
	}
	return results, nil
}

// saveEntities records the knowledge graph of the versions just written: COPY returns no ids, so
// the new chunks' ids are read back by version and ordinal.
func (s *Store) saveEntities(ctx context.Context, vs []ragd.NewVersion, results []ragd.SaveResult) error {
	var docs []uuid.UUID
	var versions []int32
	want := map[ragd.VersionRef][][]kg.Entity{}
	for i, v := range vs {
		if v.Entities == nil || results[i].Status == ragd.Unchanged {
			continue
		}
		ref := ragd.VersionRef{DocID: results[i].DocID, Version: results[i].Version}
		docs, versions = append(docs, ref.DocID), append(versions, int32(ref.Version))
		want[ref] = v.Entities
	}
	if len(want) == 0 {
		return nil
	}
	rows, err := s.db.Query(ctx, `
		SELECT c.doc_id, c.version, c.ordinal, c.id
		FROM unnest($1::uuid[], $2::int[]) AS want(doc_id, version)
		JOIN chunks c ON c.doc_id = want.doc_id AND c.version = want.version`, docs, versions)
	if err != nil {
		return fmt.Errorf("store: reading new chunk ids: %w", err)
	}
	var ids []int64
	var entities [][]kg.Entity
	var ref ragd.VersionRef
	var ordinal int
	var id int64
	_, err = pgx.ForEachRow(rows, []any{&ref.DocID, &ref.Version, &ordinal, &id}, func() error {
		if es := want[ref]; ordinal < len(es) && len(es[ordinal]) > 0 {
			ids, entities = append(ids, id), append(entities, es[ordinal])
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: reading new chunk ids: %w", err)
	}
	return s.SaveGraph(ctx, ids, entities, GraphMaxPerChunk)
}

var chunkColumns = []string{"doc_id", "version", "ordinal", "heading", "text", "page_start", "page_end",
	"char_start", "char_end", "token_count", "embedding"}

func chunkRow(doc uuid.UUID, version, ordinal int, c ragd.Chunk) []any {
	var emb any
	if c.Embedding != nil {
		emb = pgvector.NewVector(c.Embedding)
	}
	var ps, pe any
	if c.PageStart > 0 {
		ps, pe = c.PageStart, c.PageEnd
	}
	return []any{doc, version, ordinal, c.Heading, c.Text, ps, pe, c.CharStart, c.CharEnd, c.Tokens, emb}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Current returns the current version of each live document among keys, so ingest can skip
// unchanged documents before it spends time embedding them.
func (s *Store) Current(ctx context.Context, keys []string) (map[string]ragd.CurrentVersion, error) {
	cur, err := s.currentVersions(ctx, keys, false)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ragd.CurrentVersion, len(cur))
	for k, c := range cur {
		if !c.deleted {
			out[k] = ragd.CurrentVersion{DocID: c.id, Version: c.version, Hash: c.hash, Chunks: c.chunks}
		}
	}
	return out, nil
}

// currentVersionsSQL looks documents up by their tenant and source key: the unique index is
// (tenant_id, source_key), and row-level security's filter cannot use it, so without the
// tenant_id condition every ingest batch scanned the whole documents table (329 ms a batch at 30k
// documents and growing, the load's bound).
const currentVersionsSQL = `
		SELECT d.source_key, d.id, d.version, v.content_hash, v.chunk_count, d.deleted_at IS NOT NULL
		FROM documents d JOIN document_versions v ON v.doc_id = d.id AND v.version = d.version
		WHERE d.tenant_id = $2 AND d.source_key = ANY($1)`

func (s *Store) currentVersions(ctx context.Context, keys []string, forUpdate bool) (map[string]current, error) {
	q := currentVersionsSQL
	if forUpdate {
		q += " FOR UPDATE OF d"
	}
	rows, err := s.db.Query(ctx, q, keys, tenantOf(ctx))
	if err != nil {
		return nil, fmt.Errorf("store: reading current versions: %w", err)
	}
	out := make(map[string]current, len(keys))
	var key string
	var c current
	_, err = pgx.ForEachRow(rows, []any{&key, &c.id, &c.version, &c.hash, &c.chunks, &c.deleted}, func() error {
		out[key] = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: reading current versions: %w", err)
	}
	return out, nil
}

const documentColumns = `id, source_key, format, title, coalesce(url, ''), coalesce(path, ''), version,
	created_at, updated_at, deleted_at`

func scanDocument(row pgx.Row) (*ragd.Document, error) {
	var d ragd.Document
	err := row.Scan(&d.ID, &d.SourceKey, &d.Format, &d.Title, &d.URL, &d.Path, &d.Version,
		&d.CreatedAt, &d.UpdatedAt, &d.DeletedAt)
	return &d, err
}

// Document returns a document by id, deleted or not (callers decide what deletion means to them).
func (s *Store) Document(ctx context.Context, id uuid.UUID) (*ragd.Document, error) {
	d, err := scanDocument(s.db.QueryRow(ctx, "SELECT "+documentColumns+" FROM documents WHERE id = $1 AND tenant_id = $2", id, tenantOf(ctx)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("document %s: %w", id, ragd.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: reading document %s: %w", id, err)
	}
	return d, nil
}

// DocumentBySource returns the document recorded under a source key.
func (s *Store) DocumentBySource(ctx context.Context, key string) (*ragd.Document, error) {
	d, err := scanDocument(s.db.QueryRow(ctx, "SELECT "+documentColumns+" FROM documents WHERE source_key = $1", key))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("document %q: %w", key, ragd.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: reading document %q: %w", key, err)
	}
	return d, nil
}

// Versions lists a document's versions, oldest first.
func (s *Store) Versions(ctx context.Context, id uuid.UUID) ([]ragd.DocumentVersion, error) {
	rows, err := s.db.Query(ctx, `
		SELECT doc_id, version, content_hash, title, published_at, ingested_at, chunk_count, bytes
		FROM document_versions WHERE doc_id = $1 ORDER BY version`, id)
	if err != nil {
		return nil, fmt.Errorf("store: reading versions of %s: %w", id, err)
	}
	vs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ragd.DocumentVersion, error) {
		var v ragd.DocumentVersion
		err := row.Scan(&v.DocID, &v.Version, &v.ContentHash, &v.Title, &v.PublishedAt, &v.IngestedAt, &v.Chunks, &v.Bytes)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: reading versions of %s: %w", id, err)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("document %s: %w", id, ragd.ErrNotFound)
	}
	return vs, nil
}

// DeleteDocument removes a document from search. Its rows stay, so every citation of it remains
// readable. Deleting a deleted document is a no-op.
func (s *Store) DeleteDocument(ctx context.Context, id uuid.UUID) error {
	return s.InTx(ctx, func(tx *Store) error {
		if err := lockSeq(ctx, tx.db); err != nil {
			return err
		}
		tag, err := tx.db.Exec(ctx, `UPDATE documents SET deleted_at = coalesce(deleted_at, $2) WHERE id = $1`, id, now())
		if err != nil {
			return fmt.Errorf("store: deleting document %s: %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("document %s: %w", id, ragd.ErrNotFound)
		}
		if _, err := tx.db.Exec(ctx, `UPDATE chunks SET active = false, seq = nextval('chunk_seq') WHERE doc_id = $1 AND active`, id); err != nil {
			return fmt.Errorf("store: deleting chunks of %s: %w", id, err)
		}
		return notifyChanges(ctx, tx.db)
	})
}

// CountDocuments returns how many documents are live (not deleted).
func (s *Store) CountDocuments(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, "SELECT count(*) FROM documents WHERE deleted_at IS NULL").Scan(&n); err != nil {
		return 0, fmt.Errorf("store: counting documents: %w", err)
	}
	return n, nil
}

// SourceKeys maps every live document to its source key, for evaluation, which judges results
// by the ids a corpus gave its documents.
func (s *Store) SourceKeys(ctx context.Context) (map[uuid.UUID]string, error) {
	rows, err := s.db.Query(ctx, "SELECT id, source_key FROM documents WHERE deleted_at IS NULL")
	if err != nil {
		return nil, fmt.Errorf("store: reading source keys: %w", err)
	}
	out := map[uuid.UUID]string{}
	var id uuid.UUID
	var key string
	_, err = pgx.ForEachRow(rows, []any{&id, &key}, func() error {
		out[id] = key
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: reading source keys: %w", err)
	}
	return out, nil
}

// VersionInfo returns the details of the given document versions; unknown ones are left out.
func (s *Store) VersionInfo(ctx context.Context, refs []ragd.VersionRef) (map[ragd.VersionRef]ragd.VersionInfo, error) {
	docs := make([]uuid.UUID, len(refs))
	versions := make([]int32, len(refs))
	for i, r := range refs {
		docs[i], versions[i] = r.DocID, int32(r.Version)
	}
	rows, err := s.db.Query(ctx, `
		SELECT v.doc_id, v.version, v.title, coalesce(d.url, ''), coalesce(d.path, ''), v.published_at, v.ingested_at
		FROM unnest($1::uuid[], $2::int[]) AS want(doc_id, version)
		JOIN document_versions v ON v.doc_id = want.doc_id AND v.version = want.version
		JOIN documents d ON d.id = v.doc_id`, docs, versions)
	if err != nil {
		return nil, fmt.Errorf("store: reading versions: %w", err)
	}
	out := make(map[ragd.VersionRef]ragd.VersionInfo, len(refs))
	var ref ragd.VersionRef
	var vi ragd.VersionInfo
	_, err = pgx.ForEachRow(rows, []any{&ref.DocID, &ref.Version, &vi.Title, &vi.URL, &vi.Path, &vi.PublishedAt, &vi.IngestedAt}, func() error {
		out[ref] = vi
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: reading versions: %w", err)
	}
	return out, nil
}
