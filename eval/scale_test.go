package eval_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/eval"
	"github.com/ragd/ragd/token"
)

func TestScaleCorpusIsDeterministicAndFitsOneChunk(t *testing.T) {
	t.Parallel()
	ps, err := eval.LoadPassages(context.Background(), []string{"../testdata/eval/tinybeir/corpus.jsonl"})
	require.NoError(t, err)
	require.NotEmpty(t, ps)
	c := eval.ScaleCorpus{Passages: ps, Seed: 3, Tokens: 60, Prefix: "t"}
	seen := map[string]bool{}
	for i := range 50 {
		title, text := c.Document(i)
		t2, x2 := c.Document(i)
		require.Equal(t, title, t2)
		require.Equal(t, text, x2, "document %d is the same every time", i)
		require.NotEmpty(t, text)
		require.LessOrEqual(t, token.Count(text), 60+10, "document %d stays near its token budget", i)
		seen[text] = true
	}
	require.Greater(t, len(seen), 40, "documents differ")
	n := 0
	for src, err := range c.Sources(context.Background(), 10, 15) {
		require.NoError(t, err)
		_, text := c.Document(10 + n)
		require.Equal(t, text, src.Doc.Text)
		n++
	}
	require.Equal(t, 5, n)
}

func TestHashEmbedderPlacesSharedWordsClose(t *testing.T) {
	t.Parallel()
	h := eval.HashEmbedder{Dimension: 384}
	vs, err := h.Embed(context.Background(), []string{"vitamin d and bone density", "bone density in vitamin d trials",
		"earthquake safety at home", ""})
	require.NoError(t, err)
	dot := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	for _, v := range vs {
		require.InDelta(t, 1, math.Sqrt(dot(v, v)), 1e-5, "unit vectors")
	}
	require.Greater(t, dot(vs[0], vs[1]), dot(vs[0], vs[2])+0.3)
	again, _ := h.Embed(context.Background(), []string{"vitamin d and bone density"})
	require.Equal(t, vs[0], again[0])
}
