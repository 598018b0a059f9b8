package invariant

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// dropGroups leaves out whole conversations, at least 5% of the messages, the same ones for the
// same seed and fold, others for another seed, and nothing for seed 0.
func TestDropGroups(t *testing.T) {
	t.Parallel()
	var tr []Example
	size := map[string]int{}
	for i := range 41 { // 61 messages: 5% is 3.05, so at least 4 go
		tr = append(tr, Example{ID: fmt.Sprintf("a-%d", i)})
	}
	for c := range 5 {
		for j := range 4 {
			tr = append(tr, Example{ID: fmt.Sprintf("r-%d-%d", c, j), Source: fmt.Sprintf("real:conv%d#%d", c, j)})
		}
	}
	for _, ex := range tr {
		size[group(ex)]++
	}
	want := int(math.Ceil(0.05 * float64(len(tr))))

	require.Equal(t, tr, dropGroups(tr, 0, 0), "seed 0 drops nothing")
	wholeConversation := false
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 30; seed++ {
		for fold := range 2 {
			got := dropGroups(tr, seed, fold)
			require.Equal(t, got, dropGroups(tr, seed, fold), "deterministic")
			left := map[string]int{}
			for _, ex := range got {
				left[group(ex)]++
			}
			dropped := len(tr) - len(got)
			require.GreaterOrEqual(t, dropped, want)
			require.Less(t, dropped, want+4, "stops once enough are gone")
			for g, n := range size {
				require.Contains(t, []int{0, n}, left[g], "group %s dropped whole or not at all", g)
				if n > 1 && left[g] == 0 {
					wholeConversation = true
				}
			}
			seen[fmt.Sprint(got)] = true
		}
	}
	require.True(t, wholeConversation, "some seed drops a conversation of 4 turns")
	require.Greater(t, len(seen), 20, "seeds and folds drop different messages")
}

// The same options paired over perturbations differ by exactly nothing; options that train
// different models do not.
func TestCompare(t *testing.T) {
	t.Parallel()
	d := data(t)
	d.Rows, d.Extra = d.Rows[:90], d.Extra[:30]

	same, err := Compare(d, TrainOptions(), TrainOptions(), 2, 2, nil)
	require.NoError(t, err)
	require.Len(t, same.Base, 2)
	for m := range Metrics {
		require.Equal(t, []float64{0, 0}, same.Diffs(m), Metrics[m].Name)
	}
	require.Equal(t, 0.0, same.MicroF1Diff.Lo)
	require.Equal(t, 0.0, same.MicroF1Diff.Hi)
	require.NotEqual(t, same.Base[0], same.Base[1], "the perturbations train different models")

	cand := TrainOptions()
	cand.L2 *= 100
	diff, err := Compare(d, TrainOptions(), cand, 2, 2, nil)
	require.NoError(t, err)
	require.Equal(t, same.Base, diff.Base, "the baseline does not depend on the candidate")
	moved := false
	for m := range Metrics {
		for _, x := range diff.Diffs(m) {
			moved = moved || x != 0
		}
	}
	require.True(t, moved, "a candidate with 100 times the L2 penalty scores differently")
	require.LessOrEqual(t, diff.MicroF1Diff.Lo, diff.MicroF1Diff.Hi)
}
