package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/classify"
	"github.com/ragd/ragd/internal/modeltest"
	"github.com/ragd/ragd/invariant"
)

// -options merges over the shipped options and refuses what classify.Options does not have.
func TestMergeOptions(t *testing.T) {
	t.Parallel()
	base := invariant.TrainOptions()
	got, err := mergeOptions(base, `{}`)
	require.NoError(t, err)
	require.Equal(t, base, got)

	got, err = mergeOptions(base, `{"l2": 0.5, "char_ngrams": true}`)
	require.NoError(t, err)
	want := base
	want.L2, want.CharNGrams = 0.5, true
	require.Equal(t, want, got)

	for _, bad := range []string{`{"l3": 1}`, `{"l2": "x"}`, `{} {}`, `[`} {
		_, err := mergeOptions(base, bad)
		require.ErrorContains(t, err, "-options", bad)
	}
}

// A flag is refused, by name, with a task that would ignore it; the go:generate lines' flags are
// accepted.
func TestCheckFlags(t *testing.T) {
	for _, c := range []struct {
		task string
		set  []string
		bad  string
	}{
		{"mode", []string{"task", "data", "out", "folds", "dev"}, ""},
		{"invariant-debugging", []string{"task", "data", "out"}, ""},
		{"invariant", []string{"task", "data", "out"}, ""},
		{"invariant-compare", []string{"task", "options", "k", "folds"}, ""},
		{"invariant-compare", []string{"task", "against", "options", "k", "folds"}, ""},
		{"invariant-perturbed", []string{"task", "options", "k", "folds", "out"}, ""},
		{"mode-compare", []string{"task", "data", "options", "k", "folds"}, ""},
		{"mode-compare", []string{"task", "against", "k"}, ""},
		{"mode-perturbed", []string{"task", "options", "k", "folds", "out"}, ""},
		{"mode-perturbed", []string{"task", "against"}, "-against applies only to -task invariant-compare, mode-compare"},
		{"mode-compare", []string{"task", "out"}, "-out applies only to"},
		{"invariant-perturbed", []string{"task", "against", "out"}, "-against applies only to -task invariant-compare, mode-compare"},
		{"invariant-stability", []string{"task", "seeds"}, ""},
		{"intent", []string{"task", "dev"}, "-dev applies only to -task mode"},
		{"invariant", []string{"task", "seeds"}, "-seeds applies only to -task invariant-stability"},
		{"invariant-stability", []string{"task", "k"}, "-k applies only to -task invariant-perturbed, invariant-compare, mode-perturbed, mode-compare"},
		{"invariant-compare", []string{"task", "out"}, "-out applies only to -task intent, mode, invariant-debugging, invariant, intent-data, invariant-perturbed, mode-perturbed"},
		{"invariant-stability", []string{"task", "options"}, "-options applies only to -task invariant-perturbed, invariant-compare, mode-perturbed, mode-compare"},
		{"invariant-debugging", []string{"task", "folds"}, "-folds applies only to"},
	} {
		err := checkFlags(c.task, c.set)
		if c.bad == "" {
			require.NoError(t, err, c.task)
		} else {
			require.ErrorContains(t, err, c.bad, c.task)
		}
	}
}

// -against takes predictions of the same invariant rows, K and folds, whatever the tree's mode
// data, and refuses others naming the flag.
func TestLoadAgainst(t *testing.T) {
	t.Parallel()
	d, err := invariant.LoadData(filepath.Join(modeltest.SharedDir(t), "data", "labels"), filepath.Join("..", "..", "invariant"))
	require.NoError(t, err)
	d.Rows, d.Extra = d.Rows[:60], d.Extra[:20]
	p, err := invariant.Perturbed(d, invariant.TrainOptions(), 1, 2, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "b.json")
	require.NoError(t, p.Save(path))

	got, err := loadAgainst(path, d, 1, 2)
	require.NoError(t, err)
	require.Equal(t, p, got)
	otherModes := d
	otherModes.Debugging = func(string) float64 { return 0 }
	_, err = loadAgainst(path, otherModes, 1, 2)
	require.NoError(t, err, "a change of mode data leaves the invariant rows as they are")

	otherRows := d
	otherRows.Rows = d.Rows[1:]
	for _, c := range []struct {
		d        invariant.Data
		k, folds int
	}{{otherRows, 1, 2}, {d, 10, 2}, {d, 1, 5}} {
		_, err := loadAgainst(path, c.d, c.k, c.folds)
		require.ErrorIs(t, err, classify.ErrOtherPredictions)
		require.ErrorContains(t, err, "-against "+path+": ")
	}
	_, err = loadAgainst(filepath.Join(t.TempDir(), "missing.json"), d, 1, 2)
	require.ErrorContains(t, err, "-against ")
}
