package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// PerturbShare is the share of a fold's training set a perturbation leaves out (DropGroups): 5%,
// the size of perturbation under which the invariant detector's decisions were shown to move
// (cmd/ragd-train -task invariant-stability). Both models' comparisons use it.
const PerturbShare = 0.05

// Perturb fills p.Seeds with run(seed) for the perturbations seed = 1..p.K, calling progress
// (when not nil) after each: the default K of 10 takes minutes.
func Perturb[T any](p *Predictions[T], run func(seed uint64) (T, error), progress func(done int)) error {
	if p.K < 1 {
		return fmt.Errorf("classify: a comparison needs at least one perturbation, not %d", p.K)
	}
	for seed := uint64(1); seed <= uint64(p.K); seed++ {
		v, err := run(seed)
		if err != nil {
			return err
		}
		p.Seeds = append(p.Seeds, v)
		if progress != nil {
			progress(int(seed))
		}
	}
	return nil
}

// DropGroups returns items without whole groups (group gives an item's), drawn in an order
// from seed and fold until at least ceil(share × len(items)) of them are gone, the others in
// their order. It perturbs one fold's training set, so that two models can be compared over
// several perturbations instead of one cross-validation, whose figures move with which items
// happen to train: a group's items leave together, as cross-validation keeps them together.
// Seed 0 returns items as they are.
func DropGroups[T any](items []T, group func(T) string, share float64, seed uint64, fold int) []T {
	if seed == 0 {
		return items
	}
	var order []string
	size := map[string]int{}
	for _, it := range items {
		g := group(it)
		if size[g] == 0 {
			order = append(order, g)
		}
		size[g]++
	}
	want := int(math.Ceil(share * float64(len(items))))
	drop := map[string]bool{}
	n := 0
	for _, j := range rand.New(rand.NewPCG(seed, uint64(fold))).Perm(len(order)) {
		if n >= want {
			break
		}
		drop[order[j]] = true
		n += size[order[j]]
	}
	out := make([]T, 0, len(items)-n)
	for _, it := range items {
		if !drop[group(it)] {
			out = append(out, it)
		}
	}
	return out
}

// Runs are the figures of a baseline and a candidate paired over perturbations k = 1..K of
// training: Base[k-1][m] is metric m of the baseline at perturbation k, Cand[k-1][m] the
// candidate's.
type Runs struct {
	Base, Cand [][]float64
}

// Mean is the mean over k of metric m of runs (Base or Cand).
func (r Runs) Mean(runs [][]float64, m int) float64 {
	s := 0.0
	for _, v := range runs {
		s += v[m]
	}
	return s / float64(len(runs))
}

// Diffs are the per-k differences Cand - Base of metric m.
func (r Runs) Diffs(m int) []float64 {
	out := make([]float64, len(r.Base))
	for k := range r.Base {
		out[k] = r.Cand[k][m] - r.Base[k][m]
	}
	return out
}
