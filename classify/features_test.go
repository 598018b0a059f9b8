package classify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The features of one input are the same to the bit on every call: their norms were once summed
// in map order, so a served turn's confidence moved in its last bits from one call to the next.
func TestFeaturizeIsDeterministic(t *testing.T) {
	in := Input{
		Text:    strings.Repeat("Is the breakfast at the Allenbell better than the one at Hobsons House? ", 3) + "clean bathrooms, parking, quiet rooms near the station",
		Context: map[string]string{"previous": "Are their bathrooms clean? What about the breakfast and parking?", "reply": "The Hobsons House is a nice guesthouse in the west."},
	}
	opts := DefaultOptions()
	opts.CharNGrams = true
	want, _ := featurize(in, opts)
	require.Greater(t, len(want), 100)
	for range 200 {
		got, _ := featurize(in, opts)
		require.Equal(t, want, got)
	}
}
