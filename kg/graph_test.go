package kg

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// ents builds a chunk's entities from names; Kind and Surface do not matter to the graph.
func ents(names ...string) []Entity {
	out := make([]Entity, len(names))
	for i, n := range names {
		out[i] = Entity{Name: n, Kind: Proper, Surface: n}
	}
	return out
}

func TestEdges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		chunks [][]Entity
		max    int
		want   []Edge
	}{
		{
			name:   "a pair gets an edge each way",
			chunks: [][]Entity{ents("b", "a")},
			max:    10,
			want:   []Edge{{"a", "b", 1}, {"b", "a", 1}},
		},
		{
			name:   "weight counts shared chunks",
			chunks: [][]Entity{ents("a", "b", "c"), ents("b", "a"), ents("c"), nil, ents("a", "b")},
			max:    10,
			want: []Edge{
				{"a", "b", 3}, {"a", "c", 1},
				{"b", "a", 3}, {"b", "c", 1},
				{"c", "a", 1}, {"c", "b", 1},
			},
		},
		{
			name:   "no self-edges, and a repeated name counts once per chunk",
			chunks: [][]Entity{ents("a", "a", "b", "b", "")},
			max:    10,
			want:   []Edge{{"a", "b", 1}, {"b", "a", 1}},
		},
		{
			name:   "only the first maxPerChunk distinct entities of a chunk are linked",
			chunks: [][]Entity{ents("a", "a", "b", "c", "d"), ents("c", "d")},
			max:    2,
			want:   []Edge{{"a", "b", 1}, {"b", "a", 1}, {"c", "d", 1}, {"d", "c", 1}},
		},
		{
			name:   "a cap below two links nothing",
			chunks: [][]Entity{ents("a", "b")},
			max:    1,
			want:   nil,
		},
		{
			name:   "no chunks",
			chunks: nil,
			max:    10,
			want:   []Edge{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, Edges(tc.chunks, tc.max))
		})
	}
}

func TestEdgesOfExtract(t *testing.T) {
	t.Parallel()
	chunks := [][]Entity{
		Extract("The Arizona Cardinals joined the NFL in 1920.", nil),
		Extract("Fans of the NFL follow the Arizona Cardinals' record.", nil),
	}
	require.Equal(t, []Edge{
		{"arizona cardinals", "nfl", 2},
		{"nfl", "arizona cardinals", 2},
	}, Edges(chunks, 10))
}

func TestRepeated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		current []Entity
		earlier [][]Entity
		want    []Entity
	}{
		{
			name:    "entities of earlier turns, in the current turn's order",
			current: ents("c", "nfl", "b", "gdpr"),
			earlier: [][]Entity{ents("gdpr", "x"), ents("nfl")},
			want:    ents("nfl", "gdpr"),
		},
		{
			name:    "each name once",
			current: ents("nfl", "nfl"),
			earlier: [][]Entity{ents("nfl"), ents("nfl")},
			want:    ents("nfl"),
		},
		{
			name:    "the current turn's own form is returned",
			current: []Entity{{Name: "nfl", Kind: Acronym, Surface: "N.F.L."}},
			earlier: [][]Entity{{{Name: "nfl", Kind: Acronym, Surface: "NFL"}}},
			want:    []Entity{{Name: "nfl", Kind: Acronym, Surface: "N.F.L."}},
		},
		{
			name:    "nothing earlier",
			current: ents("nfl"),
			earlier: nil,
			want:    nil,
		},
		{
			name:    "nothing repeated",
			current: ents("a"),
			earlier: [][]Entity{ents("b")},
			want:    nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, Repeated(tc.current, tc.earlier))
		})
	}
}

func BenchmarkEdges(b *testing.B) {
	chunks := make([][]Entity, 100)
	for i := range chunks {
		chunks[i] = Extract(chunk300, nil)
	}
	b.ReportAllocs()
	for b.Loop() {
		Edges(chunks, 16)
	}
}
