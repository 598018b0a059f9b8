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
