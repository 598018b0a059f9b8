package index

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

// Chunks that score the same come in id order, whatever order bleve stored them in: a corpus
// ingested afresh must rank the same, or evaluation figures move between runs.
func TestTiesComeInChunkIDOrder(t *testing.T) {
	t.Parallel()
	ix, err := Open(filepath.Join(t.TempDir(), "bm25"), nil)
	require.NoError(t, err)
	defer ix.Close()
	// Applied in descending id order, in two batches, so bleve's own order (insertion, by
	// segment) is the opposite of the id order.
	var changes []ragd.ChunkChange
	for id := int64(40); id >= 1; id-- {
		changes = append(changes, ragd.ChunkChange{ID: id, Seq: 41 - id, Active: true, Title: "Storm", Text: "tornado shelter"})
	}
	require.NoError(t, ix.apply(changes[:20]))
	require.NoError(t, ix.apply(changes[20:]))
	require.NoError(t, ix.apply([]ragd.ChunkChange{{ID: 99, Seq: 41, Active: true, Title: "Tornado shelter", Text: "tornado shelter"}}))

	for _, n := range []int{1, 5, 10} { // ties cut at n, within and past the first read
		hits, err := ix.Search(context.Background(), "tornado shelter", n)
		require.NoError(t, err)
		require.Len(t, hits, n)
		want := []int64{99} // the different text scores apart from the tie
		for id := int64(1); len(want) < n; id++ {
			want = append(want, id)
		}
		got := make([]int64, len(hits))
		for i, h := range hits {
			got[i] = h.ChunkID
			require.Equal(t, i+1, h.Rank)
		}
		require.Equal(t, want, got, "n=%d", n)
	}
	hits, err := ix.SearchIn(context.Background(), "tornado", 3, []int64{30, 7, 12, 25})
	require.NoError(t, err)
	require.Equal(t, []int64{7, 12, 25}, []int64{hits[0].ChunkID, hits[1].ChunkID, hits[2].ChunkID})
}
