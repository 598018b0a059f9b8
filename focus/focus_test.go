package focus_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/focus"
	"github.com/ragd/ragd/index"
)

func TestAddAndDecay(t *testing.T) {
	t.Parallel()
	cfg := focus.DefaultConfig()
	f := focus.Focus{Turn: 1}.Add([]focus.Mention{
		{Text: "GONVILLE HOTEL", Kind: focus.Entity, Origin: focus.FromReply, Turn: 1},
		{Text: "UNIVERSITY ARMS HOTEL", Kind: focus.Entity, Origin: focus.FromReply, Turn: 1},
		{Text: "parking", Kind: focus.Subject, Origin: focus.FromUser, Turn: 1},
		{Text: "CURRY KING", Kind: focus.Subject, Origin: focus.FromSource, Turn: 1, Strength: 0.5},
	}, cfg)
	require.Len(t, f.Terms, 4)
	require.Equal(t, "CURRY KING", f.Terms[3].Text, "a source's title weighs half, times its strength")
	require.InDelta(t, 0.25, f.Terms[3].Weight, 1e-12)

	// Turn 2: the user picks one of the two hotels; the other decays.
	f = f.At(2, cfg).Add([]focus.Mention{{Text: "Gonville Hotel", Kind: focus.Entity, Origin: focus.FromUser, Turn: 2}}, cfg)
	require.Equal(t, 2, f.Turn)
	require.Equal(t, focus.Term{Text: "GONVILLE HOTEL", Kind: focus.Entity, Weight: 1, Turn: 2, Origin: focus.FromUser}, f.Terms[0],
		"named again (in any case): as fresh as the latest naming, not heavier")
	require.InDelta(t, 0.7, f.Terms[1].Weight, 1e-12)
	require.Equal(t, []string{"GONVILLE HOTEL"}, texts(f.Leading(0.8, 3)))
	require.Equal(t, []string{"GONVILLE HOTEL", "UNIVERSITY ARMS HOTEL"}, texts(f.Leading(0.6, 3)))
	require.Equal(t, []string{"parking", "CURRY KING"}, texts(f.Subjects()))

	// A reply recorded for turn 1 but read at turn 3 comes in decayed for its two turns.
	f = f.At(3, cfg).Add([]focus.Mention{{Text: "HOBSONS HOUSE", Kind: focus.Entity, Origin: focus.FromReply, Turn: 1}}, cfg)
	require.InDelta(t, 0.49, weight(f, "HOBSONS HOUSE"), 1e-12)

	// Terms under the floor are forgotten: 0.25 * 0.7^5 < 0.05.
	f = f.At(6, cfg)
	require.Zero(t, weight(f, "CURRY KING"))
	require.InDelta(t, 0.7*0.7*0.7*0.7, weight(f, "GONVILLE HOTEL"), 1e-12)

	small := cfg
	small.Max = 1
	require.Len(t, focus.Focus{}.Add([]focus.Mention{{Text: "a b", Kind: focus.Subject, Origin: focus.FromUser}, {Text: "c", Kind: focus.Subject, Origin: focus.FromSource}}, small).Terms, 1)
	require.Empty(t, focus.Focus{}.Leading(0.5, 2))
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, focus.DefaultConfig().Validate())
	zero := focus.DefaultConfig()
	zero.Source, zero.Floor, zero.Max = 0, 0, 0
	require.NoError(t, zero.Validate(), "0 is a setting: sources add nothing, nothing is forgotten early, no terms kept")
	bad := focus.DefaultConfig()
	bad.Decay = 0
	require.Error(t, bad.Validate())
}

func TestLean(t *testing.T) {
	t.Parallel()
	require.Equal(t, 1.0, focus.Lean("Are their bathrooms clean?", false, 0.5))
	require.Equal(t, 1.0, focus.Lean("and the second one?", false, 0.5))
	require.Equal(t, 0.5, focus.Lean("Do you know anything about the views from the rooms?", false, 0.5))
	require.Equal(t, 0.0, focus.Lean("Does Kymmoy serve beer that is worth the money?", true, 0.5), "names its own subject")
	require.Equal(t, 1.0, focus.Lean("regional differences", false, 0), "three words or fewer say little by themselves")
}

// titles of a hotel and restaurant corpus (with as many other names as the real one has), and
// counts as a corpus would give them: names are found in their own documents, common words
// everywhere.
var titles = append(others(110), "GONVILLE HOTEL", "UNIVERSITY ARMS HOTEL", "WORTH HOUSE", "HOBSONS HOUSE", "A AND B GUEST HOUSE",
	"RESTAURANT TWO TWO", "THE CAMBRIDGE BELFRY", "ROSA'S BED AND BREAKFAST", "ARBURY LODGE GUESTHOUSE",
	"ALEXANDER BED AND BREAKFAST", "INDIA HOUSE", "CITY CENTRE NORTH B AND B", "AYLESBRAY LODGE GUEST HOUSE",
	"CURRY GARDEN", "YU GARDEN", "CURRY KING", "THANH BINH", "BEDOUIN", "COCUM", "AVALON", "KYMMOY", "LA MIMOSA",
	"EL SHADDAI", "ALLENBELL", "ACORN GUEST HOUSE", "CITYROOMZ", "NANDOS", "ASHLEY HOTEL", "LOVELL LODGE")

// others are the other names of the corpus; a few are hotels, so that "hotel", in 7 titles as in
// DSTC11's corpus, is a common word of titles.
func others(n int) []string {
	var out []string
	for i := range n {
		name := fmt.Sprintf("PLACE%03d", i)
		if i%25 == 0 {
			name += " HOTEL"
		}
		out = append(out, name)
	}
	return out
}

func stats() map[string]focus.TermStats {
	s := map[string]focus.TermStats{}
	for _, w := range focus.Words(titles, index.Terms) {
		s[w] = focus.TermStats{DF: 80, DFTitle: 78} // a name: its documents carry it in the title
	}
	for w, df := range map[string]int{"hotel": 700, "hous": 1600, "guest": 500, "lodg": 415, "bed": 460, "breakfast": 510,
		"b": 300, "citi": 480, "centr": 240, "cambridg": 490, "restaur": 2000, "curri": 414, "garden": 166} {
		s[w] = focus.TermStats{DF: df, DFTitle: df * 9 / 10}
	}
	// Common words that some title has: found far more often outside its documents.
	s["worth"] = focus.TermStats{DF: 130, DFTitle: 87}
	s["two"] = focus.TermStats{DF: 103, DFTitle: 75}
	s["guesthous"] = focus.TermStats{DF: 400, DFTitle: 96}
	return s
}

func TestGazetteerLink(t *testing.T) {
	t.Parallel()
	g := focus.NewGazetteer(titles, index.Terms, stats(), focus.DefaultGazetteerConfig())
	require.Equal(t, len(titles), g.Len())
	// Corpus counts of words that are not title words: typos are rare, real words are not.
	df := func(ws []string) map[string]int {
		out := map[string]int{}
		for _, w := range ws {
			out[w] = map[string]int{"belfrei": 0, "ayelsbrai": 0, "indian": 300, "north": 100, "thank": 40}[w]
		}
		return out
	}
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"The Gonville is fine, I need its postcode.", []string{"GONVILLE HOTEL"}},
		{"There are two hotels, gonville and university arms. Any preference?", []string{"GONVILLE HOTEL", "UNIVERSITY ARMS HOTEL"}},
		{"I am looking for some information on rosas's bed and breakfast.", []string{"ROSA'S BED AND BREAKFAST"}},
		{"I have booked your reservation at A & B Guesthouse.", []string{"A AND B GUEST HOUSE"}},
		{"I recommend the Arbury Lodge Guest House in the north.", []string{"ARBURY LODGE GUESTHOUSE"}},
		{"How about The Cambridge Belfrey?", []string{"THE CAMBRIDGE BELFRY"}},
		{"I would recommend the ayelsbray lodge guest house.", []string{"AYLESBRAY LODGE GUEST HOUSE"}},
		{"Is the place worth the money for two nights?", nil},
		{"I'd like an Indian restaurant in the north.", nil},
		{"The Worth House has free parking.", []string{"WORTH HOUSE"}},
		{"We have alexander bed and breakfast and the hobsons house.", []string{"ALEXANDER BED AND BREAKFAST", "HOBSONS HOUSE"}},
		{"a guest house with a bed and breakfast in the city centre", nil},
		{"Thank you! The botanic garden is on King's Parade.", nil},
		{"Is Yu Garden open late?", []string{"YU GARDEN"}},
		{"", nil},
	} {
		var got []string
		for _, l := range g.Link(tc.text, df) {
			got = append(got, l.Name)
		}
		require.Equal(t, tc.want, got, tc.text)
	}
	require.Empty(t, g.Link("How about The Cambridge Belfrey?", nil), "without corpus counts, no typos")
	require.Empty(t, (*focus.Gazetteer)(nil).Link("The Gonville", nil))
}

func texts(ts []focus.Term) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Text)
	}
	return out
}

func weight(f focus.Focus, text string) float64 {
	for _, t := range f.Terms {
		if t.Text == text {
			return t.Weight
		}
	}
	return 0
}

func TestSaid(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		info, enough, want float64
		why                string
	}{
		{0.5, 1, 1, "says less than enough: the name is needed whole"},
		{1, 1, 1, "exactly enough"},
		{2, 1, 0.5, "twice enough: half"},
		{4, 2, 0.5, "in proportion to enough"},
		{6, 0, 1, "enough 0 is off"},
		{0, 1, 1, "unknown information"},
	} {
		require.InDelta(t, c.want, focus.Said(c.info, c.enough), 1e-12, c.why)
	}
}

// A title of one long word (a document's title or first heading is whatever its author wrote)
// costs the gazetteer memory linear in its length, and a question's long word stays cheap: typos
// are matched only for words a name could be. Not parallel: it reads the process's allocations.
func TestLongTitleWordCostsLinearMemory(t *testing.T) {
	long := strings.Repeat("abcdefghij", 1600) // 16,000 bytes: quadratic would be 256 MB
	all := append(slices.Clone(titles), "The "+long+" Hotel")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g := focus.NewGazetteer(all, index.Terms, stats(), focus.DefaultGazetteerConfig())
	q := "is the " + long[:8000] + "x near the gonville?"
	links := g.Link(q, func(ws []string) map[string]int { return map[string]int{} })
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated")
	require.Equal(t, len(all), g.Len())
	var names []string
	for _, l := range links {
		names = append(names, l.Name)
	}
	require.Equal(t, []string{"GONVILLE HOTEL"}, names, "the other names still link")
}

// BenchmarkLinkLongWord links a question with one word without spaces of 2, 4 and 8 KiB (a
// question may be 8192 bytes): a word that long is one edit from no title word, so its time
// should be that of reading it.
//
//	go test ./focus -run '^$' -bench LinkLongWord -count 6
func BenchmarkLinkLongWord(b *testing.B) {
	g := focus.NewGazetteer(titles, index.Terms, stats(), focus.DefaultGazetteerConfig())
	df := func(ws []string) map[string]int { return map[string]int{} }
	for _, n := range []int{2048, 4096, 8192} {
		q := "is the " + strings.Repeat("qwertyuiopasdfghjklzxcvbnm", n/26+1)[:n] + " near the gonville?"
		b.Run(fmt.Sprintf("bytes=%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				g.Link(q, df)
			}
		})
	}
}
