package llm_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/llm"
)

// valid is the fact sheet the filter tests cite from.
var valid = map[string]bool{"A1": true, "A2": true, "B1": true, "B2": true, "AA12": true}

// run feeds deltas through a fresh filter and returns everything it emitted, Flush included, and
// the phantoms it reported.
func run(valid map[string]bool, deltas ...string) (string, []string) {
	f := llm.NewMarkerFilter(valid)
	var b strings.Builder
	for _, d := range deltas {
		b.WriteString(f.Write(d))
	}
	b.WriteString(f.Flush())
	return b.String(), f.Phantoms()
}

func TestMarkerFilter(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		in       string
		want     string
		phantoms []string
	}{
		{name: "Empty", in: "", want: ""},
		{name: "PlainText", in: "No citations here.", want: "No citations here."},
		{name: "Valid", in: "The sky is blue [A1].", want: "The sky is blue [A1]."},
		{name: "ValidTwoLetters", in: "Sales rose [AA12], then fell.", want: "Sales rose [AA12], then fell."},
		{name: "ValidInsideWord", in: "x[A1]y", want: "x[A1]y"},
		{name: "PhantomBeforePeriod", in: "The sky is green [X9].", want: "The sky is green.", phantoms: []string{"X9"}},
		{name: "PhantomMidSentence", in: "Grass [X9] is green.", want: "Grass is green.", phantoms: []string{"X9"}},
		{name: "PhantomAlone", in: "[X9]", want: "", phantoms: []string{"X9"}},
		{name: "PhantomAtStart", in: "[X9] Water is wet.", want: "Water is wet.", phantoms: []string{"X9"}},
		{name: "PhantomAtLineStart", in: "Intro.\n[X9] Water is wet.", want: "Intro.\nWater is wet.", phantoms: []string{"X9"}},
		{name: "PhantomAtEnd", in: "Water is wet [X9]", want: "Water is wet", phantoms: []string{"X9"}},
		{name: "PhantomBeforeNewline", in: "One [X9]\nTwo", want: "One\nTwo", phantoms: []string{"X9"}},
		{name: "PhantomInBold", in: "**Water [X9]**", want: "**Water**", phantoms: []string{"X9"}},
		{name: "PhantomInParens", in: "(see [X9])", want: "(see)", phantoms: []string{"X9"}},
		{name: "PhantomAfterTab", in: "a\t[X9].", want: "a.", phantoms: []string{"X9"}},
		{name: "PhantomBetweenWordsNoSpaceAfter", in: "a [X9]b", want: "a b", phantoms: []string{"X9"}},
		{name: "PhantomAfterTwoSpacesKeepsOne", in: "a  [X9].", want: "a .", phantoms: []string{"X9"}},
		{name: "PhantomInvented", in: "It is [SOURCE1].", want: "It is.", phantoms: []string{"SOURCE1"}},
		{name: "AdjacentValid", in: "Both hold [A1][B2].", want: "Both hold [A1][B2]."},
		{name: "AdjacentValidThenPhantom", in: "Both hold [A1][X9].", want: "Both hold [A1].", phantoms: []string{"X9"}},
		{name: "AdjacentPhantomThenValid", in: "Both hold [X9][A1].", want: "Both hold [A1].", phantoms: []string{"X9"}},
		{name: "SpacedPhantomThenValid", in: "Both hold [X9] [A1].", want: "Both hold [A1].", phantoms: []string{"X9"}},
		{name: "AdjacentPhantoms", in: "Nothing [X9][Y8] here.", want: "Nothing here.", phantoms: []string{"X9", "Y8"}},
		{name: "AdjacentPhantomsAtStart", in: "[X9][Y8] Start.", want: "Start.", phantoms: []string{"X9", "Y8"}},
		{name: "ListValid", in: "Both hold [A1, B2].", want: "Both hold [A1, B2]."},
		{name: "ListValidKeepsItsForm", in: "Both hold [A1;B2 ,  AA12].", want: "Both hold [A1;B2 ,  AA12]."},
		{name: "ListMixed", in: "Both hold [A1, X9].", want: "Both hold [A1].", phantoms: []string{"X9"}},
		{name: "ListMixedRewritten", in: "[X9; A1,B2] first", want: "[A1, B2] first", phantoms: []string{"X9"}},
		{name: "ListAllPhantom", in: "None [X9, Y8].", want: "None.", phantoms: []string{"X9", "Y8"}},
		{name: "ListTrailingComma", in: "[A1,] ok", want: "[A1,] ok"},
		{name: "PhantomsDeduplicated", in: "a [X9] b [X9, Y8] c [Y8]", want: "a b c", phantoms: []string{"X9", "Y8"}},
		{name: "OrdinaryBrackets", in: "See [1], [see above], [a1], [1A], [], [ ] and [, A1].",
			want: "See [1], [see above], [a1], [1A], [], [ ] and [, A1]."},
		{name: "LettersOnly", in: "[A] and [AB] and [IMPORTANT NOTE]", want: "[A] and [AB] and [IMPORTANT NOTE]"},
		{name: "DigitsThenLetters", in: "[A1B2]", want: "[A1B2]"},
		{name: "LongMarker", in: "It is [ABCDEFGHIJK12].", want: "It is.", phantoms: []string{"ABCDEFGHIJK12"}},
		{name: "AbsurdlyLongMarker", in: "a [" + strings.Repeat("Q", 70) + "1] b", want: "a b",
			phantoms: []string{strings.Repeat("Q", llm.MaxHold)}},
		{name: "AbsurdlyLongGap", in: "a [" + strings.Repeat(" ", 70) + "X9] b", want: "a b", phantoms: []string{"X9"}},
		{name: "WhiteSpaceInGroup", in: "[ A1 ] [ X9 ] [A1,\nX9;\tB1]", want: "[ A1 ] [A1, B1]", phantoms: []string{"X9"}},
		{name: "GroupBrokenOnNextLine", in: "[A1\nThe end", want: "[A1\nThe end"},
		{name: "MarkerThenWordIsText", in: "[A1 is] open, [Z5 too]", want: "[A1 is] open, [Z5 too]"},
		{name: "NestedBrackets", in: "[[A1]] [[X9]]", want: "[[A1]] [[]]", phantoms: []string{"X9"}},
		{name: "UnclosedValidAtEnd", in: "Water is wet [A1", want: "Water is wet"},
		{name: "UnclosedPhantomAtEnd", in: "Water is wet [X9", want: "Water is wet", phantoms: []string{"X9"}},
		{name: "UnclosedListAtEnd", in: "wet [A1, X9,", want: "wet", phantoms: []string{"X9"}},
		{name: "UnclosedLettersAtEnd", in: "wet [A", want: "wet"},
		{name: "BareBracketAtEnd", in: "wet [", want: "wet"},
		{name: "TrailingSpaceKept", in: "wet ", want: "wet "},
		{name: "NonASCII", in: "Der Himmel ist blau [A1]. Ĝis [X9] — 東京[Y8]。 Ünïcödé [B1, Z7]…",
			want: "Der Himmel ist blau [A1]. Ĝis — 東京。 Ünïcödé [B1]…", phantoms: []string{"X9", "Y8", "Z7"}},
		{name: "LongValidGroupCommitted", in: "[" + strings.Repeat("A1, B2, ", 10) + "AA12].",
			want: "[" + strings.Repeat("A1, B2, ", 10) + "AA12]."},
		{name: "LongMixedGroupCommitted", in: "[" + strings.Repeat("A1, X9, ", 10) + "B2, Y8] ok",
			want: "[" + strings.Repeat("A1, ", 10) + "B2] ok", phantoms: []string{"X9", "Y8"}},
		{name: "LongPhantomGroupCommitted", in: "claim [" + strings.Repeat("X9, Y8, ", 10) + "Z7].",
			want: "claim.", phantoms: []string{"X9", "Y8", "Z7"}},
		{name: "LongGroupBrokenIsClosed", in: "[" + strings.Repeat("A1, ", 20) + "X9 and more",
			want: "[" + strings.Repeat("A1, ", 19) + "A1] and more", phantoms: []string{"X9"}},
		{name: "LongGroupUnclosedAtEnd", in: "[" + strings.Repeat("A1, ", 20) + "B2",
			want: "[" + strings.Repeat("A1, ", 20) + "B2]"},
		{name: "LongGapBetweenMarkers", in: "[A1," + strings.Repeat(" ", 70) + "X9]",
			want: "[A1]", phantoms: []string{"X9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			got, phantoms := run(valid, tt.in)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.phantoms, nilIfEmpty(phantoms))
			require.NotContains(t, got, "X9")

			// Splitting never changes the output: at every byte, at every pair of bytes (so that
			// held text crosses two writes), byte by byte and rune by rune.
			for i := 0; i <= len(tt.in); i++ {
				for j := i; j <= len(tt.in); j++ {
					got, phantoms := run(valid, tt.in[:i], tt.in[i:j], tt.in[j:])
					require.Equal(t, tt.want, got, "split at %d and %d", i, j)
					require.Equal(t, tt.phantoms, nilIfEmpty(phantoms), "split at %d and %d", i, j)
				}
			}
			got, phantoms = run(valid, bytesOf(tt.in)...)
			require.Equal(t, tt.want, got, "byte by byte")
			require.Equal(t, tt.phantoms, nilIfEmpty(phantoms), "byte by byte")
			got, phantoms = run(valid, runesOf(tt.in)...)
			require.Equal(t, tt.want, got, "rune by rune")
			require.Equal(t, tt.phantoms, nilIfEmpty(phantoms), "rune by rune")
		})
	}
}

// Text is released as soon as it is decided: the stream only waits on what may be a citation.
func TestMarkerFilterReleasesEarly(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		deltas []string
		want   []string // what each Write returns, then what Flush returns
	}{
		{name: "PlainText", deltas: []string{"Hello, ", "world."}, want: []string{"Hello,", " world.", ""}},
		{name: "OrdinaryBracketAtOnce", deltas: []string{"[see", " above]"}, want: []string{"[see", " above]", ""}},
		{name: "NumberBracketAtOnce", deltas: []string{"[1", "]"}, want: []string{"[1", "]", ""}},
		{name: "SplitMarkerHeld", deltas: []string{"blue [A", "1", "]."}, want: []string{"blue", "", " [A1].", ""}},
		{name: "SplitPhantomNeverShown", deltas: []string{"green [X", "9", "]."}, want: []string{"green", "", ".", ""}},
		{name: "BrokenGroupReleased", deltas: []string{"[A1", " is"}, want: []string{"", "[A1 is", ""}},
		{name: "UnclosedDroppedAtFlush", deltas: []string{"wet [A1"}, want: []string{"wet", ""}},
		{name: "TrailingBlankAtFlush", deltas: []string{"wet "}, want: []string{"wet", " "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			f := llm.NewMarkerFilter(valid)
			var got []string
			for _, d := range tt.deltas {
				got = append(got, f.Write(d))
			}
			got = append(got, f.Flush())
			require.Equal(t, tt.want, got)
		})
	}
}

// However long a bracket stays plausible, at most MaxHold bytes (and the blank before it) wait.
func TestMarkerFilterHoldIsBounded(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		in   string
	}{
		{name: "LongValidGroup", in: "claim [" + strings.Repeat("A1, B2; ", 40) + "AA12] and more"},
		{name: "LongText", in: strings.Repeat("Plain words [A1] and [see] ", 20)},
		{name: "ManyOpenBrackets", in: strings.Repeat("[", 200)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			f := llm.NewMarkerFilter(valid)
			var out strings.Builder
			for i := 0; i < len(tt.in); i++ {
				out.WriteString(f.Write(tt.in[i : i+1]))
				require.LessOrEqual(t, i+1-out.Len(), llm.MaxHold+1, "held after byte %d", i)
			}
			out.WriteString(f.Flush())
			if strings.Count(tt.in, "[") != 200 {
				want := strings.ReplaceAll(tt.in, ";", ",") // a committed group joins with ", "
				require.Equal(t, want, out.String())
			}
		})
	}
}

func TestMarkerFilterNoValidMarkers(t *testing.T) {
	t.Parallel()

	got, phantoms := run(nil, "Everything [A1] is [B2, A1] invented.")
	require.Equal(t, "Everything is invented.", got)
	require.Equal(t, []string{"A1", "B2"}, phantoms)
}

// Phantoms hands out a copy, and Flush readies the filter for another stream.
func TestMarkerFilterReuse(t *testing.T) {
	t.Parallel()

	f := llm.NewMarkerFilter(valid)
	require.Equal(t, "a", f.Write("a [X9"))
	require.Empty(t, f.Flush())
	p := f.Phantoms()
	p[0] = "changed"
	require.Equal(t, []string{"X9"}, f.Phantoms())

	require.Equal(t, "b", f.Write("[Y8] b"), "a new stream starts at a line start")
	require.Empty(t, f.Flush())
	require.Equal(t, []string{"X9", "Y8"}, f.Phantoms())
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func bytesOf(s string) []string {
	out := make([]string, len(s))
	for i := range len(s) {
		out[i] = s[i : i+1]
	}
	return out
}

func runesOf(s string) []string {
	var out []string
	for len(s) > 0 {
		_, n := utf8.DecodeRuneInString(s)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// FuzzMarkerFilter checks the filter's promises on any text: splitting never changes the output,
// and no citation group in the output holds a phantom marker, not even one that dropping text
// could have joined together from pieces.
func FuzzMarkerFilter(f *testing.F) {
	for _, s := range []string{
		"The sky is blue [A1]. Grass [X9] is green [B1, Y8].",
		"[X9[Y8]]", "[X[Y8]9]", "[X9 [Y8]]", "[X9\t[Y8]]", "[A1, X9 and B1]", "[A 1]", "[ X9\n]",
		"Intro.\n[X9] Water [A1][X9] wet [", "Ĝis [X9] — 東京[Y8]。",
		"[" + strings.Repeat("A1, X9, ", 10) + "B2 and more",
	} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, in string, step uint8) {
		want, phantoms := run(valid, in)
		requireNoPhantomGroup(t, want)

		n := int(step%16) + 1
		var deltas []string
		for s := in; len(s) > 0; s = s[min(n, len(s)):] {
			deltas = append(deltas, s[:min(n, len(s))])
		}
		got, gotPhantoms := run(valid, deltas...)
		require.Equal(t, want, got)
		require.Equal(t, phantoms, gotPhantoms)

	})
}

var (
	groupRE  = regexp.MustCompile(`\[\s*[A-Z]+[0-9]+(?:[\s,;]+[A-Z]+[0-9]+)*[\s,;]*\]`)
	markerRE = regexp.MustCompile(`[A-Z]+[0-9]+`)
)

// requireNoPhantomGroup fails if out holds a citation group with a marker that is not valid. A
// group is read as MarkerFilter reads one, which takes in every form a reader of answers
// (citations.Markers) takes for a citation.
func requireNoPhantomGroup(t *testing.T, out string) {
	t.Helper()
	for _, g := range groupRE.FindAllString(out, -1) {
		for _, m := range markerRE.FindAllString(g, -1) {
			require.True(t, valid[m], "phantom %s in %q of output %q", m, g, out)
		}
	}
}
