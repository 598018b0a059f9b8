package index_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Information counts a turn's distinct words by how few chunks have them: a word one chunk has
// counts 1, a word every chunk has nearly 0, and stop words and words no chunk has count 0.
func TestInformation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.save(t, "quakes", "1", "Alpha", "Drop, cover and hold on during earthquakes, safely.", "Gas leaks after the shaking, safely.")
	b.save(t, "gas", "1", "Beta", "Gas appliances, serviced safely every year.")
	ix := b.caughtUp(t)
	info := func(text string) float64 {
		t.Helper()
		v, err := ix.Information(b.ctx, text)
		require.NoError(t, err)
		return v
	}
	require.InDelta(t, 1, info("earthquakes"), 1e-9, "one chunk has it")
	require.InDelta(t, 2, info("Earthquakes and leaks?"), 1e-9, "two such words, stemmed, stop word left out")
	require.Equal(t, info("earthquakes"), info("earthquake EARTHQUAKES earthquakes"), "each term once")
	gas, safe := info("gas"), info("safely")
	require.Greater(t, gas, 0.0)
	require.Less(t, gas, 1.0, "two chunks of three have it")
	require.Less(t, safe, gas, "every chunk has it")
	require.Less(t, safe, 0.2)
	require.Zero(t, info("the of and"), "stop words")
	require.Zero(t, info("zyzzyva"), "no chunk has it: it finds nothing")
}
