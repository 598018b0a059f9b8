package main

import (
	"testing"

	"github.com/stretchr/testify/require"

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
		{"invariant-stability", []string{"task", "seeds"}, ""},
		{"intent", []string{"task", "dev"}, "-dev applies only to -task mode"},
		{"invariant", []string{"task", "seeds"}, "-seeds applies only to -task invariant-stability"},
		{"invariant-stability", []string{"task", "k"}, "-k applies only to -task invariant-compare"},
		{"invariant-compare", []string{"task", "out"}, "-out applies only to -task intent, mode, invariant-debugging, invariant, intent-data"},
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
