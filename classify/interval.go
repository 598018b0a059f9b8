package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Interval is a two-sided 95% confidence interval.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

func (i Interval) String() string { return fmt.Sprintf("%.3f-%.3f", i.Lo, i.Hi) }

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson returns the Wilson score interval at 95% for k successes in n trials: unlike the
// normal approximation it stays inside [0, 1] and is honest at 0 and n, which small classes
// reach. With no trials it is [0, 1]: nothing is known.
func Wilson(k, n int) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	p, nf := float64(k)/float64(n), float64(n)
	z2 := z95 * z95
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z95 / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return Interval{max(0, centre-half), min(1, centre+half)}
}

// bootstrapRounds is how many resamples Bootstrap draws: enough for the 2.5th and 97.5th
// percentiles to move by less than 0.01 between seeds on a few hundred items.
const bootstrapRounds = 2000

// Bootstrap returns the percentile bootstrap 95% interval of a statistic of n items: stat is
// computed on bootstrapRounds resamples (with replacement) of the item indexes, drawn with a
// fixed seed so a report is reproducible.
func Bootstrap(n int, stat func(idx []int) float64) Interval {
	if n == 0 {
		return Interval{0, 1}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	vals := make([]float64, bootstrapRounds)
	idx := make([]int, n)
	for b := range vals {
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		vals[b] = stat(idx)
	}
	slices.Sort(vals)
	return Interval{vals[int(0.025*float64(len(vals)))], vals[int(0.975*float64(len(vals)))-1]}
}

// F1 is the harmonic mean of precision and recall, 0 when both are 0.
func F1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}
