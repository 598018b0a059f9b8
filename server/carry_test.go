package server_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ask"
)

// fixedIntent classifies every later turn as one intent, so a test can check how the pipeline
// reacts to that intent; the classifier itself is tested in package intent.
type fixedIntent ask.Intent

func (f fixedIntent) Classify(ask.IntentInput) ask.Intent { return ask.Intent(f) }

type conversationSource struct {
	DocID         string  `json:"doc_id"`
	Letter        string  `json:"letter"`
	CarryScore    float64 `json:"carry_score"`
	Pinned        bool    `json:"pinned"`
	Carried       bool    `json:"carried"`
	InactiveTurns int     `json:"inactive_turns"`
	Reason        string  `json:"reason"`
	Deleted       bool    `json:"deleted"`
}

func (b *testBundle) sources(t *testing.T, conv string) map[string]conversationSource {
	t.Helper()
	resp, body := b.do(t, "GET", "/v1/conversations/"+conv+"/sources", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	out := map[string]conversationSource{}
	for _, s := range decode[struct {
		Sources []conversationSource `json:"sources"`
	}](t, body).Sources {
		out[s.DocID] = s
	}
	return out
}

func (b *testBundle) ask(t *testing.T, conv, message string, pins ...string) askResponse {
	t.Helper()
	req := map[string]any{"message": message}
	if conv != "" {
		req["conversation_id"] = conv
	}
	if pins != nil {
		req["pins"] = pins
	}
	resp, body := b.do(t, "POST", "/v1/ask", req)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	return decode[askResponse](t, body)
}

func docOf(r askResponse, title string) (source, bool) {
	for _, s := range r.Sources {
		if s.Title == title {
			return s, true
		}
	}
	return source{}, false
}

// "Is it the same after a flood?" shares no word with the earthquake passage it asks about: the
// carried source comes back because the conversation carries it, not because BM25 finds it.
func TestFollowUpKeepsCarriedSources(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true, intent: fixedIntent{Label: ask.Compare, Confidence: 0.9, Entities: []string{"flood"}}})
	one := b.ask(t, "", "What should I do if I smell gas after an earthquake?")
	quake, ok := docOf(one, "Earthquake Safety")
	require.True(t, ok)

	two := b.ask(t, one.ConversationID, "Is it the same after a flood?")
	require.Contains(t, two.Retrieval.Lists, "carry")
	again, ok := docOf(two, "Earthquake Safety")
	require.True(t, ok, "the carried source is among the sources of the follow-up")
	require.Equal(t, quake.Letter, again.Letter)
	require.Contains(t, again.Origins, "carry")
	_, ok = docOf(two, "Flood Safety | Household Preparedness Guide")
	require.True(t, ok, "and the flood passage, found fresh")

	src := b.sources(t, one.ConversationID)[quake.DocID]
	require.True(t, src.Carried)
	require.Equal(t, "carried", src.Reason)
}

func TestNewTopicDropsAllButPins(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true, intent: fixedIntent{Label: ask.NewTopic, Confidence: 0.9}})
	one := b.ask(t, "", "What should I do if I smell gas after an earthquake?")
	quake, _ := docOf(one, "Earthquake Safety")

	// Pin the first-aid document, which turn 1 did not cite: it gets the next letter.
	resp, body := b.do(t, "POST", "/v1/documents", map[string]any{"text": "unused", "source": "probe"})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	firstAid := b.docID(t, "First Aid Basics")
	resp, body = b.do(t, "PUT", "/v1/conversations/"+one.ConversationID+"/pins/"+firstAid, nil)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	pinned := decode[conversationSource](t, body)
	require.True(t, pinned.Pinned)
	require.NotEmpty(t, pinned.Letter)

	two := b.ask(t, one.ConversationID, "How do I cool a burn?") // nothing in the earthquake guide
	require.Equal(t, "new-topic", two.Intent.Label)
	srcs := b.sources(t, one.ConversationID)
	require.False(t, srcs[quake.DocID].Carried, "a new topic drops the earthquake source")
	require.Equal(t, "new-topic (turn 2)", srcs[quake.DocID].Reason)
	require.True(t, srcs[firstAid].Carried, "pins survive a new topic")
	require.Equal(t, pinned.Letter, srcs[firstAid].Letter)
	fa, ok := docOf(two, "First Aid Basics")
	require.True(t, ok, "a pinned source enters every turn")
	require.Contains(t, fa.Origins, "carry")

	resp, body = b.do(t, "GET", "/v1/conversations/"+one.ConversationID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, 2, decode[struct {
		GoalTurn int `json:"goal_turn"`
	}](t, body).GoalTurn, "the new topic marks a goal boundary")
}

func (b *testBundle) docID(t *testing.T, title string) string {
	t.Helper()
	r := b.ask(t, "", title)
	s, ok := docOf(r, title)
	require.True(t, ok, "no document titled %q", title)
	return s.DocID
}

func TestSameSourcesFavoursCarriedSources(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true, intent: fixedIntent{Label: ask.SameSources, Confidence: 0.9}})
	one := b.ask(t, "", "What should I do during earthquake shaking?")
	quake, _ := docOf(one, "Earthquake Safety")
	two := b.ask(t, one.ConversationID, "What does it say about the water heater and gas?")
	require.Equal(t, "same-sources", two.Intent.Label)
	require.Contains(t, two.Retrieval.Lists, "sources-bm25", "retrieval within the carried sources")
	require.Equal(t, quake.DocID, two.Sources[0].DocID, "the carried document comes first")
	require.Contains(t, two.Sources[0].Text, "water heater")
}

func TestPins(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	one := b.ask(t, "", "smoke alarms")
	other := b.ask(t, "", "burns")
	fire, _ := docOf(one, "Home Fire Safety")
	flood := b.docID(t, "Flood Safety | Household Preparedness Guide")
	missing := "0190f5b4-0000-7000-8000-000000000000"

	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"PUT", "/v1/conversations/" + one.ConversationID + "/pins/" + missing, 404},
		{"PUT", "/v1/conversations/" + missing + "/pins/" + flood, 404},
		{"PUT", "/v1/conversations/" + one.ConversationID + "/pins/nope", 400},
		{"DELETE", "/v1/conversations/" + one.ConversationID + "/pins/" + flood, 404}, // not a source yet
	} {
		resp, body := b.do(t, tc.method, tc.path, nil)
		require.Equal(t, tc.status, resp.StatusCode, "%s %s: %s", tc.method, tc.path, body)
	}

	resp, body := b.do(t, "PUT", "/v1/conversations/"+one.ConversationID+"/pins/"+fire.DocID, nil)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "a new pin: %s", body)
	got := decode[conversationSource](t, body)
	require.Equal(t, fire.Letter, got.Letter, "pinning a cited document keeps its letter")
	require.True(t, got.Pinned)
	resp, body = b.do(t, "PUT", "/v1/conversations/"+one.ConversationID+"/pins/"+fire.DocID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "the same pin again: %s", body)
	require.Equal(t, got, decode[conversationSource](t, body), "changes nothing")
	require.False(t, b.sources(t, other.ConversationID)[fire.DocID].Pinned, "pins are per conversation")

	// Pins in the request: the flood document enters this turn and stays.
	two := b.ask(t, one.ConversationID, "anything else?", flood)
	f, ok := docOf(two, "Flood Safety | Household Preparedness Guide")
	require.True(t, ok)
	require.Contains(t, f.Origins, "carry")
	require.True(t, b.sources(t, one.ConversationID)[flood].Pinned)

	resp, body = b.do(t, "DELETE", "/v1/conversations/"+one.ConversationID+"/pins/"+fire.DocID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.False(t, decode[conversationSource](t, body).Pinned)
	resp, body = b.do(t, "PUT", "/v1/conversations/"+one.ConversationID+"/pins/"+fire.DocID, nil)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "pinned again after an unpin: %s", body)

	resp, body = b.do(t, "POST", "/v1/ask", map[string]any{"message": "x", "pins": []string{missing}})
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s", body)
}

// A pinned document deleted afterwards: the listing says so, no later turn carries it, and the
// citations of the turns before stay exactly as they were.
func TestDeletedPinnedDocument(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	one := b.ask(t, "", "smoke alarms")
	fire, ok := docOf(one, "Home Fire Safety")
	require.True(t, ok)
	resp, body := b.do(t, "PUT", "/v1/conversations/"+one.ConversationID+"/pins/"+fire.DocID, nil)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	_, before := b.do(t, "GET", "/v1/messages/"+one.MessageID+"/citations", nil)
	require.Contains(t, string(before), fire.DocID)

	resp, body = b.do(t, "DELETE", "/v1/documents/"+fire.DocID, nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode, "%s", body)
	src := b.sources(t, one.ConversationID)[fire.DocID]
	require.True(t, src.Deleted)
	require.False(t, src.Carried, "a deleted document is not carried")
	require.True(t, src.Pinned, "the pin stands until unpinned")
	require.Equal(t, "deleted", src.Reason)

	two := b.ask(t, one.ConversationID, "smoke alarms")
	for _, s := range two.Sources {
		require.NotEqual(t, fire.DocID, s.DocID, "a deleted pinned document enters no turn")
	}
	require.True(t, b.sources(t, one.ConversationID)[fire.DocID].Deleted, "after a turn too")
	resp, body = b.do(t, "GET", "/v1/conversations/"+one.ConversationID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	for _, s := range decode[struct {
		Sources []conversationSource `json:"sources"`
	}](t, body).Sources {
		require.Equal(t, s.DocID == fire.DocID, s.Deleted, "%s", s.DocID)
	}
	_, after := b.do(t, "GET", "/v1/messages/"+one.MessageID+"/citations", nil)
	require.Equal(t, string(before), string(after), "citations are never rewritten")

	resp, body = b.do(t, "DELETE", "/v1/conversations/"+one.ConversationID+"/pins/"+fire.DocID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	got := decode[conversationSource](t, body)
	require.False(t, got.Pinned)
	require.True(t, got.Deleted)
	resp, body = b.do(t, "PUT", "/v1/conversations/"+one.ConversationID+"/pins/"+fire.DocID, nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s", body)
}

// Two turns of one conversation at once: the turn transaction locks the conversation, so they
// apply one after the other and the sources stay consistent.
func TestConcurrentTurnsOfOneConversation(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	one := b.ask(t, "", "smoke alarms")

	var wg sync.WaitGroup
	turns := make([]int, 2)
	for i, q := range []string{"burns and cooling water", "flood water and roads"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			turns[i] = b.ask(t, one.ConversationID, q).Turn
		}()
	}
	wg.Wait()
	slices.Sort(turns)
	require.Equal(t, []int{2, 3}, turns)

	srcs := b.sources(t, one.ConversationID)
	letters := map[string]bool{}
	for _, s := range srcs {
		require.False(t, letters[s.Letter], "letter %s given twice", s.Letter)
		letters[s.Letter] = true
	}
	var next int
	conn := b.connect(t)
	defer conn.Close(context.Background())
	require.NoError(t, conn.QueryRow(context.Background(),
		"SELECT next_letter FROM conversations WHERE id = $1", one.ConversationID).Scan(&next))
	require.Equal(t, len(srcs), next, "every letter handed out belongs to exactly one source")
	require.Equal(t, 6, b.count(t, "messages"), "three turns, two messages each")
}

// A weight of 0 turns a list off: the same follow-up that fuses the carried list and the
// focus search by default (or, with the focus off, the context search) fuses none of them when
// their weights are 0.
func TestZeroWeightTurnsListsOff(t *testing.T) {
	t.Parallel()
	drill := fixedIntent{Label: ask.DrillDown, Confidence: 0.9}
	followUp := func(b *testBundle) []string {
		one := b.ask(t, "", "What should I do if I smell gas after an earthquake?")
		return b.ask(t, one.ConversationID, "and what about aftershocks?").Retrieval.Lists
	}
	on := followUp(setup(t, options{corpus: true, intent: drill}))
	require.Contains(t, on, "carry")
	require.Contains(t, on, "focus-bm25")
	require.NotContains(t, on, "context-bm25", "the focus searches the turn: the context search steps aside")
	unfocused := followUp(setup(t, options{corpus: true, intent: drill, pipeline: func(c *ask.Config) { c.FocusWeight = 0 }}))
	require.Contains(t, unfocused, "carry")
	require.Contains(t, unfocused, "context-bm25")

	off := followUp(setup(t, options{corpus: true, intent: drill, pipeline: func(c *ask.Config) {
		c.CarryWeight, c.ContextWeight, c.FocusWeight = 0, 0, 0
	}}))
	require.Equal(t, []string{"bm25"}, off, "only the question's own search")
}
