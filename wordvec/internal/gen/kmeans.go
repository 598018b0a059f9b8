package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// Spherical k-means (Dhillon and Modha, 2001): k-means under cosine similarity on unit
// vectors, with unit-normalised centroids. Hand-rolled because the one Go module for k-means
// found (github.com/muesli/kmeans) is Euclidean, draws its initial centroids from an unseeded
// source, runs on one goroutine, and is not served by the module proxy reachable here; the
// algorithm is some eighty lines.
//
// Deterministic: the initialisation is k-means++ from a PCG source of a fixed seed, a point's
// assignment depends on nothing but the centroids (ties go to the lower id), and each centroid
// is summed over its members in table order, whatever the number of goroutines. float32 dot
// products: on amd64, where Go does not fuse multiply-adds, the result is the same on every
// machine; the committed file is what the build uses either way.

// kmeansOptions fixes a run.
type kmeansOptions struct {
	k       int
	seed    uint64
	maxIter int // Lloyd iterations at most; the run stops earlier when no assignment changes
	log     io.Writer
}

// chunks is the fixed number of pieces the points are split into for the goroutines.
const chunks = 64

// parallel runs f for every chunk c of n items, [lo, hi), over GOMAXPROCS goroutines.
func parallel(n int, f func(c, lo, hi int)) {
	var wg sync.WaitGroup
	next := make(chan int, chunks)
	for c := range chunks {
		next <- c
	}
	close(next)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				f(c, c*n/chunks, (c+1)*n/chunks)
			}
		}()
	}
	wg.Wait()
}

// dot is the inner product of two equal-length vectors, with four accumulators.
func dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	b = b[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// sphericalKMeans clusters the n unit vectors of x (row-major, d values each) into o.k clusters
// and returns each point's cluster id.
func sphericalKMeans(x []float32, d int, o kmeansOptions) []uint16 {
	n := len(x) / d
	row := func(m []float32, i int) []float32 { return m[i*d : (i+1)*d] }
	rng := rand.New(rand.NewPCG(o.seed, uint64(o.k)))

	// k-means++: each next centroid is a point drawn with probability proportional to its
	// squared Euclidean distance to the nearest chosen one, 2(1 - cos) on the unit sphere.
	centers := make([]float32, o.k*d)
	best := make([]float32, n) // highest cosine to a chosen centroid so far
	for i := range best {
		best[i] = -2
	}
	pick := rng.IntN(n)
	for c := range o.k {
		copy(row(centers, c), row(x, pick))
		parallel(n, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				best[i] = max(best[i], dot(row(x, i), row(centers, c)))
			}
		})
		var total float64
		for _, b := range best {
			total += max(0, 1-float64(b))
		}
		u := rng.Float64() * total
		pick = n - 1
		for i, b := range best {
			if u -= max(0, 1-float64(b)); u < 0 {
				pick = i
				break
			}
		}
	}

	assign := make([]uint16, n)
	sim := make([]float32, n)
	changed := make([]int, chunks)
	for iter := 1; iter <= o.maxIter; iter++ {
		// Assign every point to its most similar centroid.
		clear(changed)
		parallel(n, func(c, lo, hi int) {
			for i := lo; i < hi; i++ {
				xi := row(x, i)
				top, arg := float32(math.Inf(-1)), 0
				for j := range o.k {
					if s := dot(xi, row(centers, j)); s > top {
						top, arg = s, j
					}
				}
				if iter == 1 || assign[i] != uint16(arg) {
					changed[c]++
				}
				assign[i], sim[i] = uint16(arg), top
			}
		})
		moved := 0
		for _, m := range changed {
			moved += m
		}
		var obj float64
		for _, s := range sim {
			obj += float64(s)
		}
		fmt.Fprintf(o.log, "k=%d iteration %d: %d points moved, mean cosine %.5f\n", o.k, iter, moved, obj/float64(n))
		if moved == 0 || iter == o.maxIter {
			break
		}

		// Each centroid is the normalised sum of its members, summed in table order.
		members := make([][]int32, o.k)
		for i, c := range assign {
			members[c] = append(members[c], int32(i))
		}
		var empty []int
		parallel(o.k, func(_, lo, hi int) {
			sum := make([]float64, d)
			for c := lo; c < hi; c++ {
				if len(members[c]) == 0 {
					continue
				}
				clear(sum)
				for _, i := range members[c] {
					for j, v := range row(x, int(i)) {
						sum[j] += float64(v)
					}
				}
				var norm float64
				for _, v := range sum {
					norm += v * v
				}
				norm = math.Sqrt(norm)
				for j, v := range sum {
					centers[c*d+j] = float32(v / norm)
				}
			}
		})
		for c := range o.k {
			if len(members[c]) == 0 {
				empty = append(empty, c)
			}
		}
		// An empty cluster restarts at the points least like their centroids, one each.
		if len(empty) > 0 {
			far := make([]int, n)
			for i := range far {
				far[i] = i
			}
			slices.SortStableFunc(far, func(a, b int) int {
				switch {
				case sim[a] < sim[b]:
					return -1
				case sim[a] > sim[b]:
					return 1
				}
				return 0
			})
			for e, c := range empty {
				copy(row(centers, c), row(x, far[e]))
			}
			fmt.Fprintf(o.log, "k=%d iteration %d: %d empty clusters restarted\n", o.k, iter, len(empty))
		}
	}
	return assign
}
