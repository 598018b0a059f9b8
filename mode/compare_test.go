package mode

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/classify"
)

// Seed 0 is CrossValidate; other seeds train the fold models without different rows, the same
// ones for the same seed.
func TestCrossValidatePerturbed(t *testing.T) {
	t.Parallel()
	rows, extra := compareRows(t)
	opts := cheapOptions()
	want, err := CrossValidate(rows, extra, 3, opts)
	require.NoError(t, err)
	got, err := CrossValidatePerturbed(rows, extra, 3, opts, 0)
	require.NoError(t, err)
	require.Equal(t, want, got, "seed 0 drops nothing")

	one, err := CrossValidatePerturbed(rows, extra, 3, opts, 1)
	require.NoError(t, err)
	require.Len(t, one, len(rows))
	again, err := CrossValidatePerturbed(rows, extra, 3, opts, 1)
	require.NoError(t, err)
	require.Equal(t, one, again, "deterministic")
	two, err := CrossValidatePerturbed(rows, extra, 3, opts, 2)
	require.NoError(t, err)
	require.NotEqual(t, want, one, "seed 1 trains on fewer rows")
	require.NotEqual(t, one, two, "seeds drop different rows")
}

// The same options paired over perturbations differ by exactly nothing, also against a run saved
// and read back as another tree's would be; options that train different models do not. The
// bootstrap's macro-F1s, raw and with the fallback, are the reports'.
func TestCompare(t *testing.T) {
	t.Parallel()
	rows, extra := compareRows(t)
	cfg := DefaultConfig()
	base, err := Perturbed(rows, extra, cheapOptions(), 2, 3, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "b.json")
	require.NoError(t, base.Save(path))
	saved, err := LoadPredictions(path, rows, 2, 3)
	require.NoError(t, err)
	require.Equal(t, base, saved, "predictions round-trip")

	again, err := Perturbed(rows, extra, cheapOptions(), 2, 3, nil)
	require.NoError(t, err)
	same, err := Compare(rows, saved, again, cfg)
	require.NoError(t, err)
	require.Len(t, same.Base, 2)
	for m := range Metrics {
		require.Equal(t, []float64{0, 0}, same.Diffs(m), Metrics[m].Name)
	}
	require.Equal(t, 0.0, same.MacroF1Diff.Lo)
	require.Equal(t, 0.0, same.MacroF1Diff.Hi)
	require.Equal(t, classify.Interval{}, same.ThresholdedMacroF1Diff)
	require.NotEqual(t, same.Base[0], same.Base[1], "the perturbations train different models")

	opts := cheapOptions()
	opts.L2 *= 100
	cand, err := Perturbed(rows, extra, opts, 2, 3, nil)
	require.NoError(t, err)
	diff, err := Compare(rows, saved, cand, cfg)
	require.NoError(t, err)
	require.Equal(t, same.Base, diff.Base, "the baseline does not depend on the candidate")
	moved := false
	for m := range Metrics {
		for _, x := range diff.Diffs(m) {
			moved = moved || x != 0
		}
	}
	require.True(t, moved, "a candidate with 100 times the L2 penalty scores differently")
	require.LessOrEqual(t, diff.MacroF1Diff.Lo, diff.MacroF1Diff.Hi)
	require.LessOrEqual(t, diff.ThresholdedMacroF1Diff.Lo, diff.ThresholdedMacroF1Diff.Hi)

	raw, thresholded, err := EvaluatePredictions(cand.Seeds[0], rows, cfg)
	require.NoError(t, err)
	gold, pred, fallback, all := make([]int, len(rows)), make([]int, len(rows)), make([]int, len(rows)), make([]int, len(rows))
	for i, p := range cand.Seeds[0] {
		gold[i], pred[i], all[i] = slices.Index(Modes, rows[i].Mode), slices.Index(Modes, Mode(p.Label)), i
		fallback[i] = pred[i]
		if p.Confidence() < cfg.Threshold {
			fallback[i] = slices.Index(Modes, General)
		}
	}
	require.InDelta(t, raw.MacroF1, macroF1(gold, pred, all), 1e-12)
	require.InDelta(t, thresholded.MacroF1, macroF1(gold, fallback, all), 1e-12)
	m := slices.IndexFunc(Metrics, func(m Metric) bool { return m.Name == "raw macro-F1" })
	require.Equal(t, raw.MacroF1, diff.Cand[0][m])

	// Predictions pair only with the rows, K and folds they were made of.
	edited := slices.Clone(rows)
	edited[3].Text += " thanks"
	for _, c := range []struct {
		rows      []Example
		k, folds  int
		complaint string
	}{
		{edited, 2, 3, "the same ids but other contents"},
		{rows[1:], 2, 3, "they are of 150 rows and 0 extra rows, this data has 149 and 0"},
		{rows, 3, 3, "2 perturbations of 3-fold cross-validations, not 3 of 3 folds"},
		{rows, 2, 5, "not 2 of 5 folds"},
	} {
		_, err := LoadPredictions(path, c.rows, c.k, c.folds)
		require.ErrorIs(t, err, classify.ErrOtherPredictions)
		require.ErrorContains(t, err, c.complaint)
	}
}

// compareRows are a few folds' worth of rows and extra rows: enough to train, and cheap.
func compareRows(t *testing.T) (rows, extra []Example) {
	t.Helper()
	rows, err := LoadExamples(filepath.Join(labelsDir(t), "modes_train.jsonl"))
	require.NoError(t, err)
	extra, err = LoadExamples(filepath.Join("data", "modes_extra.jsonl"))
	require.NoError(t, err)
	return rows[:150], extra[:150]
}

// cheapOptions are TrainOptions without the calibration's five extra fits per model.
func cheapOptions() classify.Options {
	o := TrainOptions()
	o.CalibrationFolds = 0
	return o
}
