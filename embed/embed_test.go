package embed_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/embed"
	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/internal/modeltest"
)

var texts = []string{
	"Vitamin D deficiency is associated with bone loss in older adults.",
	"The quick brown fox jumps over the lazy dog.",
	"", // an empty text still embeds: the graph sees [CLS] [SEP]
	"Earthquakes: drop, cover and hold on until the shaking stops; then check for gas leaks before using any flame or electrical switch in the building.",
}

func open(t *testing.T, rt encoder.Runtime) *embed.Embedder {
	t.Helper()
	e, err := embed.Open(encoder.Config{Dir: modeltest.Dir(t, modeltest.Embedding), Runtime: rt,
		ORTLibrary: modeltest.ORTLibrary(), BatchSize: 3})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	require.Equal(t, rt, e.Runtime())
	require.Equal(t, 384, e.Dim())
	return e
}

// Both runtimes must compute the same embeddings: ONNX Runtime in production, hugot's pure Go
// where the library is missing.
func TestRuntimesAgree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ort, goRT := open(t, encoder.ORT), open(t, encoder.Go)

	a, err := ort.Embed(ctx, texts)
	require.NoError(t, err)
	b, err := goRT.Embed(ctx, texts)
	require.NoError(t, err)
	require.Len(t, a, len(texts))
	for i := range texts {
		var norm float64
		for k := range a[i] {
			require.InDelta(t, b[i][k], a[i][k], 1e-4, "text %d dim %d", i, k)
			norm += float64(a[i][k]) * float64(a[i][k])
		}
		require.InDelta(t, 1, math.Sqrt(norm), 1e-5, "unit length")
	}
	require.NotEqual(t, a[0], a[1], "different texts, different vectors")
}

// Batching and length-sorting must not change results or their order.
func TestBatchingKeepsOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := open(t, encoder.ORT)
	all, err := e.Embed(ctx, texts)
	require.NoError(t, err)
	for i, s := range texts {
		one, err := e.Embed(ctx, []string{s})
		require.NoError(t, err)
		for k := range one[0] {
			require.InDelta(t, all[i][k], one[0][k], 1e-5)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = e.Embed(cancelled, texts)
	require.ErrorIs(t, err, context.Canceled)
}

func TestOpenRefusesUnusableDirectories(t *testing.T) {
	t.Parallel()
	incomplete := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(incomplete, "model.onnx"), []byte("not a graph"), 0o644))
	corrupt := t.TempDir()
	for _, f := range []string{"tokenizer.json", "config.json"} {
		b, err := os.ReadFile(filepath.Join(modeltest.Dir(t, modeltest.Embedding), f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(corrupt, f), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(corrupt, "model.onnx"), []byte("not a graph"), 0o644))

	for name, tc := range map[string]struct {
		cfg  encoder.Config
		want string
	}{
		"missing":       {encoder.Config{Dir: filepath.Join(t.TempDir(), "nope")}, "is not a directory"},
		"no graph":      {encoder.Config{Dir: t.TempDir()}, "has no model.onnx"},
		"no tokenizer":  {encoder.Config{Dir: incomplete}, "has no tokenizer.json"},
		"corrupt graph": {encoder.Config{Dir: corrupt, Runtime: encoder.ORT}, "model.onnx"},
		"cross-encoder": {encoder.Config{Dir: modeltest.Dir(t, modeltest.CrossEncoder)}, "of kind cross-encoder"},
		"bad runtime":   {encoder.Config{Dir: corrupt, Runtime: "tpu"}, `runtime "tpu"`},
		"bad batch":     {encoder.Config{Dir: corrupt, BatchSize: -1}, "batch size -1"},
	} {
		_, err := embed.Open(tc.cfg)
		require.Error(t, err, name)
		require.ErrorContains(t, err, tc.want, name)
		if name != "bad runtime" && name != "bad batch" {
			require.ErrorIs(t, err, encoder.ErrModel, name)
		}
	}
}
