// Package memo remembers the results of pure functions of short strings (a word's token count,
// a word's analysed term) for concurrent callers, in a bounded map: text repeats its words, so
// each is worked out once and looked up after.
package memo

import (
	"strings"
	"sync"
)

// Strings remembers a pure function's results by key. It holds at most about the number of
// entries New was given: the map is cut into shards, and a shard that is full is emptied, so
// the common keys come back at once and no input can grow it without bound. The shards grow as
// keys come rather than being made at their full size: a lookup's cost is memory (the slot and
// the key's bytes are seldom in the cache), and the keys in use then sit in as small a table as
// holds them.
type Strings[V any] struct {
	perShard int
	shards   [shards]shard[V]
}

type shard[V any] struct {
	mu sync.RWMutex
	m  map[string]V
}

const shards = 32

// New returns a memo of about entries keys.
func New[V any](entries int) *Strings[V] {
	return &Strings[V]{perShard: max(entries/shards, 1)}
}

// Get returns f(key), from memory when key was seen.
func (c *Strings[V]) Get(key string, f func(string) V) V {
	sh := &c.shards[fnv32(key)%shards]
	sh.mu.RLock()
	v, ok := sh.m[key]
	sh.mu.RUnlock()
	if ok {
		return v
	}
	v = f(key)
	c.put(sh, strings.Clone(key), v)
	return v
}

// GetBytes is Get with the key as bytes, which are neither kept nor copied unless the key is new.
func (c *Strings[V]) GetBytes(key []byte, f func(string) V) V {
	sh := &c.shards[fnv32(key)%shards]
	sh.mu.RLock()
	v, ok := sh.m[string(key)]
	sh.mu.RUnlock()
	if ok {
		return v
	}
	k := string(key)
	v = f(k)
	c.put(sh, k, v)
	return v
}

func (c *Strings[V]) put(sh *shard[V], key string, v V) {
	sh.mu.Lock()
	if sh.m == nil || len(sh.m) >= c.perShard {
		sh.m = map[string]V{}
	}
	sh.m[key] = v
	sh.mu.Unlock()
}

// fnv32 is FNV-1a, to pick a shard.
func fnv32[T string | []byte](s T) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// Clear forgets every key (the maps are kept): for measuring the price of first sight.
func (c *Strings[V]) Clear() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		clear(sh.m)
		sh.mu.Unlock()
	}
}
