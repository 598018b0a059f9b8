package eval

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	// b beats a by 0.1 on every item: the interval is the point, and only the observed signs
	// (1 in 2^20 of the flips) are as extreme.
	a, b := make([]float64, 20), make([]float64, 20)
	for i := range a {
		a[i], b[i] = 0.2+0.01*float64(i), 0.3+0.01*float64(i)
	}
	d := Compare(a, b)
	require.Equal(t, 20, d.N)
	require.InDelta(t, 0.1, d.Mean, 1e-12)
	require.InDelta(t, 0.1, d.Lo, 1e-12)
	require.InDelta(t, 0.1, d.Hi, 1e-12)
	require.Less(t, d.P, 0.001)
	require.Equal(t, d, Compare(a, b), "the same scores give the same interval and p")

	// Gains and losses that cancel: no evidence of a difference.
	d = Compare([]float64{0, 1, 0, 1}, []float64{1, 0, 1, 0})
	require.Zero(t, d.Mean)
	require.Equal(t, 1.0, d.P)
	require.Less(t, d.Lo, 0.0)
	require.Greater(t, d.Hi, 0.0)

	require.Equal(t, Paired{P: 1}, Compare(nil, nil))
}

// The randomization p-value converges to the exact one, which 10 items allow enumerating.
func TestCompareMatchesExactPermutation(t *testing.T) {
	t.Parallel()
	a := []float64{0.5, 0.2, 0.7, 0.1, 0.9, 0.4, 0.3, 0.6, 0.8, 0.0}
	b := []float64{0.6, 0.5, 0.6, 0.4, 1.0, 0.4, 0.2, 0.9, 0.9, 0.3}
	diffs := make([]float64, len(a))
	var obs float64
	for i := range a {
		diffs[i] = b[i] - a[i]
		obs += diffs[i]
	}
	extreme := 0
	for mask := 0; mask < 1<<len(diffs); mask++ {
		var s float64
		for i, x := range diffs {
			if mask&(1<<i) != 0 {
				s -= x
			} else {
				s += x
			}
		}
		if math.Abs(s) >= math.Abs(obs)-1e-12 {
			extreme++
		}
	}
	exact := float64(extreme) / float64(int(1)<<len(diffs))
	d := Compare(a, b)
	require.InDelta(t, exact, d.P, 0.01, "exact %.4f", exact)
	require.InDelta(t, obs/10, d.Mean, 1e-12)
	require.Less(t, d.Lo, d.Mean)
	require.Greater(t, d.Hi, d.Mean)
}
