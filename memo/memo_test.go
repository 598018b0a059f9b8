package memo

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGetRemembersAndStaysBounded(t *testing.T) {
	m := New[int](64)
	calls := map[string]int{}
	f := func(s string) int { calls[s]++; return len(s) }
	require.Equal(t, 5, m.Get("hello", f))
	require.Equal(t, 5, m.Get("hello", f))
	require.Equal(t, 1, calls["hello"], "a key seen is looked up, not worked out again")

	buf := []byte("world")
	require.Equal(t, 5, m.GetBytes(buf, f))
	copy(buf, "xxxxx")
	require.Equal(t, 5, m.GetBytes([]byte("world"), f))
	require.Equal(t, 1, calls["world"], "the key kept is a copy of the bytes, not the buffer")
	require.Equal(t, 0, calls["xxxxx"])

	for i := range 10000 {
		m.Get(fmt.Sprint(i), f)
	}
	n := 0
	for i := range m.shards {
		n += len(m.shards[i].m)
	}
	require.LessOrEqual(t, n, 64, "no more keys than asked for")

	m.Clear()
	m.Get("hello", f)
	require.Equal(t, 2, calls["hello"], "a cleared memo works keys out again")
}

func TestGetConcurrently(t *testing.T) {
	m := New[string](1024)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := fmt.Sprint((i * (g + 1)) % 3000)
				require.Equal(t, "v"+k, m.GetBytes([]byte(k), func(s string) string { return "v" + s }))
			}
		}()
	}
	wg.Wait()
}
