package ask

import (
	"context"
	"fmt"

	"github.com/ragd/ragd"
)

// chunkCache reads chunks once per turn: re-scoring carried sources, the context search, the
// graph and ranking all look at chunks, often the same ones. Chunk text never changes; only
// searchability can, and a chunk that leaves search in the milliseconds between two reads of
// one turn is no different from one that leaves it just after the turn.
type chunkCache struct {
	store ragd.Store
	byID  map[int64]ragd.Chunk
}

func newChunkCache(st ragd.Store) *chunkCache {
	return &chunkCache{store: st, byID: map[int64]ragd.Chunk{}}
}

// get returns the chunks with the given ids that exist, in the order of ids, reading from the
// store only those not read yet.
func (c *chunkCache) get(ctx context.Context, ids []int64) ([]ragd.Chunk, error) {
	var missing []int64
	for _, id := range ids {
		if _, ok := c.byID[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		read, err := c.store.Chunks(ctx, missing)
		if err != nil {
			return nil, fmt.Errorf("ask: loading chunks: %w", err)
		}
		for _, ch := range read {
			c.byID[ch.ID] = ch
		}
	}
	out := make([]ragd.Chunk, 0, len(ids))
	for _, id := range ids {
		if ch, ok := c.byID[id]; ok {
			out = append(out, ch)
		}
	}
	return out, nil
}
