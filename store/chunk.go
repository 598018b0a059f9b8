package store

import (
	"context"
	"fmt"
	"log/slog"

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
//
// The iterative scan has bounds of its own, though: pgvector stops it after
// hnsw.max_scan_tuples index tuples (20,000 by default) or hnsw.scan_mem_multiplier x work_mem of
// memory, and returns what it found, with no error. A tenant, or a set of documents, whose chunks
// are few among the nearest to q then gets fewer than k, even none (the planner sorts the
// filtered chunks instead when its estimates say the filter is selective, but only then). So a
// search that finds fewer than k sorts the filtered chunks by distance instead (searchExact),
// and a search within documents does so first: they are a handful, and through the HNSW index
// their nearest chunks are found worse than a whole tenant's.
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
// distance order, as many as asked for whatever the filters drop (up to its bounds).
const iterativeScan = "strict_order"

func (s *Store) searchVector(ctx context.Context, q []float32, k int, docs []uuid.UUID) ([]ragd.Hit, error) {
	filter := "active AND embedding IS NOT NULL AND tenant_id = $3"
	args := []any{pgvector.NewVector(q), k, tenantOf(ctx)}
	if len(docs) > 0 {
		filter += " AND doc_id = ANY($4::uuid[])"
		args = append(args, docs)
		if hits, ok, err := s.searchExact(ctx, filter, args); err != nil || ok {
			return hits, err
		}
	}
	hits, err := s.vectorHits(ctx, "SELECT id, 1 - (embedding <=> $1) FROM chunks WHERE "+filter+" ORDER BY embedding <=> $1 LIMIT $2", args...)
	if err != nil || len(hits) == k {
		return hits, err
	}
	if len(docs) == 0 {
		exact, ok, err := s.searchExact(ctx, filter, args)
		if err != nil || ok {
			return exact, err
		}
	}
	s.logger.WarnContext(ctx, "vector search found fewer than k chunks: pgvector's iterative scan stopped at hnsw.max_scan_tuples (or hnsw.scan_mem_multiplier x work_mem), and the filter matches too many chunks to sort them all; raising hnsw.max_scan_tuples raises both bounds",
		slog.Int("k", k), slog.Int("found", len(hits)), slog.Int("documents", len(docs)))
	return hits, nil
}

// maxScanTuples is pgvector's hnsw.max_scan_tuples, read by the statement that uses it: the
// session's value, which an operator may raise (ALTER ROLE ... SET). An exact search reads at
// most as many chunks as the iterative scan may visit, so it costs about what that scan may.
// The setting exists once pgvector's library is loaded, which the statement's vector parameter
// does before it runs, on a fresh connection too.
const maxScanTuples = "current_setting('hnsw.max_scan_tuples')::int"

// exactSQL sorts the chunks the filter matches by distance, without the HNSW index (its order
// is not the index's: "+ 0"), when there are at most hnsw.max_scan_tuples of them. Its first
// column is their count, capped at one more; when there are more it returns that count alone,
// in a row without a chunk (as it does when there are none).
const exactSQL = `
	SELECT f.n, c.id, 1 - c.distance
	FROM (SELECT count(*) AS n FROM (SELECT FROM chunks WHERE %[1]s LIMIT %[2]s + 1) x) f
	LEFT JOIN LATERAL (
		SELECT id, embedding <=> $1 AS distance FROM chunks WHERE %[1]s AND f.n <= %[2]s
		ORDER BY (embedding <=> $1) + 0 LIMIT $2) c ON true
	ORDER BY c.distance`

// searchExact returns the k chunks nearest to q that the filter matches, by sorting them all,
// and ok; or not ok when the filter matches more than hnsw.max_scan_tuples chunks. args are
// searchVector's: q, k, the tenant and, with documents, their ids. It is planned with its
// parameters every time (the unnamed statement, as vectorHits's): a plan made for any tenant
// could read the whole table for a small one.
func (s *Store) searchExact(ctx context.Context, filter string, args []any) (hits []ragd.Hit, ok bool, err error) {
	args = append([]any{pgx.QueryExecModeCacheDescribe}, args...)
	rows, err := s.db.Query(ctx, fmt.Sprintf(exactSQL, filter, maxScanTuples), args...)
	if err != nil {
		return nil, false, fmt.Errorf("store: exact vector search: %w", err)
	}
	var n int
	var id *int64
	var score *float64
	_, err = pgx.ForEachRow(rows, []any{&n, &id, &score}, func() error {
		if id != nil {
			hits = append(hits, ragd.Hit{ChunkID: *id, Score: *score, Rank: len(hits) + 1})
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: exact vector search: %w", err)
	}
	return hits, n == 0 || len(hits) > 0, nil
}

// vectorHits runs a vector search statement whose rows are a chunk id and its score, best first.
//
// It runs as the unnamed statement (pgx caches only its parameter and result types), so that
// PostgreSQL plans it with its parameters every time. As a prepared statement, PostgreSQL may
// plan it once for every tenant after five executions on a connection (a generic plan): with many
// tenants that plan sorts the few rows it expects of a tenant by distance, and for a big tenant
// it reads every chunk: seconds per search where the HNSW index takes milliseconds.
func (s *Store) vectorHits(ctx context.Context, sql string, args ...any) ([]ragd.Hit, error) {
	args = append([]any{pgx.QueryExecModeCacheDescribe}, args...)
	rows, err := s.db.Query(ctx, sql, args...)
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

// VectorCoverage counts the active chunks ctx sees and those of them stored with a vector.
func (s *Store) VectorCoverage(ctx context.Context) (active, withVector int64, err error) {
	err = s.db.QueryRow(ctx, `SELECT count(*), count(embedding) FROM chunks WHERE active`).Scan(&active, &withVector)
	if err != nil {
		return 0, 0, fmt.Errorf("store: counting chunks with a vector: %w", err)
	}
	return active, withVector, nil
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
