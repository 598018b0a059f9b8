package modeltest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNear(t *testing.T) {
	t.Parallel()
	decode := func(s string) any {
		var v any
		require.NoError(t, json.Unmarshal([]byte(s), &v))
		return v
	}
	a := decode(`{"w": [0.1, -2.5e3, 7], "name": "m"}`)
	require.True(t, near(a, decode(`{"w": [0.10000000000001, -2500.0000000001, 7], "name": "m"}`)), "last bits")
	require.False(t, near(a, decode(`{"w": [0.1001, -2500, 7], "name": "m"}`)), "a weight that moved")
	require.False(t, near(a, decode(`{"w": [0.1, -2500], "name": "m"}`)), "a weight missing")
	require.False(t, near(a, decode(`{"w": [0.1, -2500, 7], "name": "n"}`)), "a name changed")
}
