package invariant

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/classify"
	"github.com/ragd/ragd/internal/modeltest"
	"github.com/ragd/ragd/mode"
)

// TestDebuggingReadsTheDetectorsOwnModel: the detector's P(DEBUGGING) comes from its own model
// (DebuggingFile), never from the shipped mode model, so that a new mode model leaves the
// detector as it was. With another model in the place of the detector's, Debugging and Detect
// must follow it, and so differ from what the shipped mode model says; had they read the shipped
// mode model, they would not have moved.
func TestDebuggingReadsTheDetectorsOwnModel(t *testing.T) {
	// Not parallel: it swaps the package's P(DEBUGGING) model.
	rows, _, err := loadModeData(filepath.Join(modeltest.SharedDir(t), "data", "labels"), ".")
	require.NoError(t, err)
	other, err := mode.Train(rows[:120], DebuggingOptions()) // another model: a few rows only
	require.NoError(t, err)
	exs := loadExamples(t)[:200]

	embedded := debuggingModel
	t.Cleanup(func() { debuggingModel = embedded })
	debuggingModel = func() *classify.Model { return other }
	moved := 0
	for _, ex := range exs {
		p := Debugging(ex.Text)
		require.Equal(t, mode.Probabilities(other, ex.Text, "")[mode.Debugging], p, ex.ID)
		require.Equal(t, Shipped().Detect(ex.Text, p), Detect(ex.Text), ex.ID)
		if _, _, shipped := mode.Classify(ex.Text, ""); shipped[mode.Debugging] != p {
			moved++
		}
	}
	require.Greater(t, moved, len(exs)/2, "the other model's P(DEBUGGING) is not the shipped mode model's")
}
