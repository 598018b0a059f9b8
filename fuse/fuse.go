// Package fuse merges ranked lists with reciprocal rank fusion (Cormack, Clarke and Büttcher,
// SIGIR 2009): each list votes 1/(k + rank) for each item it holds, times the list's weight.
// Ranks count from 1, so the top item of a list scores 1/(k+1). Implementations differ here:
// some count ranks from 0 and some use k = 50; ragd counts from 1 with k = 60, as the paper and
// pgvector's and pkgsite's hybrid search do.
package fuse

import "sort"

// DefaultK is the rank constant: large enough that the first few ranks of one list cannot
// outvote agreement between lists.
const DefaultK = 60

// List is one ranked list, best first. Rank is the position in IDs plus one.
type List struct {
	Name   string
	Weight float64 // 0 is treated as 1
	IDs    []int64
}

// Item is one fused result.
type Item struct {
	ID    int64
	Score float64
	// Ranks holds the item's 1-based rank in each list that contains it, by list name.
	Ranks map[string]int
}

// RRF fuses lists into one ranking. Ties are broken by the best rank the item has in any list,
// then by the order lists were given, then by id, so the result is deterministic. An id repeated
// within one list counts at its first (best) rank only.
func RRF(lists []List, k int) []Item {
	if k <= 0 {
		k = DefaultK
	}
	byID := map[int64]*Item{}
	best := map[int64][2]int{} // best rank, index of the list giving it
	var order []int64
	for li, l := range lists {
		w := l.Weight
		if w == 0 {
			w = 1
		}
		for i, id := range l.IDs {
			it, ok := byID[id]
			if !ok {
				it = &Item{ID: id, Ranks: map[string]int{}}
				byID[id] = it
				order = append(order, id)
				best[id] = [2]int{i + 1, li}
			}
			if _, seen := it.Ranks[l.Name]; seen {
				continue
			}
			rank := i + 1
			it.Ranks[l.Name] = rank
			it.Score += w / float64(k+rank)
			if b := best[id]; rank < b[0] {
				best[id] = [2]int{rank, li}
			}
		}
	}
	out := make([]Item, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		ba, bb := best[a.ID], best[b.ID]
		if ba != bb {
			if ba[0] != bb[0] {
				return ba[0] < bb[0]
			}
			return ba[1] < bb[1]
		}
		return a.ID < b.ID
	})
	return out
}
