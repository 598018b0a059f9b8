package main

import (
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// Three tight bunches of unit vectors around three orthogonal directions: each becomes one
// cluster, and the result does not depend on the number of goroutines.
func TestSphericalKMeans(t *testing.T) {
	const d, per = 8, 50
	rng := rand.New(rand.NewPCG(3, 4))
	var x []float32
	for g := range 3 {
		for range per {
			v := make([]float64, d)
			v[g] = 1
			var norm float64
			for j := range v {
				v[j] += 0.1 * rng.NormFloat64()
				norm += v[j] * v[j]
			}
			for j := range v {
				x = append(x, float32(v[j]/math.Sqrt(norm)))
			}
		}
	}
	o := kmeansOptions{k: 3, seed: 1, maxIter: 20, log: io.Discard}
	assign := sphericalKMeans(x, d, o)
	for g := range 3 {
		for i := g * per; i < (g+1)*per; i++ {
			require.Equal(t, assign[g*per], assign[i], "point %d of bunch %d", i, g)
		}
	}
	require.NotEqual(t, assign[0], assign[per])
	require.NotEqual(t, assign[0], assign[2*per])
	require.NotEqual(t, assign[per], assign[2*per])

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	require.Equal(t, assign, sphericalKMeans(x, d, o))
}
