package ask

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/focus"
)

func TestFocusSearches(t *testing.T) {
	t.Parallel()
	p := &Pipeline{cfg: DefaultConfig()}
	p.cfg.FreshK = 40
	prior := focus.Focus{Turn: 3, Terms: []focus.Term{
		{Text: "GONVILLE HOTEL", Kind: focus.Entity, Weight: 1, Turn: 3, Origin: focus.FromUser},
		{Text: "UNIVERSITY ARMS HOTEL", Kind: focus.Entity, Weight: 0.9, Turn: 3, Origin: focus.FromReply},
		{Text: "parking", Kind: focus.Subject, Weight: 1, Turn: 3, Origin: focus.FromUser},
		{Text: "Lunar phase", Kind: focus.Entity, Weight: 0.3, Turn: 1, Origin: focus.FromReply},
	}}
	chunks := map[string]int{"GONVILLE HOTEL": 76, "UNIVERSITY ARMS HOTEL": 12}
	got := focusSearches(p.cfg, "do they have parking?", turnFocus{prior: prior, lean: 1, chunks: chunks})
	require.Equal(t, []search{
		// More chunks than a search returns: the question among the hotel's documents.
		{name: "focus-bm25", weight: 2, text: "do they have parking?", title: "GONVILLE HOTEL"},
		// Fewer: the name joins the question instead.
		{name: "focus2-bm25", weight: 2 * 0.9, text: "do they have parking? UNIVERSITY ARMS HOTEL"},
	}, got, "the leading entities (within 0.8 of the heaviest); subjects are not searched with")

	// A turn that says four words' worth by itself: the added name weighs a quarter (FocusOwnInfo
	// 1), the search within the hotel keeps its weight.
	got = focusSearches(p.cfg, "do they have parking?", turnFocus{prior: prior, lean: 1, chunks: chunks, info: 4})
	require.Equal(t, 2.0, got[0].weight, "searched within: every hit matches the turn's words")
	require.InDelta(t, 2*0.9/4, got[1].weight, 1e-12, "the name added to a turn that names its subject itself")
	p.cfg.FocusOwnInfo = 0
	got = focusSearches(p.cfg, "do they have parking?", turnFocus{prior: prior, lean: 1, chunks: chunks, info: 4})
	require.InDelta(t, 2*0.9, got[1].weight, 1e-12, "FocusOwnInfo 0 is off")
	p.cfg.FocusOwnInfo = 1

	require.Len(t, focusSearches(p.cfg, "q", turnFocus{prior: prior, lean: 0.5, chunks: chunks}), 2)
	require.Equal(t, 1.0, focusSearches(p.cfg, "q", turnFocus{prior: prior, lean: 0.5, chunks: chunks})[0].weight)
	require.Empty(t, focusSearches(p.cfg, "q", turnFocus{prior: prior, lean: 0, chunks: chunks}), "a turn that names its own subject")
	require.Empty(t, focusSearches(p.cfg, "q", turnFocus{lean: 1}), "an empty focus")
	p.cfg.FocusWeight = 0
	require.Empty(t, focusSearches(p.cfg, "q", turnFocus{prior: prior, lean: 1, chunks: chunks}), "weight 0 is off")
}

func TestNextFocus(t *testing.T) {
	t.Parallel()
	cfg := focus.DefaultConfig()
	locked := focus.Focus{Turn: 1, Terms: []focus.Term{{Text: "HOBSONS HOUSE", Kind: focus.Entity, Weight: 1, Turn: 1, Origin: focus.FromUser}}}
	tf := turnFocus{
		replies: []focus.Mention{{Text: "ALLENBELL", Kind: focus.Entity, Origin: focus.FromReply, Turn: 1}},
		read:    1,
		own:     []focus.Mention{{Text: "breakfast", Kind: focus.Subject, Origin: focus.FromUser, Turn: 2}},
	}
	sources := []Source{{Title: "ALLENBELL", Heading: "Reviews > Rooms", Score: 2}, {Title: "ACORN GUEST HOUSE", Score: 1}}
	f := nextFocus(locked, tf, 2, sources, cfg)
	require.Equal(t, 2, f.Turn)
	require.Equal(t, 1, f.Replies, "the reply of turn 1 is read once")
	byText := map[string]focus.Term{}
	for _, term := range f.Terms {
		byText[term.Kind+":"+term.Text] = term
	}
	require.Equal(t, focus.Term{Text: "breakfast", Kind: focus.Subject, Weight: 1, Turn: 2, Origin: focus.FromUser}, byText["subject:breakfast"])
	require.InDelta(t, 0.7, byText["entity:HOBSONS HOUSE"].Weight, 1e-12)
	require.InDelta(t, 0.7, byText["entity:ALLENBELL"].Weight, 1e-12, "named by the reply of turn 1")
	require.InDelta(t, 0.5, byText["subject:ALLENBELL"].Weight, 1e-12, "a source's title is a subject, half weight")
	require.InDelta(t, 0.25, byText["subject:ACORN GUEST HOUSE"].Weight, 1e-12, "times its score relative to the best")
	require.Equal(t, focus.FromSource, byText["subject:Rooms"].Origin, "the heading's last part")
	require.Len(t, f.Terms, 6)
}

// seenIntent records what the classifier was given.
type seenIntent struct{ focus *[]string }

func (s seenIntent) Classify(in IntentInput) Intent {
	*s.focus = in.Focus
	return Intent{Label: DrillDown, Confidence: 1}
}

func TestClassifyGetsTheFocus(t *testing.T) {
	t.Parallel()
	var got []string
	p := &Pipeline{cfg: DefaultConfig(), Deps: Deps{Intent: seenIntent{&got}}}
	f := focus.Focus{Turn: 2, Terms: []focus.Term{
		{Text: "HOBSONS HOUSE", Kind: focus.Entity, Weight: 1},
		{Text: "parking", Kind: focus.Subject, Weight: 0.7},
	}}
	p.classify(IntentInput{Text: "any maintenance needed?", History: []string{"tell me about Hobsons House"}}, nil, f)
	require.Equal(t, []string{"HOBSONS HOUSE", "parking"}, got, "the guard against a wrong new topic reads the focus")
}

func TestTitles(t *testing.T) {
	t.Parallel()
	titles := func(ms ...focus.Mention) []string { return turnFocus{own: ms}.titles() }
	require.Empty(t, titles(), "a turn that names nothing")
	require.Empty(t, titles(focus.Mention{Text: "views", Kind: focus.Subject}), "a subject is no title")
	require.Equal(t, []string{"ACORN GUEST HOUSE"}, titles(focus.Mention{Text: "views", Kind: focus.Subject}, focus.Mention{Text: "ACORN GUEST HOUSE", Kind: focus.Entity}))
}
