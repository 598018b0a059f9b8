package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/ragd/ragd"
)

const chunkSelect = `
	SELECT c.id, c.doc_id, c.version, c.ordinal, v.title, c.heading, c.text, coalesce(c.page_start, 0),
	       coalesce(c.page_end, 0), c.char_start, c.char_end, c.token_count, c.active, c.seq
	FROM chunks c JOIN document_versions v ON v.doc_id = c.doc_id AND v.version = c.version`

func scanChunk(row pgx.CollectableRow) (ragd.Chunk, error) {
	var c ragd.Chunk
	err := row.Scan(&c.ID, &c.DocID, &c.Version, &c.Ordinal, &c.Title, &c.Heading, &c.Text, &c.PageStart,
		&c.PageEnd, &c.CharStart, &c.CharEnd, &c.Tokens, &c.Active, &c.Seq)
	return c, err
}

// Chunks returns the chunks with the given ids, active or not, in the order of ids; ids that do
// not exist are left out. Embeddings are not read: no caller past retrieval needs them.
func (s *Store) Chunks(ctx context.Context, ids []int64) ([]ragd.Chunk, error) {
	rows, err := s.db.Query(ctx, chunkSelect+`
		JOIN unnest($1::bigint[]) WITH ORDINALITY AS want(id, n) ON want.id = c.id
		ORDER BY want.n`, ids)
	if err != nil {
		return nil, fmt.Errorf("store: reading chunks: %w", err)
	}
	cs, err := pgx.CollectRows(rows, scanChunk)
	if err != nil {
		return nil, fmt.Errorf("store: reading chunks: %w", err)
	}
	return cs, nil
}

// VersionChunks returns the chunks of one version of a document, in order.
func (s *Store) VersionChunks(ctx context.Context, doc uuid.UUID, version int) ([]ragd.Chunk, error) {
	rows, err := s.db.Query(ctx, chunkSelect+` WHERE c.doc_id = $1 AND c.version = $2 ORDER BY c.ordinal`, doc, version)
	if err != nil {
		return nil, fmt.Errorf("store: reading chunks of %s v%d: %w", doc, version, err)
	}
	cs, err := pgx.CollectRows(rows, scanChunk)
	if err != nil {
		return nil, fmt.Errorf("store: reading chunks of %s v%d: %w", doc, version, err)
	}
	return cs, nil
}

// ChunkChanges returns up to limit chunk changes with seq above after, in seq order, of every
// tenant: the BM25 index is one projection of all chunks, each indexed with its tenant.
func (s *Store) ChunkChanges(ctx context.Context, after int64, limit int) ([]ragd.ChunkChange, error) {
	ctx = ragd.AllTenants(ctx)
	rows, err := s.db.Query(ctx, `
		SELECT c.id, c.seq, c.active,
		       CASE WHEN c.active THEN v.title ELSE '' END,
		       CASE WHEN c.active THEN c.heading ELSE '' END,
		       CASE WHEN c.active THEN c.text ELSE '' END, c.tenant_id
		FROM chunks c JOIN document_versions v ON v.doc_id = c.doc_id AND v.version = c.version
		WHERE c.seq > $1 ORDER BY c.seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: reading chunk changes: %w", err)
	}
	cs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ragd.ChunkChange])
	if err != nil {
		return nil, fmt.Errorf("store: reading chunk changes: %w", err)
	}
	return cs, nil
}

// MaxSeq returns the highest chunk change sequence written so far (0 when none).
func (s *Store) MaxSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.db.QueryRow(ctx, "SELECT coalesce(max(seq), 0) FROM chunks").Scan(&seq); err != nil {
		return 0, fmt.Errorf("store: reading max seq: %w", err)
	}
	return seq, nil
}

// SearchVector returns the k active chunks nearest to q by cosine distance, through the HNSW
// index. Score is cosine similarity. When docs is not empty only their chunks are searchable.
//
// The index holds every tenant's chunks, and row-level security and the filters drop the others'
// after the index yields them: with hnsw.iterative_scan the scan goes on until k matches are
// found instead of filtering a fixed candidate list of ef_search, which could return fewer than
// k. A pool's connections carry both settings from their start (Open), so a search is one
// statement, one round trip; a store over a transaction (New), or a k above ef_search, sets
// them for one transaction instead.
func (s *Store) SearchVector(ctx context.Context, q []float32, k int, docs []uuid.UUID) ([]ragd.Hit, error) {
	if k < 1 {
		return nil, ragd.Invalidf("k", "must be at least 1, got %d", k)
	}
	if s.searchSet && k <= s.efSearch {
		return s.searchVector(ctx, q, k, docs)
	}
	var hits []ragd.Hit
	err := s.InTx(ctx, func(tx *Store) error {
		// SET LOCAL keeps the settings to this transaction: pooled connections stay as they were.
		if _, err := tx.db.Exec(ctx, fmt.Sprintf("SET LOCAL hnsw.ef_search = %d; SET LOCAL hnsw.iterative_scan = %s", max(s.efSearch, k), iterativeScan)); err != nil {
			return fmt.Errorf("store: vector search settings: %w", err)
		}
		var err error
		hits, err = tx.searchVector(ctx, q, k, docs)
		return err
	})
	return hits, err
}

// iterativeScan is pgvector's hnsw.iterative_scan for every vector search: results in exact
// distance order, as many as asked for whatever the filters drop.
const iterativeScan = "strict_order"

func (s *Store) searchVector(ctx context.Context, q []float32, k int, docs []uuid.UUID) ([]ragd.Hit, error) {
	sql := `SELECT id, 1 - (embedding <=> $1) FROM chunks WHERE active AND embedding IS NOT NULL AND tenant_id = $3`
	args := []any{pgvector.NewVector(q), k, tenantOf(ctx)}
	if len(docs) > 0 {
		sql += " AND doc_id = ANY($4)"
		args = append(args, docs)
	}
	rows, err := s.db.Query(ctx, sql+" ORDER BY embedding <=> $1 LIMIT $2", args...)
	if err != nil {
		return nil, fmt.Errorf("store: vector search: %w", err)
	}
	var hits []ragd.Hit
	var h ragd.Hit
	_, err = pgx.ForEachRow(rows, []any{&h.ChunkID, &h.Score}, func() error {
		h.Rank = len(hits) + 1
		hits = append(hits, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: vector search: %w", err)
	}
	return hits, nil
}

// ChunksWithoutEmbedding returns up to limit active chunks that have no embedding yet, for
// back-filling after an embedding model was configured.
func (s *Store) ChunksWithoutEmbedding(ctx context.Context, limit int) ([]ragd.Chunk, error) {
	rows, err := s.db.Query(ctx, chunkSelect+` WHERE c.active AND c.embedding IS NULL ORDER BY c.id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: reading chunks without embedding: %w", err)
	}
	cs, err := pgx.CollectRows(rows, scanChunk)
	if err != nil {
		return nil, fmt.Errorf("store: reading chunks without embedding: %w", err)
	}
	return cs, nil
}

// SetEmbeddings stores embeddings for existing chunks; ids and vecs are parallel.
func (s *Store) SetEmbeddings(ctx context.Context, ids []int64, vecs [][]float32) error {
	if len(ids) != len(vecs) {
		return ragd.Invalidf("embeddings", "%d ids for %d vectors", len(ids), len(vecs))
	}
	b := &pgx.Batch{}
	for i, id := range ids {
		b.Queue("UPDATE chunks SET embedding = $2 WHERE id = $1", id, pgvector.NewVector(vecs[i]))
	}
	if err := s.db.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("store: writing embeddings: %w", err)
	}
	return nil
}

// ActiveChunkIDs returns the searchable chunks of each document, in document order, at most
// limit per document.
func (s *Store) ActiveChunkIDs(ctx context.Context, docs []uuid.UUID, limit int) (map[uuid.UUID][]int64, error) {
	rows, err := s.db.Query(ctx, `
		SELECT doc_id, id FROM (
			SELECT doc_id, id, row_number() OVER (PARTITION BY doc_id ORDER BY ordinal) AS n
			FROM chunks WHERE doc_id = ANY($1) AND active) c
		WHERE n <= $2 ORDER BY doc_id, n`, docs, limit)
	if err != nil {
		return nil, fmt.Errorf("store: reading chunks of documents: %w", err)
	}
	out := map[uuid.UUID][]int64{}
	var doc uuid.UUID
	var id int64
	_, err = pgx.ForEachRow(rows, []any{&doc, &id}, func() error {
		out[doc] = append(out[doc], id)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: reading chunks of documents: %w", err)
	}
	return out, nil
}

// Similarity returns the cosine similarity of q to each given chunk that is searchable and has
// an embedding.
func (s *Store) Similarity(ctx context.Context, q []float32, ids []int64) (map[int64]float64, error) {
	rows, err := s.db.Query(ctx, `
		SELECT id, 1 - (embedding <=> $1) FROM chunks
		WHERE id = ANY($2) AND active AND embedding IS NOT NULL`, pgvector.NewVector(q), ids)
	if err != nil {
		return nil, fmt.Errorf("store: similarity: %w", err)
	}
	out := map[int64]float64{}
	var id int64
	var sim float64
	_, err = pgx.ForEachRow(rows, []any{&id, &sim}, func() error {
		out[id] = sim
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: similarity: %w", err)
	}
	return out, nil
}
