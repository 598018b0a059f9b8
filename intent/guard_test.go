package intent

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// flood is a conversation about preparing a house for floods; heatPump one about heat pumps.
var (
	flood    = []string{"how do I protect my basement from flooding?", "does flood insurance cover the basement?"}
	heatPump = []string{"how does an air source heat pump work?", "what does it cost to install one?"}
)

// TestGuardTable pins what the guard guarantees, whatever the classifier says: the reported
// phrasings and their kin are run against every extreme of the probabilities.
func TestGuardTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text    string
		context []string
		// newTopic: the guard guarantees new-topic (true) or guarantees it is not (false).
		newTopic bool
		why      Evidence
	}{
		// Reported: dropped every carried source.
		{"Go back to those same documents", heatPump, false, EvidenceBackRef},
		{"Any maintenance needed?", heatPump, false, EvidenceElliptic},
		// Reported: a drill-down, though the user said so.
		{"New topic. How do I prepare for a flood?", heatPump, true, EvidenceNewSubject},
		// Back-references to what was shown.
		{"go back to the same sources please", flood, false, EvidenceBackRef},
		{"Can you look at those same results again?", flood, false, EvidenceBackRef},
		{"What does the document you mentioned say about pumps?", flood, false, EvidenceBackRef},
		{"in that article, who pays for the repairs?", flood, false, EvidenceBackRef},
		{"the second one, how cheap is that to run?", heatPump, false, EvidenceBackRef},
		{"according to those results, when should I call a plumber?", flood, false, EvidenceBackRef},
		// A pronoun for what the conversation named.
		{"Are their bathrooms clean?", []string{"a guesthouse in the west please"}, false, EvidencePronoun},
		{"does it need a permit?", heatPump, false, EvidencePronoun},
		// Elliptic continuations: no subject of their own.
		{"Anything else?", heatPump, false, EvidenceElliptic},
		{"and the cost?", flood, false, EvidenceElliptic},
		{"What about maintenance?", heatPump, false, EvidenceElliptic},
		{"Any warranty?", heatPump, false, EvidenceElliptic},
		{"Is there a cheaper option?", heatPump, false, EvidenceElliptic},
		{"why?", flood, false, EvidenceNoSubject},
		{"ok thanks", flood, false, EvidenceNoSubject},
		// Sharing a word with the conversation, announced or not.
		{"New topic: what about flood barriers for the garage?", flood, false, EvidenceShared},
		{"Different question about heat pumps: how loud is the outdoor unit?", heatPump, false, EvidenceShared},
		{"How often should the heat pump filter be cleaned?", heatPump, false, EvidenceShared},
		{"Does the insurance pay for a new boiler?", flood, false, EvidenceShared},
		// Announced, on a subject the conversation does not have.
		{"Different question: how do I renew my passport?", flood, true, EvidenceNewSubject},
		{"Changing the subject, what is the capital of Peru?", heatPump, true, EvidenceNewSubject},
		{"unrelated, but how do I reset my VPN password?", flood, true, EvidenceNewSubject},
		{"On another note: which vaccines does a puppy need?", heatPump, true, EvidenceNewSubject},
	}
	extremes := []map[Label]float64{
		{NewTopic: 1},
		{DrillDown: 1},
		{SameSources: 1},
		{NewTopic: 0.55, Compare: 0.45},
	}
	for _, tt := range tests {
		for _, probs := range extremes {
			r, why := Guard(Turn{Text: tt.text, History: tt.context}, probs)
			require.Equal(t, tt.newTopic, r.Label == NewTopic, "%q with %v: %s", tt.text, probs, why)
			if tt.newTopic || probs[NewTopic] > 0 {
				require.Equal(t, tt.why, why, tt.text)
			}
			require.Equal(t, probs[r.Label], r.Confidence, tt.text)
		}
	}
}

func TestGuardTrustsAConfidentClassifierWithEvidence(t *testing.T) {
	t.Parallel()
	// Not announced: new-topic only when the classifier says so with confidence.
	text := "How do I renew my passport?"
	r, why := Guard(Turn{Text: text, History: flood}, map[Label]float64{NewTopic: 0.7, DrillDown: 0.3})
	require.Equal(t, NewTopic, r.Label, why)
	r, why = Guard(Turn{Text: text, History: flood}, map[Label]float64{NewTopic: 0.45, DrillDown: 0.35, Compare: 0.2})
	require.Equal(t, DrillDown, r.Label)
	require.Equal(t, EvidenceUnsure, why)
	require.Equal(t, 0.35, r.Confidence)
	r, _ = Guard(Turn{Text: text, History: flood}, map[Label]float64{DrillDown: 0.6, NewTopic: 0.4})
	require.Equal(t, DrillDown, r.Label, "the guard never turns a turn new-topic without an announcement")
}

func TestGuardFallsBackToTheNextLabel(t *testing.T) {
	t.Parallel()
	probs := map[Label]float64{NewTopic: 0.6, SameSources: 0.25, DrillDown: 0.1, Compare: 0.05}
	r, why := Guard(Turn{Text: "what did those same results say about sandbags?", History: flood}, probs)
	require.Equal(t, SameSources, r.Label)
	require.Equal(t, EvidenceBackRef, why)
	require.Equal(t, 0.25, r.Confidence)
	// Ties go to drill-down, the label that keeps carried sources and searches afresh.
	r, _ = Guard(Turn{Text: "and the cost?", History: flood}, map[Label]float64{NewTopic: 0.5, Compare: 0.25, DrillDown: 0.25})
	require.Equal(t, DrillDown, r.Label)
}

func TestGuardReadsFocusAndSources(t *testing.T) {
	t.Parallel()
	probs := map[Label]float64{NewTopic: 0.9, DrillDown: 0.1}
	turn := Turn{Text: "Is Hobsons House near the station?", History: []string{"a guesthouse in the west please"}}
	r, _ := Guard(turn, probs)
	require.Equal(t, NewTopic, r.Label)
	turn.Focus = []string{"Hobsons House"}
	r, why := Guard(turn, probs)
	require.Equal(t, DrillDown, r.Label)
	require.Equal(t, EvidenceShared, why)
	turn.Focus = nil
	turn.Sources = []string{"Hobsons House has free parking."}
	r, _ = Guard(turn, probs)
	require.Equal(t, DrillDown, r.Label)
	// Turns that have left the classifier's window do not count.
	turn.Sources = nil
	turn.History = []string{"Hobsons House", "a", "b", "c"}
	r, _ = Guard(turn, probs)
	require.Equal(t, NewTopic, r.Label)
}

// TestClassifyReportedPhrasings runs the shipped model on the phrasings users reported.
func TestClassifyReportedPhrasings(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"Go back to those same documents", "Any maintenance needed?"} {
		r := Classify(Turn{Text: text, History: heatPump})
		require.NotEqual(t, NewTopic, r.Label, "%q: %v", text, r.Probs)
	}
	r := Classify(Turn{Text: "New topic. How do I prepare for a flood?", History: heatPump})
	require.Equal(t, NewTopic, r.Label, "%v", r.Probs)
}

// TestGuardSameSourcesNeedsAnAnchor: a classifier sure of same-sources narrows retrieval to the
// carried sources only when the turn anchors on what was shown.
func TestGuardSameSourcesNeedsAnAnchor(t *testing.T) {
	t.Parallel()
	sure := map[Label]float64{NewTopic: 0.05, DrillDown: 0.15, Compare: 0.05, SameSources: 0.75}
	for _, tc := range []struct {
		text string
		want Label
	}{
		{"Are their bathrooms clean?", DrillDown},
		{"Is the Gonville Hotel quiet at night?", DrillDown},
		{"does flood insurance cover the garage?", DrillDown},
		{"in that article, who pays for the repairs?", SameSources},
		{"What does the document you mentioned say about pumps?", SameSources},
		{"Go back to those same documents", SameSources},
	} {
		r, _ := Guard(Turn{Text: tc.text, History: flood}, sure)
		require.Equal(t, tc.want, r.Label, tc.text)
		require.Equal(t, SameSources, r.Raw, tc.text)
		require.Equal(t, sure[tc.want], r.Confidence, tc.text)
	}
}

// TestGuardSameSourcesNamingATitle: a turn that names a title of the corpus asks about that
// title, so a classifier's same-sources is a drill-down, which searches the whole corpus; unless
// the turn points at a shown source by what it is, and so says where to look.
func TestGuardSameSourcesNamingATitle(t *testing.T) {
	t.Parallel()
	sure := map[Label]float64{NewTopic: 0.05, DrillDown: 0.15, Compare: 0.05, SameSources: 0.75}
	hobsons := []string{"HOBSONS HOUSE"}
	for _, tc := range []struct {
		text   string
		titles []string
		want   Label
	}{
		// No anchor: a drill-down whether or not it names a title.
		{"Is the Acorn Guest House a quiet place?", []string{"ACORN GUEST HOUSE"}, DrillDown},
		{"is Hobsons House quiet?", hobsons, DrillDown},
		// An anchor that does not say which source: the title is the subject.
		{"you mentioned Hobsons House, is it quiet?", hobsons, DrillDown},
		{"can you clarify whether Hobsons House is quiet?", hobsons, DrillDown},
		{"according to what you said, is Hobsons House quiet?", hobsons, DrillDown},
		// The same anchors, no title: the turn is about what was shown.
		{"you mentioned the noise, is it quiet?", nil, SameSources},
		{"can you clarify whether it is quiet?", nil, SameSources},
		// Pointing at a shown source: the user says where to look, the title is what to look for.
		{"in that article, is Hobsons House quiet?", hobsons, SameSources},
		{"does the second result say Hobsons House is quiet?", hobsons, SameSources},
		{"Go back to those same documents: is Hobsons House quiet?", hobsons, SameSources},
		{"what does page 2 say about Hobsons House?", hobsons, SameSources},
	} {
		r, _ := Guard(Turn{Text: tc.text, History: []string{"a guesthouse in the north please"}, Titles: tc.titles}, sure)
		require.Equal(t, tc.want, r.Label, tc.text)
		require.Equal(t, SameSources, r.Raw, tc.text)
	}
}
