package refer

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shown is a conversation's sources as the table reads them: turn 1 showed one guesthouse (A);
// turn 2, the last, compared two hotels and showed four sources, B to E, in that order.
var shown = []Shown{
	{DocID: doc('A'), Letter: "A", Title: "Arbury Lodge Guesthouse", Turn: 1, Rank: 1},
	{DocID: doc('B'), Letter: "B", Title: "Hobsons House", Turn: 2, Rank: 1},
	{DocID: doc('C'), Letter: "C", Title: "Acorn Guest House", Turn: 2, Rank: 2},
	{DocID: doc('D'), Letter: "D", Title: "Earthquake Safety", Turn: 2, Rank: 3},
	{DocID: doc('E'), Letter: "E", Title: "How to Prepare for a Flood", Turn: 2, Rank: 4},
}

func doc(letter byte) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("01900000-0000-7000-8000-0000000000%02x", letter))
}

// letters are the letters of refs, in order.
func letters(refs []Ref) []string {
	out := []string{}
	for _, r := range refs {
		out = append(out, r.Letter)
	}
	return out
}

func TestResolve(t *testing.T) {
	t.Parallel()
	const comparedBD = "How does Hobsons House compare with the Earthquake Safety article?"
	none := []string{}
	cases := []struct {
		text     string
		previous string
		refers   []string
		excludes []string
	}{
		// Ordinals, in words and digits: they count the last turn's sources.
		{text: "and the second one?", refers: []string{"C"}},
		{text: "What about the 2nd one?", refers: []string{"C"}},
		{text: "Tell me more about the first one", refers: []string{"B"}},
		{text: "What does the last source say about insurance?", refers: []string{"E"}},
		{text: "Is the third result more recent?", refers: []string{"D"}},
		{text: "Is the 1st source reliable?", refers: []string{"B"}},
		{text: "what about the 4th?", refers: []string{"E"}},
		{text: "and the last?", refers: []string{"E"}},
		{text: "the penultimate one", refers: []string{"D"}},
		{text: "Open the second-to-last link", refers: []string{"D"}},
		{text: "Does the top result mention parking?", refers: []string{"B"}},
		{text: "What does source 3 say?", refers: []string{"D"}},
		{text: "Summarise the first and third ones", refers: []string{"B", "D"}},
		{text: "Do the second and the fourth documents agree?", refers: []string{"C", "E"}},
		{text: "Is source 2 cheaper than source 4?", refers: []string{"C", "E"}},
		{text: "What does the third one say, and the fourth?", refers: []string{"D", "E"}},
		// Ranges.
		{text: "Compare the first two", refers: []string{"B", "C"}},
		{text: "What do the last two sources say?", refers: []string{"D", "E"}},
		{text: "Rank the top 3 results by price", refers: []string{"B", "C", "D"}},
		// Letters, with and without brackets, and citation markers.
		{text: "What does [B] say?", refers: []string{"B"}},
		{text: "Explain [C2] please", refers: []string{"C"}},
		{text: "Why do [B1] and [D3] disagree?", refers: []string{"B", "D"}},
		{text: "Is [B1, C2] the same claim?", refers: []string{"B", "C"}},
		{text: "What does source C say about parking?", refers: []string{"C"}},
		{text: "Do sources B and D agree?", refers: []string{"B", "D"}},
		{text: "Back to [A]: is it cheap?", refers: []string{"A"}},
		{text: "Is document E's advice current?", refers: []string{"E"}},
		// Titles, cued and not, partial and full.
		{text: "What about the Hobsons House one?", refers: []string{"B"}},
		{text: "Does the Acorn one have parking?", refers: []string{"C"}},
		{text: "Go back to the one about earthquake safety", refers: []string{"D"}},
		{text: "Is Hobsons House close to the centre?", refers: []string{"B"}},
		{text: "What about Acorn?", refers: []string{"C"}},
		{text: "acorn guest house reviews", refers: []string{"C"}},
		{text: "Is Hobson's House open in winter?", refers: []string{"B"}},
		{text: "and the Arbury Lodge article?", refers: []string{"A"}},
		// Singular and plural references to what the last turns named or showed.
		{text: "Does that article mention parking?", refers: []string{"B"}},
		{text: "Does that article mention parking?", previous: "Tell me about the Acorn one", refers: []string{"C"}},
		{text: "Is this one open on Sundays?", refers: []string{"B"}},
		{text: "Do both of them mention insurance?", previous: comparedBD, refers: []string{"B", "D"}},
		{text: "Do both mention insurance?", refers: []string{"B", "C"}},
		{text: "and those two?", previous: comparedBD, refers: []string{"B", "D"}},
		{text: "What about the latter?", previous: comparedBD, refers: []string{"D"}},
		{text: "and the former?", previous: comparedBD, refers: []string{"B"}},
		{text: "Go back to those same documents", refers: []string{"B", "C", "D", "E"}},
		{text: "Does each source give a date?", refers: []string{"B", "C", "D", "E"}},
		{text: "Are all of them in Cambridge?", previous: comparedBD, refers: []string{"B", "D"}},
		// Negatives.
		{text: "Anything else, not the first one?", excludes: []string{"B"}},
		{text: "Other than B, what do the sources say?", excludes: []string{"B"}},
		{text: "Except the Hobsons House one, which are cheap?", excludes: []string{"B"}},
		{text: "Apart from source D, what else?", excludes: []string{"D"}},
		{text: "Ignore [C] and [D]", excludes: []string{"C", "D"}},
		{text: "not the first or the second", excludes: []string{"B", "C"}},
		{text: "The second one, not the first", refers: []string{"C"}, excludes: []string{"B"}},
		{text: "Instead of the first one, look at the third", refers: []string{"D"}, excludes: []string{"B"}},
		{text: "All of them except B", refers: []string{"C", "D", "E"}, excludes: []string{"B"}},
		{text: "Don't include the last one", excludes: []string{"E"}},
		{text: "Rather than Acorn, is Hobsons House any good?", refers: []string{"B"}, excludes: []string{"C"}},
		{text: "Not only the first one but also the second", refers: []string{"B", "C"}},
		// Not references.
		{text: "What happened in the second world war?"},
		{text: "One more question: is breakfast included?"},
		{text: "We need a plan B"},
		{text: "Is this the first time it flooded?"},
		{text: "What is a B-tree?"},
		{text: "How much vitamin B12 do I need?"},
		{text: "First of all, how cold does it get?"},
		{text: "At last, some good news"},
		{text: "What is the last step of the process?"},
		{text: "Why is it in the first place?"},
		{text: "Both parents need visas"},
		{text: "What does Article 5 of the treaty say?"},
		{text: "Read the second page of the manual"},
		{text: "Option B looks better"},
		{text: "Tell me about earthquakes"},
		{text: "How to prepare for winter?"},
		{text: "Does the guest house have parking?"},
		{text: "Can the two of us share a room?"},
		{text: "Is it a Class A building?"},
		{text: "What does source F say?"},
		{text: "I need to source a new supplier"},
		{text: "Is that one more reason to go?"},
		{text: "House prices in Cambridge"},
		{text: "What's the first step?"},
	}
	require.GreaterOrEqual(t, len(cases), 40)
	for _, tc := range cases {
		got := Resolve(tc.text, shown, tc.previous)
		want := tc.refers
		if want == nil {
			want = none
		}
		assert.Equal(t, want, letters(got.Refers), "refers of %q (previous %q)", tc.text, tc.previous)
		want = tc.excludes
		if want == nil {
			want = none
		}
		assert.Equal(t, want, letters(got.Excludes), "excludes of %q (previous %q)", tc.text, tc.previous)
	}
}

func TestResolvePhraseAndKind(t *testing.T) {
	t.Parallel()
	got := Resolve("And the second one? Not [D2] though.", shown, "")
	require.Equal(t, []Ref{{DocID: doc('C'), Letter: "C", Kind: Ordinal, Phrase: "the second one"}}, got.Refers)
	require.Equal(t, []Ref{{DocID: doc('D'), Letter: "D", Kind: Letter, Phrase: "[D2]"}}, got.Excludes)
	require.Equal(t, []uuid.UUID{doc('C')}, IDs(got.Refers))
}

func TestResolveNothingShown(t *testing.T) {
	t.Parallel()
	require.True(t, Resolve("and the second one?", nil, "").Empty())
	// An ordinal past the end of the last list names nothing.
	require.True(t, Resolve("and the ninth one?", shown, "").Empty())
}

// Sources that share a title are one title: the one shown last is meant.
func TestResolveSameTitle(t *testing.T) {
	t.Parallel()
	again := append([]Shown{{DocID: doc('Z'), Letter: "Z", Title: "Hobsons House", Turn: 1, Rank: 2}}, shown...)
	require.Equal(t, []string{"B"}, letters(Resolve("the Hobsons House one", again, "").Refers))
	// Two different titles that both fit are no reference.
	twoHouses := append(shown, Shown{DocID: doc('F'), Letter: "F", Title: "Acorn Lodge", Turn: 2, Rank: 5})
	require.Empty(t, Resolve("Does the Acorn one have parking?", twoHouses, "").Refers)
}

// The cost of reading one turn against a conversation that showed 30 sources.
func BenchmarkResolve(b *testing.B) {
	var many []Shown
	for i := range 30 {
		many = append(many, Shown{DocID: uuid.New(), Letter: string(rune('A' + i%26)), Title: fmt.Sprintf("Guest House Number %d of Cambridge", i), Turn: 1 + i/10, Rank: 1 + i%10})
	}
	for b.Loop() {
		Resolve("Compared with the Guest House Number 4 one, is the second one cheaper, or source C?", many, "How about the first two of them?")
	}
}
