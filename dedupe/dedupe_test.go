package dedupe

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

var (
	docA = uuid.MustParse("00000000-0000-0000-0000-00000000000a")
	docB = uuid.MustParse("00000000-0000-0000-0000-00000000000b")
)

// chunk is an unpaged chunk of docA v1, 100 code points per ordinal, with distinct text.
func chunk(id int64, ordinal int, strength float64) Item {
	return Item{
		ChunkID: id, DocID: docA, Version: 1, Ordinal: ordinal,
		CharStart: ordinal * 100, CharEnd: ordinal*100 + 100,
		Text:     fmt.Sprintf("Passage number %d of the manual.", ordinal),
		Strength: strength,
	}
}

func paged(it Item, start, end int) Item {
	it.PageStart, it.PageEnd = start, end
	return it
}

func TestKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		item Item
		want string
	}{
		{name: "unpaged uses the ordinal", item: chunk(1, 7, 0), want: docA.String() + "/v1/c7"},
		{name: "paged uses the page range", item: paged(chunk(1, 7, 0), 3, 4), want: docA.String() + "/v1/p3-4"},
		{name: "one page", item: paged(chunk(1, 7, 0), 3, 3), want: docA.String() + "/v1/p3"},
		{name: "missing end page is the start page", item: paged(chunk(1, 7, 0), 3, 0), want: docA.String() + "/v1/p3"},
		{name: "version is part of the key", item: Item{DocID: docB, Version: 12, Ordinal: 0}, want: docB.String() + "/v12/c0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, Key(tc.item))
		})
	}
}

func TestGroups(t *testing.T) {
	t.Parallel()

	twinInB := chunk(20, 9, 0.5)
	twinInB.DocID = docB
	twinInB.Text = "  passage NUMBER 1 of the\nmanual "

	v2 := chunk(30, 4, 0.4)
	v2.Version = 2

	for _, tc := range []struct {
		name  string
		items []Item
		want  []Group
	}{
		{
			name:  "empty input",
			items: nil,
			want:  nil,
		},
		{
			name:  "a lone chunk is its own group",
			items: []Item{chunk(1, 1, 0.5)},
			want:  []Group{{Keep: 1, Members: []int64{1}, CharStart: 100, CharEnd: 200}},
		},
		{
			name:  "the same chunk reached twice is one member, the stronger occurrence counts",
			items: []Item{chunk(1, 1, 0.2), chunk(2, 3, 0.5), chunk(1, 1, 0.9)},
			want: []Group{
				{Keep: 1, Members: []int64{1}, CharStart: 100, CharEnd: 200, Reasons: []string{"same-key"}},
				{Keep: 2, Members: []int64{2}, CharStart: 300, CharEnd: 400},
			},
		},
		{
			name:  "same text in two documents",
			items: []Item{chunk(1, 1, 0.9), twinInB},
			// Spans are Keep's: docB's offsets count in another text.
			want: []Group{{Keep: 1, Members: []int64{1, 20}, CharStart: 100, CharEnd: 200, Reasons: []string{"same-text"}}},
		},
		{
			name: "adjacent chunks chain into one group with the union of pages and chars",
			items: []Item{
				paged(chunk(3, 3, 0.1), 2, 2),
				paged(chunk(4, 4, 0.8), 4, 4),
				paged(chunk(5, 5, 0.3), 6, 7),
			},
			want: []Group{{Keep: 4, Members: []int64{4, 5, 3}, PageStart: 2, PageEnd: 7, CharStart: 300, CharEnd: 600, Reasons: []string{"adjacent"}}},
		},
		{
			name:  "chunks 1 and 5 of one document stay apart",
			items: []Item{chunk(1, 1, 0.5), chunk(5, 5, 0.5)},
			want: []Group{
				{Keep: 1, Members: []int64{1}, CharStart: 100, CharEnd: 200},
				{Keep: 5, Members: []int64{5}, CharStart: 500, CharEnd: 600},
			},
		},
		{
			name:  "overlapping page ranges merge",
			items: []Item{paged(chunk(1, 1, 0.5), 3, 4), paged(chunk(9, 9, 0.6), 4, 5)},
			want:  []Group{{Keep: 9, Members: []int64{9, 1}, PageStart: 3, PageEnd: 5, CharStart: 100, CharEnd: 1000, Reasons: []string{"overlap"}}},
		},
		{
			name: "overlapping character windows merge",
			items: []Item{
				{ChunkID: 1, DocID: docA, Version: 1, Ordinal: 0, CharStart: 0, CharEnd: 120, Text: "one"},
				{ChunkID: 2, DocID: docA, Version: 1, Ordinal: 1, CharStart: 100, CharEnd: 220, Text: "two"},
			},
			// Overlap is named, not adjacency: the windows are neighbours too, but overlap says more.
			want: []Group{{Keep: 1, Members: []int64{1, 2}, CharStart: 0, CharEnd: 220, Reasons: []string{"overlap"}}},
		},
		{
			name:  "different versions of a document are not adjacent",
			items: []Item{chunk(3, 3, 0.5), v2},
			want: []Group{
				{Keep: 3, Members: []int64{3}, CharStart: 300, CharEnd: 400},
				{Keep: 30, Members: []int64{30}, CharStart: 400, CharEnd: 500},
			},
		},
		{
			name:  "rules chain transitively",
			items: []Item{chunk(1, 1, 0.9), chunk(2, 2, 0.1), twinInB},
			want:  []Group{{Keep: 1, Members: []int64{1, 20, 2}, CharStart: 100, CharEnd: 300, Reasons: []string{"adjacent", "same-text"}}},
		},
		{
			name: "empty text never matches by text",
			items: []Item{
				{ChunkID: 1, DocID: docA, Version: 1, Ordinal: 0, Text: ""},
				{ChunkID: 2, DocID: docB, Version: 1, Ordinal: 0, Text: " ... "},
			},
			want: []Group{{Keep: 1, Members: []int64{1}}, {Keep: 2, Members: []int64{2}}},
		},
		{
			name:  "strength ties go to the lower chunk id",
			items: []Item{chunk(8, 8, 0.5), chunk(7, 7, 0.5)},
			want:  []Group{{Keep: 7, Members: []int64{7, 8}, CharStart: 700, CharEnd: 900, Reasons: []string{"adjacent"}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, Groups(tc.items))
		})
	}
}

func TestGroupsKeepIsStrongest(t *testing.T) {
	t.Parallel()
	items := []Item{chunk(1, 1, 0.1), chunk(2, 2, 0.7), chunk(3, 3, 0.3)}
	got := Groups(items)
	require.Len(t, got, 1)
	require.Equal(t, int64(2), got[0].Keep)
	require.Equal(t, []int64{2, 3, 1}, got[0].Members)
}

func TestGroupsOrderIndependent(t *testing.T) {
	t.Parallel()
	items := benchItems()
	want := Groups(items)
	require.Greater(t, len(want), 1, "the fixture must make several groups")
	require.Less(t, len(want), len(items), "the fixture must merge something")

	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		shuffled := slices.Clone(items)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		require.Equal(t, want, Groups(shuffled))
	}
}

func TestGroupsLeavesInputAlone(t *testing.T) {
	t.Parallel()
	items := []Item{chunk(1, 1, 0.1), chunk(2, 5, 0.9)}
	before := slices.Clone(items)
	Groups(items)
	require.Equal(t, before, items)
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Hello,\n\tWorld!", "hello, world"},
		{"  «Ünïcode»  text… ", "ünïcode» text"},
		{"...", ""},
		{"", ""},
	} {
		require.Equal(t, tc.want, normalize(tc.in), "normalize(%q)", tc.in)
	}
}

// benchBody makes bench chunks as long as real ones, about 250 tokens.
var benchBody = strings.Repeat("Shut off the gas at the meter, open the windows and leave the building. ", 14)

// benchItems is a turn's worth of candidates: 40 chunks from 8 documents, with repeats, text
// twins and neighbours, as two retrievers of 20-40 hits each produce.
func benchItems() []Item {
	var items []Item
	for d := range 8 {
		doc := uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(d)})
		for c := range 5 {
			ordinal := c * 2 // every other chunk: neighbours only where c*2 and c*2+1 both appear
			if c == 4 {
				ordinal = 3
			}
			text := fmt.Sprintf("Document %d, chunk %d. %s", d, ordinal, benchBody)
			if d == 7 && c == 0 {
				text = fmt.Sprintf("DOCUMENT 0, chunk 0.\n%s", benchBody) // a re-published twin of doc 0's
			}
			items = append(items, Item{
				ChunkID: int64(d*100 + ordinal), DocID: doc, Version: 1, Ordinal: ordinal,
				CharStart: ordinal * 900, CharEnd: ordinal*900 + 1000,
				Text:     text,
				Strength: 1 / float64(60+d*5+c),
			})
		}
	}
	return items
}

func BenchmarkGroups(b *testing.B) {
	items := benchItems()
	b.ReportAllocs()
	for b.Loop() {
		Groups(items)
	}
}
