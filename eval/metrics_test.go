package eval

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMetrics(t *testing.T) {
	t.Parallel()
	log2of3 := math.Log2(3) // discount of rank 2 (i = 1); rank 1 is log2(2) = 1, rank 3 log2(4) = 2
	for _, tc := range []struct {
		name       string
		ranked     []string
		rel        map[string]int
		k          int
		ndcg, recl float64
	}{
		{
			// DCG = 1/1 + 1/log2(3); the ideal ranking is the same.
			name: "perfect", ranked: []string{"a", "b", "x"}, rel: map[string]int{"a": 1, "b": 1}, k: 3,
			ndcg: 1, recl: 1,
		},
		{
			// Graded, linear gain. DCG@3 = c:1/1 + x:0/log2(3) + a:3/2 = 2.5.
			// Ideal order a,b,c: IDCG@3 = 3/1 + 2/log2(3) + 1/2 = 4.7619.
			// Recall@3: a and c of a, b, c.
			name: "graded", ranked: []string{"c", "x", "a", "b"}, rel: map[string]int{"a": 3, "b": 2, "c": 1}, k: 3,
			ndcg: 2.5 / (3 + 2/log2of3 + 0.5), recl: 2.0 / 3,
		},
		{
			// The ideal DCG is cut at k too: IDCG@1 = 3/1, DCG@1 = c:1/1.
			name: "graded cut at 1", ranked: []string{"c", "a"}, rel: map[string]int{"a": 3, "b": 2, "c": 1}, k: 1,
			ndcg: 1.0 / 3, recl: 1.0 / 3,
		},
		{
			// Only 1 doc retrieved. DCG@10 = 1; IDCG@10 = 1 + 1/log2(3) = 1.6309. Recall 1 of 2.
			name: "k beyond the list", ranked: []string{"a"}, rel: map[string]int{"a": 1, "b": 1}, k: 10,
			ndcg: 1 / (1 + 1/log2of3), recl: 0.5,
		},
		{
			// Grades <= 0 are judged but not relevant: DCG@2 = a:0 + b:1/log2(3), IDCG@2 = 1.
			name: "non-positive grades", ranked: []string{"a", "b", "c"}, rel: map[string]int{"a": -1, "b": 1, "c": 0}, k: 2,
			ndcg: 1 / log2of3, recl: 1,
		},
		{
			// The repeat of a is dropped, so b moves to rank 2: DCG@2 = 1 + 1/log2(3) = IDCG@2.
			// Counted twice, a would give DCG@2 = 1.6309 with recall 2 of 2 while b is missed.
			name: "relevant doc twice", ranked: []string{"a", "a", "b"}, rel: map[string]int{"a": 1, "b": 1}, k: 2,
			ndcg: 1, recl: 1,
		},
		{
			name: "no relevant docs", ranked: []string{"a", "b"}, rel: map[string]int{"a": 0}, k: 10,
			ndcg: 0, recl: 0,
		},
		{
			name: "no judgments", ranked: []string{"a"}, rel: nil, k: 10,
			ndcg: 0, recl: 0,
		},
		{
			name: "no results", ranked: nil, rel: map[string]int{"a": 1}, k: 10,
			ndcg: 0, recl: 0,
		},
		{
			name: "k zero", ranked: []string{"a"}, rel: map[string]int{"a": 1}, k: 0,
			ndcg: 0, recl: 0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.InDelta(t, tc.ndcg, NDCG(tc.ranked, tc.rel, tc.k), 1e-12, "nDCG@%d", tc.k)
			require.InDelta(t, tc.recl, Recall(tc.ranked, tc.rel, tc.k), 1e-12, "Recall@%d", tc.k)
		})
	}
}
