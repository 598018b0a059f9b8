package kg

import (
	"cmp"
	"slices"
	"strings"
)

// Edge is a co-occurrence between two entities, by name. Weight is the number of chunks that
// mention both.
type Edge struct {
	Src, Dst string
	Weight   float64
}

// Edges counts co-occurrence over chunks (the entities of each chunk, as Extract returns them):
// two entities in the same chunk get an edge in each direction, weighted by the number of chunks
// they share. Only the first maxPerChunk distinct entities of a chunk are linked, so a chunk
// that lists fifty products does not make a clique of them all; with maxPerChunk below 2 there
// is nothing to link. No entity is linked to itself. Edges are sorted by Src, then Dst.
func Edges(chunks [][]Entity, maxPerChunk int) []Edge {
	if maxPerChunk < 2 {
		return nil
	}
	type pair struct{ src, dst string }
	weights := make(map[pair]float64)
	names := make([]string, 0, maxPerChunk)
	for _, es := range chunks {
		names = linked(names[:0], es, maxPerChunk)
		for i, a := range names {
			for _, b := range names[i+1:] {
				weights[pair{a, b}]++
				weights[pair{b, a}]++
			}
		}
	}
	edges := make([]Edge, 0, len(weights))
	for p, w := range weights {
		edges = append(edges, Edge{Src: p.src, Dst: p.dst, Weight: w})
	}
	slices.SortFunc(edges, func(a, b Edge) int {
		return cmp.Or(strings.Compare(a.Src, b.Src), strings.Compare(a.Dst, b.Dst))
	})
	return edges
}

// linked appends to names the first limit distinct non-empty names of es. Extract never repeats a
// name, but callers may build entity lists by hand, and a repeat must not count a chunk twice.
func linked(names []string, es []Entity, limit int) []string {
	for _, e := range es {
		if len(names) == limit {
			break
		}
		if e.Name != "" && !slices.Contains(names, e.Name) {
			names = append(names, e.Name)
		}
	}
	return names
}

// Repeated returns the entities of the current turn that earlier turns mentioned too (by Name),
// in the current turn's order and without repeats. The turns keep coming back to these: that is
// when their neighbours in the graph are worth retrieving.
func Repeated(current []Entity, earlier [][]Entity) []Entity {
	before := make(map[string]bool)
	for _, es := range earlier {
		for _, e := range es {
			before[e.Name] = true
		}
	}
	var out []Entity
	for _, e := range current {
		if before[e.Name] {
			out = append(out, e)
			delete(before, e.Name) // report each name once
		}
	}
	return out
}
