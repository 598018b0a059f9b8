package ask

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/focus"
	"github.com/ragd/ragd/intent"
	"github.com/ragd/ragd/refer"
)

func docs(n int) []uuid.UUID {
	out := make([]uuid.UUID, n)
	for i := range out {
		out[i] = uuid.New()
	}
	return out
}

// The shown sources are read back from messages as the store returns them: meta decoded from
// JSON, so a list of maps.
func TestShownOfMessages(t *testing.T) {
	t.Parallel()
	d := docs(4)
	meta := func(sources ...Source) map[string]any {
		b, err := json.Marshal(map[string]any{shownKey: shownMeta(sources)})
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	msgs := []ragd.Message{
		{Role: "user", Turn: 1, Content: "compare"},
		{Role: "assistant", Turn: 1, Meta: meta(Source{Letter: "A", DocID: d[0], Title: "Alpha"}, Source{Letter: "B", DocID: d[1], Title: "Beta"})},
		{Role: "user", Turn: 2, Content: "more"},
		{Role: "assistant", Turn: 2, Meta: meta(Source{Letter: "B", DocID: d[1], Title: "Beta"}, Source{Letter: "C", DocID: d[2], Title: "Gamma"})},
	}
	// D was shown by a turn recorded before messages kept what they showed.
	sources := []ragd.ConversationSource{{DocID: d[0], Marker: "A", LastTurn: 1}, {DocID: d[3], Marker: "D", LastTurn: 1}}
	require.Equal(t, []refer.Shown{
		{DocID: d[0], Letter: "A", Title: "Alpha", Turn: 1, Rank: 1},
		{DocID: d[1], Letter: "B", Title: "Beta", Turn: 2, Rank: 1},
		{DocID: d[2], Letter: "C", Title: "Gamma", Turn: 2, Rank: 2},
		{DocID: d[3], Letter: "D", Turn: 1},
	}, shownOf(msgs, sources))

	res := references("and the second one?", readConversation(msgs), &ragd.ConversationState{Sources: sources})
	require.Equal(t, []uuid.UUID{d[2]}, refer.IDs(res.Refers))
}

func TestWithReferences(t *testing.T) {
	t.Parallel()
	d := docs(3)
	sources := []ragd.ConversationSource{
		{DocID: d[0], Marker: "A", Carried: true, CarryScore: 0.5},
		{DocID: d[1], Marker: "B", Carried: true, CarryScore: 0.7},
		{DocID: d[2], Marker: "C", Carried: false, CarryScore: 0.1, CitedChunkIDs: []int64{7}}, // dropped
	}
	cands := carry.Candidates(sources, false)
	res := refer.Resolution{Refers: []refer.Ref{{DocID: d[2]}}, Excludes: []refer.Ref{{DocID: d[0]}}}
	got := withReferences(cands, sources, res)
	require.Len(t, got, 2)
	require.Equal(t, d[1], got[0].DocID)
	require.Equal(t, d[2], got[1].DocID, "the referred source comes back though carry-over dropped it")
	require.True(t, got[1].Carried)
	require.Equal(t, 1.0, got[1].CarryScore)
	require.Equal(t, []int64{7}, got[1].CitedChunkIDs)
	require.Len(t, cands, 2, "the candidates given are not changed")
}

func TestReferredPicks(t *testing.T) {
	t.Parallel()
	d := docs(3)
	picks := []carry.Pick{{DocID: d[0]}, {DocID: d[1]}, {DocID: d[2]}}
	res := refer.Resolution{Refers: []refer.Ref{{DocID: d[2]}, {DocID: d[1]}}}
	require.Equal(t, []carry.Pick{{DocID: d[2]}, {DocID: d[1]}}, referredPicks(picks, res, 1), "referred sources pass the cap")
	require.Equal(t, picks[:2], referredPicks(picks, refer.Resolution{}, 2))
	require.Empty(t, referredPicks(picks, res, 0), "a cap of 0 is no carried list, references or not")
}

func TestReferredFirst(t *testing.T) {
	t.Parallel()
	d := docs(5)
	cand := func(i int) Candidate { return Candidate{Chunk: ragd.Chunk{ID: int64(i), DocID: d[i]}} }
	ranked := []Candidate{cand(0), cand(1), cand(2), cand(3), cand(4)}
	kept := ranked[:3]
	ids := func(cs []Candidate) []uuid.UUID {
		var out []uuid.UUID
		for _, c := range cs {
			out = append(out, c.Chunk.DocID)
		}
		return out
	}
	require.Equal(t, ids(kept), ids(referredFirst(ranked, kept, refer.Resolution{})))
	// The referred source comes first, from past the cut; the excluded one is left out.
	res := refer.Resolution{Refers: []refer.Ref{{DocID: d[4]}, {DocID: d[1]}}, Excludes: []refer.Ref{{DocID: d[0]}}}
	require.Equal(t, []uuid.UUID{d[4], d[1], d[2]}, ids(referredFirst(ranked, kept, res)))

	sources := []Source{{DocID: d[4]}, {DocID: d[1]}, {DocID: d[2]}}
	res.Refers[0].Phrase, res.Refers[1].Phrase = "the last one", "[B]"
	referredBy(sources, res)
	require.Equal(t, []string{"the last one", "[B]", ""}, []string{sources[0].Referred, sources[1].Referred, sources[2].Referred})
}

// A shown title named without a cue is the turn's subject: it is not carried in as a reference.
func TestNamedTitleIsNoReference(t *testing.T) {
	t.Parallel()
	d := docs(2)
	b, err := json.Marshal(map[string]any{shownKey: shownMeta([]Source{{Letter: "A", DocID: d[0], Title: "Hobsons House"}, {Letter: "B", DocID: d[1], Title: "Acorn Guest House"}})})
	require.NoError(t, err)
	var meta map[string]any
	require.NoError(t, json.Unmarshal(b, &meta))
	cv := readConversation([]ragd.Message{{Role: "user", Turn: 1, Content: "hotels?"}, {Role: "assistant", Turn: 1, Meta: meta}})
	st := &ragd.ConversationState{}
	require.Empty(t, references("Is Hobsons House quiet?", cv, st).Refers)
	require.Equal(t, []uuid.UUID{d[0]}, refer.IDs(references("Is the Hobsons House one quiet?", cv, st).Refers))
	require.Equal(t, []uuid.UUID{d[1]}, refer.IDs(references("Rather than Acorn Guest House, what else?", cv, st).Excludes))
}

// sureSameSources is a classifier sure that every turn is same-sources, behind the intent guard.
type sureSameSources struct{}

func (sureSameSources) Classify(in IntentInput) Intent {
	r, _ := intent.Guard(intent.Turn{Text: in.Text, History: in.History, Sources: in.Sources, Focus: in.Focus, Titles: in.Titles},
		map[intent.Label]float64{intent.SameSources: 0.9, intent.DrillDown: 0.1})
	return Intent{Label: string(r.Label), Confidence: r.Confidence}
}

// Whether a turn that names a title may narrow retrieval to the carried sources is the intent
// guard's decision, given the titles the focus found in the turn; references to shown sources
// come first. "in that article, is Acorn Guest House quiet?" points at a shown source: it is
// same-sources, about the article (the title is what to look for in it), whether refer resolves
// the article or, with nothing shown to resolve, the guard reads the words.
func TestIntentOfATurnThatNamesATitle(t *testing.T) {
	t.Parallel()
	p := &Pipeline{cfg: DefaultConfig(), Deps: Deps{Intent: sureSameSources{}}}
	acorn := &turnFocus{own: []focus.Mention{{Text: "ACORN GUEST HOUSE", Kind: focus.Entity}}}
	cv := readConversation([]ragd.Message{{Role: "user", Turn: 1, Content: "guesthouses in the north?"}})
	st := &ragd.ConversationState{}
	for _, tc := range []struct {
		text string
		tf   *turnFocus
		want string
	}{
		{"is Acorn Guest House quiet?", acorn, DrillDown},
		{"you mentioned Acorn Guest House, is it quiet?", acorn, DrillDown},
		{"in that article, is Acorn Guest House quiet?", acorn, SameSources},
		// With the focus off nothing says the turn names a title: the anchor decides.
		{"you mentioned Acorn Guest House, is it quiet?", nil, SameSources},
	} {
		in, refs := p.intent(tc.text, st, cv, tc.tf)
		require.Equal(t, tc.want, in.Label, tc.text)
		require.True(t, refs.Empty(), tc.text)
	}

	d := docs(2)
	b, err := json.Marshal(map[string]any{shownKey: shownMeta([]Source{{Letter: "A", DocID: d[0], Title: "Hobsons House"}, {Letter: "B", DocID: d[1], Title: "Acorn Guest House"}})})
	require.NoError(t, err)
	var meta map[string]any
	require.NoError(t, json.Unmarshal(b, &meta))
	cv = readConversation([]ragd.Message{{Role: "user", Turn: 1, Content: "guesthouses in the north?"}, {Role: "assistant", Turn: 1, Meta: meta}})
	in, refs := p.intent("in that article, is Acorn Guest House quiet?", st, cv, acorn)
	require.Equal(t, Intent{Label: SameSources, Confidence: 1}, in)
	require.Equal(t, []uuid.UUID{d[0]}, refer.IDs(refs.Refers), "that article, the first shown; the title named is no reference")
}
