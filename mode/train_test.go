package mode

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCrossValidateAlone: the same folds and fold models as CrossValidate, each held-out turn
// read without its previous turn. So a turn without one gets CrossValidate's probabilities
// exactly, and a turn with one is read as Classify(text, "") would.
func TestCrossValidateAlone(t *testing.T) {
	t.Parallel()
	rows, err := LoadExamples(filepath.Join(labelsDir(t), "modes_train.jsonl"))
	require.NoError(t, err)
	rows = rows[:150] // a few folds' worth is enough, and cheap
	opts := TrainOptions()
	withPrev, err := CrossValidate(rows, nil, 3, opts)
	require.NoError(t, err)
	alone, err := CrossValidateAlone(rows, nil, 3, opts)
	require.NoError(t, err)
	require.Len(t, alone, len(rows))
	var bare, differ int
	for i, r := range rows {
		if r.Prev == "" {
			bare++
			require.Equal(t, withPrev[i], alone[i], "%s has no previous turn", r.ID)
		} else if alone[i].Probs[0] != withPrev[i].Probs[0] {
			differ++
		}
	}
	require.Positive(t, bare, "some turns have no previous turn")
	require.Positive(t, differ, "the previous turn changes some probabilities, and CrossValidateAlone leaves it out")

	_, err = CrossValidateAlone(rows, nil, 1, opts)
	require.Error(t, err)
}
