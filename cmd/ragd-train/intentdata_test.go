package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/intent"
	"github.com/ragd/ragd/internal/modeltest"
)

// TestIntentRowsAreReproducible regenerates the intent rows from the shared data and compares
// them with the committed file byte for byte.
func TestIntentRowsAreReproducible(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "extra.jsonl")
	require.NoError(t, generateIntentRows(io.Discard, filepath.Join(modeltest.SharedDir(t), "data"), out, defaultIntentSources))
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join("..", "..", "intent", intent.ExtraFile))
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "intent/%s is stale: run go generate ./intent", intent.ExtraFile)

	rows, err := intent.LoadExamples(out)
	require.NoError(t, err)
	labels := map[intent.Label]int{}
	for _, r := range rows {
		labels[r.Intent]++
		require.NotEmpty(t, r.History, r.ID)
		require.LessOrEqual(t, len(r.History), 3, r.ID)
		require.Regexp(t, `^real:(mtrag|multiwoz21|dstc11t5):[^#]+#`, r.Source)
	}
	for _, l := range intent.Labels {
		require.Positive(t, labels[l], l)
	}
}
