package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/store"
)

// A bulk load drops the vector index, loads, and builds it again in one transaction: the index
// is back afterwards and answers, the planner has the table's statistics, and a failed load
// leaves table and index as they were.
func TestLoadThenIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx := dbtest.OwnTx(t)
	s := store.New(tx)
	before, err := s.StorageSizes(ctx)
	require.NoError(t, err)
	require.Contains(t, before.Indexes, "chunks_embedding_idx")

	st, err := s.LoadThenIndex(ctx, store.BulkConfig{MaintenanceWorkMem: "64MB"}, func(ctx context.Context, tx *store.Store) error {
		sizes, err := tx.StorageSizes(ctx)
		require.NoError(t, err)
		require.NotContains(t, sizes.Indexes, "chunks_embedding_idx", "the index is dropped while loading")
		var vs []ragd.NewVersion
		for i := range 30 {
			v := version(fmt.Sprintf("bulk-%d", i), "h", fmt.Sprintf("chunk %d", i))
			v.Chunks[0].Embedding = unit(i%dbtest.Dim, (i+1)%dbtest.Dim, 0.1)
			vs = append(vs, v)
		}
		_, err = tx.SaveVersions(ctx, vs)
		return err
	})
	require.NoError(t, err)
	require.Equal(t, []string{"chunks_embedding_idx"}, st.Indexes)
	after, err := s.StorageSizes(ctx)
	require.NoError(t, err)
	require.Contains(t, after.Indexes, "chunks_embedding_idx", "the index is built again")
	require.Positive(t, after.ChunksTable)
	n, err := s.CountChunks(ctx)
	require.NoError(t, err)
	require.Equal(t, 30, n)
	var stats int
	require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM pg_stats
		WHERE schemaname = current_schema() AND tablename = 'chunks' AND attname = 'tenant_id'`).Scan(&stats))
	require.Equal(t, 1, stats, "the load analyzes the table")

	hits, err := s.SearchVector(ctx, unit(7, 8, 0.1), 3, nil)
	require.NoError(t, err)
	exact, err := s.SearchVectorExact(ctx, unit(7, 8, 0.1), 3)
	require.NoError(t, err)
	require.Len(t, hits, 3)
	require.Equal(t, exact[0], hits[0].ChunkID)

	boom := errors.New("load failed")
	_, err = s.LoadThenIndex(ctx, store.BulkConfig{}, func(ctx context.Context, tx *store.Store) error {
		_, err := tx.SaveVersions(ctx, []ragd.NewVersion{version("lost", "h", "never kept")})
		require.NoError(t, err)
		return boom
	})
	require.ErrorIs(t, err, boom)
	again, err := s.StorageSizes(ctx)
	require.NoError(t, err)
	require.Contains(t, again.Indexes, "chunks_embedding_idx", "a failed load keeps the index")
	n, err = s.CountChunks(ctx)
	require.NoError(t, err)
	require.Equal(t, 30, n, "and writes nothing")
}

func TestDropSchemaRefusesPublic(t *testing.T) {
	t.Parallel()
	require.ErrorContains(t, store.DropSchema(context.Background(), "postgres://unused", "public"), "refusing")
	require.ErrorContains(t, store.DropSchema(context.Background(), "postgres://unused", ""), "refusing")
}

// Prewarm reads every page of the vector index into the shared buffers, whose size SharedBuffers
// reads in bytes.
func TestPrewarmAndSharedBuffers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx := dbtest.TestTx(t)
	s := store.New(tx)
	// No chunks written: an empty HNSW index has its pages too.
	var pages int64
	require.NoError(t, tx.QueryRow(ctx, `SELECT pg_relation_size('chunks_embedding_idx') / current_setting('block_size')::bigint`).Scan(&pages))
	require.Positive(t, pages)
	got, err := s.Prewarm(ctx, "chunks_embedding_idx")
	require.NoError(t, err)
	require.Equal(t, pages, got, "every page of the index")

	var want int64
	require.NoError(t, tx.QueryRow(ctx, "SELECT pg_size_bytes(current_setting('shared_buffers'))").Scan(&want))
	sb, err := s.SharedBuffers(ctx)
	require.NoError(t, err)
	require.Equal(t, want, sb)

	_, err = s.Prewarm(ctx, "no_such_index") // last: the error ends the transaction
	require.ErrorContains(t, err, "no_such_index")
}
