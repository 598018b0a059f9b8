package invariant

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Models trained on the same messages decide every clause alike; models trained on different
// halves of them do not.
func TestMeasureStability(t *testing.T) {
	t.Parallel()
	d := data(t)
	exs := d.Rows[:200]
	clauses := 0
	for _, ex := range exs {
		clauses += len(clauseTypes(ex.Text, nil))
	}

	same, err := MeasureStability(exs, TrainOptions(), d.Debugging, 2, 0, 1)
	require.NoError(t, err)
	require.Equal(t, Stability{Clauses: clauses}, same, "nothing left out: the same models")

	halves, err := MeasureStability(exs, TrainOptions(), d.Debugging, 2, 100, 1)
	require.NoError(t, err)
	require.Equal(t, clauses, halves.Clauses)
	require.Positive(t, halves.Flips, "models trained on different halves differ somewhere")
	require.LessOrEqual(t, halves.Flips, clauses)
	require.Positive(t, halves.Messages)
}
