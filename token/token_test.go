package token

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		// Reference counts from OpenAI's tiktoken for cl100k_base.
		{"tiktoken is great!", 6},
		{"The quick brown fox jumps over the lazy dog.", 10},
	} {
		require.Equal(t, tc.want, Count(tc.in), tc.in)
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	s := "The quick brown fox jumps over the lazy dog."
	require.Equal(t, "The quick brown", Truncate(s, 3))
	require.Equal(t, s, Truncate(s, 100))
	require.Equal(t, "", Truncate(s, 0))
}
