package citations

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

var (
	docA = uuid.MustParse("00000000-0000-0000-0000-00000000000a")
	docB = uuid.MustParse("00000000-0000-0000-0000-00000000000b")
	docC = uuid.MustParse("00000000-0000-0000-0000-00000000000c")
	docD = uuid.MustParse("00000000-0000-0000-0000-00000000000d")
)

const quakePassage = "Earthquakes can strike without warning. Stay indoors until the shaking stops " +
	"and you are sure it is safe to exit. If you smell gas or hear a hissing noise, open a window " +
	"and leave the building quickly. Check yourself and others for injuries. Expect aftershocks " +
	"in the hours and days that follow."

func TestLetter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "A"}, {1, "B"}, {25, "Z"}, {26, "AA"}, {27, "AB"}, {51, "AZ"}, {52, "BA"},
		{701, "ZZ"}, {702, "AAA"}, {18277, "ZZZ"}, {18278, "AAAA"},
	} {
		require.Equal(t, tc.want, Letter(tc.n), "Letter(%d)", tc.n)
		require.Equal(t, tc.n, LetterIndex(tc.want), "LetterIndex(%q)", tc.want)
	}
	require.Empty(t, Letter(-1))
}

func TestLetterRoundTrip(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for n := range 2001 {
		l := Letter(n)
		require.False(t, seen[l], "Letter(%d) = %q twice", n, l)
		seen[l] = true
		require.Equal(t, n, LetterIndex(l))
	}
	require.Equal(t, math.MaxInt, LetterIndex(Letter(math.MaxInt)))
}

func TestLetterIndexRejects(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "a", "Ab", "A1", "A ", "[A]", "Ä", strings.Repeat("Z", 14), strings.Repeat("A", 15)} {
		require.Equal(t, -1, LetterIndex(s), "LetterIndex(%q)", s)
	}
}

func TestSentences(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		text string
		want []string
	}{
		{
			name: "plain sentences",
			text: "Turn off the gas. Open the windows! Is it safe? Yes.",
			want: []string{"Turn off the gas.", "Open the windows!", "Is it safe?", "Yes."},
		},
		{
			name: "abbreviations do not end sentences",
			text: "Bring supplies, e.g. water and food, i.e. the basics. Dr. Lee and Mrs. Ortiz agree vs. Mr. Hale. " +
				"See Fig. 3 and Smith et al. Their study etc. Tents No. 5 and 6 are dry. The U.S. Army helped.",
			want: []string{
				"Bring supplies, e.g. water and food, i.e. the basics.",
				"Dr. Lee and Mrs. Ortiz agree vs. Mr. Hale.",
				"See Fig. 3 and Smith et al. Their study etc. Tents No. 5 and 6 are dry.",
				"The U.S. Army helped.",
			},
		},
		{
			name: "no before a capital ends a sentence",
			text: "The answer is No. Then we left.",
			want: []string{"The answer is No.", "Then we left."},
		},
		{
			name: "decimals, initials and names with dots",
			text: "The quake measured 5.8 on the scale. J. R. Smith wrote it up at example.com today. It ended.",
			want: []string{"The quake measured 5.8 on the scale.", "J. R. Smith wrote it up at example.com today.", "It ended."},
		},
		{
			name: "closing quotes and brackets stay with their sentence",
			text: `He shouted "Get out!" Everyone ran. (They were safe.) "Is it over?" she asked. 'Yes.' It was.`,
			want: []string{`He shouted "Get out!"`, "Everyone ran.", "(They were safe.)", `"Is it over?" she asked.`, "'Yes.'", "It was."},
		},
		{
			name: "lower-case after a stop does not split",
			text: "Use a 9 in. pipe. the rest follows.",
			want: []string{"Use a 9 in. pipe. the rest follows."},
		},
		{
			name: "line lists",
			text: "Before you leave:\n- Turn off the gas\n* Unplug appliances\n1. Lock the door. Take the key.\n2) Go\nThe end",
			want: []string{"Before you leave:", "Turn off the gas", "Unplug appliances", "Lock the door.", "Take the key.", "Go", "The end"},
		},
		{
			name: "an indented line continues a list item",
			text: "- Turn off the gas at the meter\n  if you can reach it\n- Leave",
			want: []string{"Turn off the gas at the meter\n  if you can reach it", "Leave"},
		},
		{
			name: "wrapped lines join, blank lines and headings split",
			text: "# Gas leaks\nA leak smells like\nrotten eggs\n\nCall the utility from outside",
			want: []string{"# Gas leaks", "A leak smells like\nrotten eggs", "Call the utility from outside"},
		},
		{
			name: "trailing text without a stop",
			text: "First sentence. and then some trailing words",
			want: []string{"First sentence. and then some trailing words"},
		},
		{
			name: "ellipsis and repeated stops end a sentence",
			text: "Wait... Then go?! Now.",
			want: []string{"Wait...", "Then go?!", "Now."},
		},
		{
			name: "white space and punctuation only",
			text: "  \n\n --- \n\n ",
			want: nil,
		},
		{name: "empty", text: "", want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Sentences(tc.text)
			var texts []string
			for _, s := range got {
				require.Equal(t, tc.text[s.Start:s.End], s.Text, "offsets of %q", s.Text)
				texts = append(texts, s.Text)
			}
			require.Equal(t, tc.want, texts)
		})
	}
}

// facts returns the markers and texts of a sheet's facts, one "A1 text" string each, after
// checking that every fact is verbatim from its source.
func facts(t *testing.T, sheet []Entry) []string {
	t.Helper()
	var out []string
	for _, e := range sheet {
		for _, f := range e.Facts {
			require.Equal(t, f.Text, e.Source.Text[f.Start:f.End], "fact %s is not verbatim", f.Marker)
			out = append(out, f.Marker+" "+f.Text)
		}
	}
	return out
}

func TestBuildPicksRelevantSentences(t *testing.T) {
	t.Parallel()
	const query = "what to do if you smell gas after an earthquake"
	for _, tc := range []struct {
		name      string
		query     string
		sources   []Source
		perSource int
		want      []string
	}{
		{
			name:      "the most relevant sentence, not the first",
			query:     query,
			sources:   []Source{{DocID: docA, Text: quakePassage}},
			perSource: 1,
			want:      []string{"A1 If you smell gas or hear a hissing noise, open a window and leave the building quickly."},
		},
		{
			name:      "facts in passage order, numbered in that order",
			query:     query,
			sources:   []Source{{DocID: docA, Text: quakePassage}},
			perSource: 2,
			// The gas sentence scores higher but comes second in the passage.
			want: []string{
				"A1 Earthquakes can strike without warning.",
				"A2 If you smell gas or hear a hissing noise, open a window and leave the building quickly.",
			},
		},
		{
			name:      "nothing matches: the first sentences",
			query:     "volcanic ash masks",
			sources:   []Source{{DocID: docA, Text: quakePassage}},
			perSource: 2,
			want: []string{
				"A1 Earthquakes can strike without warning.",
				"A2 Stay indoors until the shaking stops and you are sure it is safe to exit.",
			},
		},
		{
			name:      "the fallback passes over fragments",
			query:     "volcanic ash",
			sources:   []Source{{DocID: docA, Text: "# Safety\nEarthquakes can strike without warning. Stay calm."}},
			perSource: 1,
			want:      []string{"A1 Earthquakes can strike without warning."},
		},
		{
			name:      "a fragment that repeats the query loses to a sentence that answers",
			query:     "gas leaks",
			sources:   []Source{{DocID: docA, Text: "# Gas leaks\nKeep calm. A gas leak smells like rotten eggs."}},
			perSource: 1,
			want:      []string{"A1 A gas leak smells like rotten eggs."},
		},
		{
			name:      "a fragment counts when nothing longer matches",
			query:     "gas leaks",
			sources:   []Source{{DocID: docA, Text: "# Gas leaks\nKeep calm and call for help."}},
			perSource: 1,
			want:      []string{"A1 # Gas leaks"},
		},
		{
			name:      "the title counts for nothing",
			query:     "earthquake",
			sources:   []Source{{DocID: docA, Title: "Earthquake safety", Text: "Keep calm. Call for help. Earthquakes end."}},
			perSource: 1,
			want:      []string{"A1 Earthquakes end."},
		},
		{
			name:      "more facts asked than sentences",
			query:     query,
			sources:   []Source{{DocID: docA, Text: "Smell gas? Leave now."}},
			perSource: 5,
			want:      []string{"A1 Smell gas?", "A2 Leave now."},
		},
		{
			name:      "no facts asked",
			query:     query,
			sources:   []Source{{DocID: docA, Text: quakePassage}},
			perSource: 0,
			want:      nil,
		},
		{
			name:      "a source without text",
			query:     query,
			sources:   []Source{{DocID: docA, Text: ""}, {DocID: docB, Text: "Gas smells of eggs."}},
			perSource: 2,
			want:      []string{"B1 Gas smells of eggs."},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sheet, _, _ := Build(tc.query, tc.sources, nil, 0, tc.perSource, nil)
			require.Len(t, sheet, len(tc.sources))
			require.Equal(t, tc.want, facts(t, sheet))
		})
	}
}

func TestBuildScores(t *testing.T) {
	t.Parallel()
	sheet, _, _ := Build("smell gas earthquake", []Source{{DocID: docA, Text: quakePassage}}, nil, 0, 5, nil)
	require.Len(t, sheet[0].Facts, 5)
	var scores []float64
	for _, f := range sheet[0].Facts {
		scores = append(scores, f.Score)
	}
	// Only the first and third sentences hold query terms; the third holds two of them.
	require.Positive(t, scores[0])
	require.Greater(t, scores[2], scores[0])
	require.Equal(t, []float64{0, 0}, []float64{scores[1], scores[3]})
}

func TestBuildLetters(t *testing.T) {
	t.Parallel()
	passage := func(n int) string { return fmt.Sprintf("Gas leak report %d. Leave the house now.", n) }
	for _, tc := range []struct {
		name         string
		sources      []Source
		letters      map[uuid.UUID]string
		next         int
		wantLetters  []string
		wantMarkers  []string
		wantAssigned map[uuid.UUID]string
		wantNext     int
	}{
		{
			name:         "new documents get letters in source order",
			sources:      []Source{{DocID: docB, Text: passage(1)}, {DocID: docA, Text: passage(2)}},
			wantLetters:  []string{"A", "B"},
			wantMarkers:  []string{"A1", "A2", "B1", "B2"},
			wantAssigned: map[uuid.UUID]string{docB: "A", docA: "B"},
			wantNext:     2,
		},
		{
			name:         "letters from the conversation are reused",
			sources:      []Source{{DocID: docB, Text: passage(1)}, {DocID: docA, Text: passage(2)}, {DocID: docC, Text: passage(3)}},
			letters:      map[uuid.UUID]string{docA: "C", docD: "A"},
			next:         3,
			wantLetters:  []string{"D", "C", "E"},
			wantMarkers:  []string{"D1", "D2", "C1", "C2", "E1", "E2"},
			wantAssigned: map[uuid.UUID]string{docB: "D", docC: "E"},
			wantNext:     5,
		},
		{
			// The second passage of A repeats "Leave the house now.", already cited as A2.
			name:        "sources of one document share its letter and numbering, and cite a sentence once",
			sources:     []Source{{DocID: docA, ChunkID: 1, Text: passage(1)}, {DocID: docB, Text: passage(2)}, {DocID: docA, ChunkID: 2, Text: passage(3)}},
			letters:     map[uuid.UUID]string{docA: "A"},
			next:        1,
			wantLetters: []string{"A", "B", "A"},
			wantMarkers: []string{"A1", "A2", "B1", "B2", "A3"},
			// Only new letters come back.
			wantAssigned: map[uuid.UUID]string{docB: "B"},
			wantNext:     2,
		},
		{
			name:         "a stale counter skips letters in use",
			sources:      []Source{{DocID: docB, Text: passage(1)}},
			letters:      map[uuid.UUID]string{docA: "A", docC: "B"},
			next:         0,
			wantLetters:  []string{"C"},
			wantMarkers:  []string{"C1", "C2"},
			wantAssigned: map[uuid.UUID]string{docB: "C"},
			wantNext:     3,
		},
		{
			name:     "no sources",
			next:     7,
			wantNext: 7,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sheet, assigned, next := Build("gas leak", tc.sources, tc.letters, tc.next, 2, nil)
			var letters, markers []string
			for _, e := range sheet {
				letters = append(letters, e.Letter)
				for _, f := range e.Facts {
					markers = append(markers, f.Marker)
				}
			}
			require.Equal(t, tc.wantLetters, letters)
			require.Equal(t, tc.wantMarkers, markers)
			require.Equal(t, tc.wantAssigned, assigned)
			require.Equal(t, tc.wantNext, next)
		})
	}
}

func TestBuildLeavesLettersAlone(t *testing.T) {
	t.Parallel()
	letters := map[uuid.UUID]string{docA: "A"}
	Build("gas", []Source{{DocID: docB, Text: "Gas."}}, letters, 1, 2, nil)
	require.Equal(t, map[uuid.UUID]string{docA: "A"}, letters)
}

func TestRender(t *testing.T) {
	t.Parallel()
	sheet := []Entry{
		{Letter: "A", Source: Source{DocID: docA, Title: "Earthquake safety"}, Facts: []Fact{
			{Marker: "A1", Text: "Drop, cover and\n  hold on."},
			{Marker: "A2", Text: "Expect aftershocks."},
		}},
		{Letter: "B", Source: Source{DocID: docB}, Facts: []Fact{{Marker: "B1", Text: "Gas smells of eggs."}}},
		{Letter: "C", Source: Source{DocID: docC, Title: "Nothing to say"}},
		{Letter: "A", Source: Source{DocID: docA, Title: "Earthquake safety"}, Facts: []Fact{{Marker: "A3", Text: "Check for injuries."}}},
	}
	want := `A. Earthquake safety (2024-03-01)
[A1] Drop, cover and hold on.
[A2] Expect aftershocks.
[A3] Check for injuries.

B. Untitled
[B1] Gas smells of eggs.
`
	require.Equal(t, want, Render(sheet, map[uuid.UUID]string{docA: "2024-03-01", docC: "2020-01-01"}))
	require.Empty(t, Render(nil, nil))
}

func TestRenderBuildRoundTrip(t *testing.T) {
	t.Parallel()
	sheet, _, _ := Build("smell gas", []Source{{DocID: docA, Title: "Quakes", Text: quakePassage}}, nil, 0, 2, nil)
	out := Render(sheet, nil)
	require.Equal(t, []string{"A1", "A2"}, Markers(out))
	require.True(t, strings.HasPrefix(out, "A. Quakes\n[A1] "), out)
}

func TestMarkers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"Leave the house [A1].", []string{"A1"}},
		{"Leave [A1, B2] and call [B2][C3].", []string{"A1", "B2", "C3"}},
		{"Leave [A1][a2].", []string{"A1"}},
		{"Twelve sources in [AA10] and [AB12; A1].", []string{"AA10", "AB12", "A1"}},
		{"In order of first appearance: [C1] [A1] [C1].", []string{"C1", "A1"}},
		{"Not markers: [A0] [A01] [1A] [A] [see A1] A1 (A1).", nil},
		{"No markers at all.", nil},
		{"", nil},
	} {
		require.Equal(t, tc.want, Markers(tc.text), "Markers(%q)", tc.text)
	}
}

// benchSentences are the sentences bench passages are made of.
var benchSentences = []string{
	"Earthquakes can strike without warning, and the first seconds decide how people fare.",
	"Stay indoors until the shaking stops and you are sure it is safe to exit.",
	"If you smell gas or hear a hissing noise, open a window and leave the building quickly.",
	"Check yourself and others for injuries, and give first aid where you are trained to.",
	"Expect aftershocks in the hours and days that follow the main shock.",
	"Keep a kit with water, food, a flashlight, spare batteries and a whistle near the door.",
	"Know where your gas meter is and how to turn it off with a wrench.",
	"Secure heavy furniture, shelves and water heaters to the walls with straps.",
	"Practice drop, cover and hold on with your family twice a year.",
	"After the shaking, listen to local radio for instructions from emergency services.",
	"Do not use matches, lighters or electrical switches if you suspect a gas leak.",
	"Wear sturdy shoes to protect your feet from broken glass and debris.",
	"Text rather than call, because phone lines are often overloaded after a disaster.",
	"Inspect your chimney for cracks before lighting a fire again.",
	"Move away from windows, mirrors and anything that could fall on you.",
	"Once outside, stay clear of buildings, power lines and street lights.",
}

// benchSources are ten passages of about 250 cl100k tokens each (16 sentences, some 200 words),
// what a turn returns; seven documents, so some share a letter.
func benchSources() []Source {
	var sources []Source
	for i := range 10 {
		rotated := append(slices.Clone(benchSentences[i:]), benchSentences[:i]...)
		sources = append(sources, Source{
			DocID:   uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(i % 7)}),
			ChunkID: int64(i),
			Title:   "Earthquake safety",
			Text:    strings.Join(rotated, " "),
		})
	}
	return sources
}

func BenchmarkBuild(b *testing.B) {
	sources := benchSources()
	b.ReportAllocs()
	for b.Loop() {
		Build("what to do if you smell gas after an earthquake", sources, nil, 0, 2, nil)
	}
}

// A passage repeats its headings as lines; they name the section and never make a fact while a
// sentence of the passage says something about the query.
func TestBuildSkipsHeadingLines(t *testing.T) {
	t.Parallel()
	src := Source{
		DocID:   uuid.MustParse("01900000-0000-7000-8000-000000000001"),
		Title:   "Flood Safety",
		Heading: "Flood Safety > When a flood warning is issued",
		Text: "When a flood warning is issued\n\nMove to higher ground immediately. Do not wait for " +
			"instructions to move if you see water rising. Never walk through flood water.",
	}
	sheet, _, _ := Build("what to do when a flood warning is issued", []Source{src}, nil, 0, 2, nil)
	require.Len(t, sheet[0].Facts, 2)
	for _, f := range sheet[0].Facts {
		require.NotEqual(t, "When a flood warning is issued", f.Text)
	}
	require.Equal(t, "Move to higher ground immediately.", sheet[0].Facts[0].Text)

	// A section of one sentence gives one fact: its heading line, or a fragment, does not fill
	// the second place (the answer read "[A1] Emergencies" above the sentence).
	short := Source{DocID: src.DocID, Title: "Key rotation guide", Heading: "Key rotation > Emergencies",
		Text: "Emergencies\n\nIf a key leaks, revoke it at once and audit the citations export. Stay calm."}
	for _, query := range []string{"how do I rotate the keys?", "emergencies", "volcanic ash"} {
		sheet, _, _ = Build(query, []Source{short}, nil, 0, 2, nil)
		require.Len(t, sheet[0].Facts, 1, query)
		require.Equal(t, "If a key leaks, revoke it at once and audit the citations export.", sheet[0].Facts[0].Text, query)
	}
	// A passage of nothing but its heading still cites it: a source keeps a fact.
	sheet, _, _ = Build("emergencies", []Source{{DocID: src.DocID, Heading: "Emergencies", Text: "Emergencies"}}, nil, 0, 2, nil)
	require.Len(t, sheet[0].Facts, 1)
}

// Once a marker names a sentence it names it for the whole conversation: a cited sentence keeps
// its marker in later sheets, a new sentence of the document gets the next number, and a
// sentence is cited once per sheet even when two passages of its document hold it.
func TestBuildKeepsSentenceMarkers(t *testing.T) {
	t.Parallel()
	text := "Smell gas? Leave the building now. Do not use light switches near a gas leak. Call the gas company from outside."
	sheet, _, _ := Build("gas leak building", []Source{{DocID: docA, Text: text}}, nil, 0, 2, nil)
	known := map[SentenceKey]string{}
	for _, f := range sheet[0].Facts {
		known[KeyOf(docA, f.Text)] = f.Marker
	}
	require.Len(t, known, 2)

	// A later turn cites one known sentence and one new one, from two passages of the document.
	later, _, _ := Build("gas company switches", []Source{{DocID: docA, Text: text}, {DocID: docA, Text: "Do not use light\nswitches near a gas leak. The gas company checks the lines."}},
		map[uuid.UUID]string{docA: "A"}, 1, 2, known)
	seen := map[string]string{}
	for _, e := range later {
		for _, f := range e.Facts {
			key := KeyOf(docA, f.Text)
			if m, ok := known[key]; ok {
				require.Equal(t, m, f.Marker, "a cited sentence keeps its marker")
			} else {
				require.NotContains(t, []string{"A1", "A2"}, f.Marker, "a new sentence gets a new number")
			}
			require.NotContains(t, seen, key.Text, "a sentence once per sheet")
			seen[key.Text] = f.Marker
		}
	}
	require.Contains(t, seen, "Do not use light switches near a gas leak.", "the same words wrapped are the same sentence")
	if m, ok := known[KeyOf(docA, "Do not use light switches near a gas leak.")]; ok {
		require.Equal(t, m, seen["Do not use light switches near a gas leak."])
	}
	require.Equal(t, "A", splitLetter(seen))
}

func splitLetter(markers map[string]string) string {
	letters := map[string]bool{}
	for _, m := range markers {
		l, n := SplitMarker(m)
		if n > 0 {
			letters[l] = true
		}
	}
	if len(letters) != 1 {
		return ""
	}
	for l := range letters {
		return l
	}
	return ""
}

// A sentence a passage repeats is one fact: cited twice in one answer it would carry one marker
// twice (and, once known, the second copy would too).
func TestBuildRepeatedSentenceOnce(t *testing.T) {
	t.Parallel()
	text := "Not worth it. The fees eat the returns. Not worth it."
	for _, known := range []map[SentenceKey]string{nil, {KeyOf(docA, "Not worth it."): "A1"}} {
		sheet, _, _ := Build("is it worth it", []Source{{DocID: docA, Text: text}}, map[uuid.UUID]string{docA: "A"}, 1, 3, known)
		markers := map[string]bool{}
		texts := map[string]bool{}
		for _, f := range sheet[0].Facts {
			require.False(t, markers[f.Marker], "marker %s twice", f.Marker)
			require.False(t, texts[f.Text], "sentence %q twice", f.Text)
			markers[f.Marker], texts[f.Text] = true, true
		}
	}
}
