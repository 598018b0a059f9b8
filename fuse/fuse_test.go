package fuse

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func ids(items []Item) []int64 {
	out := make([]int64, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func TestRRF(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		lists []List
		k     int
		want  []int64
	}{
		{
			name:  "agreement beats one list's top rank",
			lists: []List{{Name: "bm25", IDs: []int64{1, 2, 3}}, {Name: "vector", IDs: []int64{4, 2, 5}}},
			// 2: 1/62+1/62 = 0.0323; 1 and 4: 1/61 = 0.0164 (tie, 1's list came first); 3, 5: 1/63.
			want: []int64{2, 1, 4, 3, 5},
		},
		{
			name:  "weights scale a list's votes",
			lists: []List{{Name: "bm25", Weight: 1, IDs: []int64{1}}, {Name: "vector", Weight: 3, IDs: []int64{2}}},
			want:  []int64{2, 1},
		},
		{
			name:  "k shapes how fast votes fall with rank",
			lists: []List{{Name: "a", IDs: []int64{1, 2, 3}}, {Name: "b", IDs: []int64{3, 9}}},
			// k=1: 3 gets 1/4+1/2 = 0.75, 1 gets 1/2, 2 and 9 get 1/3 each (tie: same best rank,
			// 2's list came first).
			k:    1,
			want: []int64{3, 1, 2, 9},
		},
		{
			name:  "repeats in a list count once, at the best rank",
			lists: []List{{Name: "a", IDs: []int64{7, 8, 7}}},
			want:  []int64{7, 8},
		},
		{name: "no lists", want: []int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, ids(RRF(tc.lists, tc.k)))
		})
	}
}

func TestRRFScoresAndRanks(t *testing.T) {
	t.Parallel()
	got := RRF([]List{{Name: "bm25", IDs: []int64{1, 2}}, {Name: "vector", Weight: 0.5, IDs: []int64{2}}}, 0)
	require.Equal(t, int64(2), got[0].ID)
	// Ranks count from 1 and k defaults to 60: 1/(60+2) + 0.5/(60+1).
	require.InDelta(t, 1.0/62+0.5/61, got[0].Score, 1e-12)
	require.Equal(t, map[string]int{"bm25": 2, "vector": 1}, got[0].Ranks)
	require.InDelta(t, 1.0/61, got[1].Score, 1e-12)
	require.Equal(t, map[string]int{"bm25": 1}, got[1].Ranks)
}
