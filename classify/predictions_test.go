package classify

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Saved predictions read back as they were, and are refused in another format version or of
// another kind (another model's).
func TestPredictionsFile(t *testing.T) {
	t.Parallel()
	rows := []Example{{Input: Input{Text: "a"}, Label: "x"}, {Input: Input{Text: "b"}, Label: "y"}}
	p := Predictions[[]string]{Version: PredictionsVersion, Rows: []string{"r1", "r2"}, Hash: HashJSON(rows),
		K: 2, Folds: 5, Options: DefaultOptions(), Seeds: [][]string{{"x", "y"}, {"x", "x"}}}
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	require.NoError(t, p.Save(path))
	got, err := LoadPredictions[[]string](path)
	require.NoError(t, err)
	require.Equal(t, p, got)
	require.NoError(t, got.Match([]string{"r1", "r2"}, nil, HashJSON(rows), 2, 5))

	rows[1].Label = "x"
	require.ErrorContains(t, got.Match([]string{"r1", "r2"}, nil, HashJSON(rows), 2, 5), "the same ids but other contents")
	require.ErrorContains(t, got.Match([]string{"r1", "r3"}, nil, p.Hash, 2, 5), "(row 2 is r2 there, r3 here)")
	require.ErrorIs(t, got.Match([]string{"r1", "r2"}, nil, p.Hash, 2, 4), ErrOtherPredictions)

	_, err = LoadPredictions[[]int](path)
	require.ErrorIs(t, err, ErrOtherPredictions)
	require.ErrorContains(t, err, "holds predictions of another kind")

	old := filepath.Join(dir, "old.json")
	require.NoError(t, os.WriteFile(old, []byte(`{"version": 0}`), 0o644))
	_, err = LoadPredictions[[]string](old)
	require.ErrorIs(t, err, ErrOtherPredictions)
	require.ErrorContains(t, err, "format version 0, this build reads version 1")
}
