package invariant

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The span rule by hand: same type and IoU >= 0.3 for the typed rows, any type for the sticky
// row, safety or hard constraint for the rules row; a message without gold spans that gets one
// is a false alarm.
func TestEvaluateSpans(t *testing.T) {
	t.Parallel()
	msg := "Never log the token. The build fails with KeyError."
	//       0         1         2         3         4         5
	//       0123456789012345678901234567890123456789012345678901
	exs := []Example{
		{ID: "a", Text: msg, Labels: []Label{
			{Type: Safety, Start: 0, End: 19},    // "Never log the token"
			{Type: Blocking, Start: 41, End: 49}, // "KeyError"
		}},
		{ID: "b", Text: "thanks!"},
	}
	pred := map[string][]Span{
		msg: {
			{Type: Constraint, Start: 0, End: 20}, // right place, wrong type: sticky but not typed
			{Type: Blocking, Start: 21, End: 50},  // IoU 8/29 < 0.3: no match
		},
		"thanks!": {{Type: Correction, Start: 0, End: 6}},
	}
	r := Evaluate(exs, func(s string) []Span { return pred[s] })
	require.Equal(t, Counts{Pred: 1, PredOK: 1, Gold: 1, GoldOK: 1, TP: 1}, r.Rules)

	// A rule found only as a blocking error is not kept to the conversation's end, and a rule
	// over an error is no rule: neither matches in the rules row.
	exs[0].Labels = append(exs[0].Labels, Label{Type: Constraint, Start: 21, End: 50})
	pred[msg] = []Span{{Type: Blocking, Start: 0, End: 19}, {Type: Safety, Start: 41, End: 49}}
	wrong := Evaluate(exs, func(s string) []Span { return pred[s] })
	require.Equal(t, Counts{Pred: 1, PredOK: 0, Gold: 2, GoldOK: 0, TP: 1}, wrong.Rules)
	require.Equal(t, 2, wrong.Sticky.GoldOK, "the sticky row counts both misplaced types")
	require.Equal(t, Counts{Pred: 0, Gold: 1, FN: 1}, *r.Types[Safety])
	require.Equal(t, Counts{Pred: 1, Gold: 0, FP: 1}, *r.Types[Constraint])
	require.Equal(t, Counts{Pred: 1, Gold: 1, TP: 1}, *r.Types[Blocking])
	require.Equal(t, Counts{Pred: 1, FP: 1}, *r.Types[Correction])
	require.Equal(t, Counts{Pred: 3, PredOK: 0, Gold: 2, GoldOK: 0, TP: 1, FP: 1}, r.Micro)
	require.Equal(t, Counts{Pred: 3, PredOK: 1, Gold: 2, GoldOK: 1, TP: 1, FP: 1}, r.Sticky)
	require.Equal(t, [3]int{2, 1, 1}, [3]int{r.Messages, r.Empty, r.FalseAlarms})

	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	require.Regexp(t, `(?m)^\s*sticky \(any type\)\s+0\.333\s+0\.500\s`, b.String(), "name, precision, recall first")
	require.Regexp(t, `(?m)^\s*rules \(safety or hard\)\s+1\.000\s+1\.000\s`, b.String())
}
