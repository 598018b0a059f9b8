package rerank_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/internal/modeltest"
	"github.com/ragd/ragd/rerank"
)

const query = "does vitamin d prevent bone loss"

var passages = []string{
	"Vitamin D deficiency is associated with bone loss in older adults.",
	"The quick brown fox jumps over the lazy dog.",
	"Calcium and vitamin D supplementation reduced hip fractures in a randomized trial of 3,270 women living in nursing homes.",
}

func open(t *testing.T, rt encoder.Runtime, batch int) *rerank.Scorer {
	t.Helper()
	s, err := rerank.Open(encoder.Config{Dir: modeltest.Dir(t, modeltest.CrossEncoder), Runtime: rt,
		ORTLibrary: modeltest.ORTLibrary(), BatchSize: batch})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.Equal(t, rt, s.Runtime())
	return s
}

// Both runtimes must give the same scores: ONNX Runtime in production, hugot's pure Go where the
// library is missing.
func TestRuntimesAgree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, err := open(t, encoder.ORT, 2).Score(ctx, query, passages)
	require.NoError(t, err)
	b, err := open(t, encoder.Go, 2).Score(ctx, query, passages)
	require.NoError(t, err)
	require.Len(t, a, len(passages))
	for i := range passages {
		require.InDelta(t, b[i], a[i], 1e-4, "passage %d", i)
		require.Greater(t, a[i], float32(0))
		require.Less(t, a[i], float32(1))
	}
	require.NotEqual(t, a[0], a[1])
}

// Scores are per pair: batching and length-sorting must not move them.
func TestScoresIndependentOfBatching(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	all, err := open(t, encoder.ORT, 8).Score(ctx, query, passages)
	require.NoError(t, err)
	single := open(t, encoder.ORT, 1)
	for i, p := range passages {
		one, err := single.Score(ctx, query, []string{p})
		require.NoError(t, err)
		require.InDelta(t, all[i], one[0], 1e-5)
	}
	none, err := single.Score(ctx, query, nil)
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestOpenRefusesEmbeddingModel(t *testing.T) {
	t.Parallel()
	_, err := rerank.Open(encoder.Config{Dir: modeltest.Dir(t, modeltest.Embedding)})
	require.ErrorIs(t, err, encoder.ErrModel)
	require.ErrorContains(t, err, "of kind embedding")
}
