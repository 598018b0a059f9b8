package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/intent"
	"github.com/ragd/ragd/llm"
)

// realIntent is the trained turn-intent classifier, as `ragd serve` wires it.
type realIntent struct{}

func (realIntent) Classify(t ask.IntentInput) ask.Intent {
	r := intent.Classify(intent.Turn{Text: t.Text, History: t.History, Sources: t.Sources, Focus: t.Focus, Titles: t.Titles})
	in := ask.Intent{Label: string(r.Label), Confidence: r.Confidence}
	if r.Raw == intent.NewTopic {
		in.NewTopic = r.Probs[intent.NewTopic]
	}
	return in
}

// threeGoals is a chat about a restaurant, then a hotel, then a taxi between them: each user
// message with the reply the chat UI showed for it.
var threeGoals = []struct{ user, reply string }{
	{"I'm looking for a cheap Italian restaurant in the centre.",
		"Pasta Palace is a cheap Italian restaurant in the centre. Shall I book a table?"},
	{"Yes please, a table for 2 people at 19:00 on Friday. We must not sit near the kitchen.",
		"Booked! Pasta Palace, 2 people, Friday at 19:00, away from the kitchen. Your reference number is PP4521X."},
	{"I also need a hotel with free parking in the north.",
		"The Acorn Guest House in the north has free parking. How many nights?"},
	{"3 nights for 2 people from Friday, please.",
		"I have booked the Acorn Guest House for 3 nights from Friday. Reference: AG77Q2."},
	{"Can you also book a taxi from the hotel to the restaurant?",
		"Of course. When should the taxi leave the hotel?"},
	{"It should leave the hotel by 18:30.", ""},
}

// chat plays the conversation up to turn n (1-based), recording each reply as a chat UI does,
// and returns every turn's response.
func (b *testBundle) chat(t *testing.T, n int, extra ...string) []askResponse {
	t.Helper()
	var out []askResponse
	conv := ""
	for i, g := range threeGoals[:n] {
		req := map[string]any{"message": g.user, "mode_hint": "task"}
		for j := 0; j+1 < len(extra); j += 2 {
			req[extra[j]] = extra[j+1]
		}
		if conv != "" {
			req["conversation_id"] = conv
		}
		r := b.askWith(t, req)
		require.Equal(t, i+1, r.Turn)
		conv = r.ConversationID
		out = append(out, r)
		if g.reply != "" && i+1 < n {
			resp, body := b.do(t, "POST", "/v1/conversations/"+conv+"/messages", map[string]any{"content": g.reply, "message_id": r.MessageID})
			require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
		}
	}
	return out
}

// section returns the lines of one section of a rendered bundle.
func section(text, name string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			in = l == "## "+name
		case in && l != "":
			out = append(out, l)
		}
	}
	return out
}

var turnLine = regexp.MustCompile(`^\[turn (\d+)\] (user|assistant): `)

// The hotel and the taxi start goals; at the last turn the bundle holds two capsules, the
// restaurant's and the hotel's, with the values they settled, and only the taxi's messages
// verbatim. The turn-2 constraint is still in the rules. Each capsule is stored once, by the
// turn that finished its goal.
func TestThreeGoalsCompactToCapsules(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true, intent: realIntent{}})
	turns := b.chat(t, len(threeGoals))

	var starts []int
	for _, r := range turns {
		if r.Goal.New && r.Turn > 1 {
			starts = append(starts, r.Turn)
		}
		require.NotEmpty(t, r.Goal.Reason)
	}
	require.Equal(t, []int{3, 5}, starts, "the hotel and the taxi start goals; nothing else does")

	last := turns[len(turns)-1].Context
	caps := section(last.Text, "capsules")
	require.Len(t, caps, 4, "two capsules of two lines each: %s", last.Text)
	restaurant := strings.Join(caps[:2], "\n")
	hotel := strings.Join(caps[2:], "\n")
	require.True(t, strings.HasPrefix(restaurant, "- goal (turns 1-2): "), restaurant)
	require.True(t, strings.HasPrefix(hotel, "- goal (turns 3-4): "), hotel)
	for _, v := range []string{"Pasta Palace", "people=2", "19:00", "friday", "ref=PP4521X", "status=booked", "cheap italian restaurant"} {
		require.Contains(t, restaurant, v, "the restaurant's capsule keeps %s", v)
	}
	for _, v := range []string{"Acorn Guest House", "nights=3", "ref=AG77Q2", "status=booked", "free parking"} {
		require.Contains(t, hotel, v, "the hotel's capsule keeps %s", v)
	}
	for _, s := range last.Sections {
		if s.Name == "capsules" {
			require.Equal(t, 2, s.Items)
		}
	}

	var window []int
	for _, l := range section(last.Text, "recent_window") {
		m := turnLine.FindStringSubmatch(l)
		require.NotNil(t, m, l)
		n, _ := strconv.Atoi(m[1])
		window = append(window, n)
	}
	require.Equal(t, []int{6, 5, 5}, window, "only the taxi's messages are verbatim, newest first")
	require.NotContains(t, strings.Join(section(last.Text, "recent_window"), "\n"), "Pasta Palace")

	rules := strings.Join(section(last.Text, "rules"), "\n")
	require.Contains(t, rules, "must not sit near the kitchen", "an invariant of a compacted goal stays")
	require.Empty(t, last.Breach)

	conv := turns[0].ConversationID
	require.Equal(t, 2, b.countWhere(t, "goal_capsules", "conversation_id = '"+conv+"'"), "one capsule per finished goal")
	require.Equal(t, 1, b.countWhere(t, "goal_capsules", "conversation_id = '"+conv+"' AND first_turn = 1 AND last_turn = 2 AND method = 'extractive'"))
	resp, body := b.do(t, "GET", "/v1/conversations/"+conv, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, 5, decode[struct {
		GoalTurn int `json:"goal_turn"`
	}](t, body).GoalTurn)

	// The same conversation in full: every message verbatim, no capsule, more tokens.
	full := setup(t, options{corpus: true, intent: realIntent{}, pipeline: func(c *ask.Config) { c.Compact.Strategy = "full" }})
	fullTurns := full.chat(t, len(threeGoals))
	fullLast := fullTurns[len(fullTurns)-1].Context
	require.Empty(t, section(fullLast.Text, "capsules"))
	require.Len(t, section(fullLast.Text, "recent_window"), 11)
	require.Less(t, tokensOf(last, "recent_window")+tokensOf(last, "capsules"), tokensOf(fullLast, "recent_window"))
}

// A capsule is written in the transaction of the turn that finishes its goal: when writing it
// fails, the turn is not recorded at all.
func TestCapsuleFailureLeavesTheTurnUnrecorded(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true, intent: realIntent{}})
	turns := b.chat(t, 2)
	b.exec(t, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON goal_capsules FOR EACH ROW EXECUTE FUNCTION refuse()`)
	messages := b.count(t, "messages")
	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"conversation_id": turns[0].ConversationID, "message": threeGoals[2].user})
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "%s", body)
	require.Equal(t, messages, b.count(t, "messages"))
	require.Zero(t, b.count(t, "goal_capsules"))
}

// countWhere counts the rows of a table that match a condition.
func (b *testBundle) countWhere(t *testing.T, table, cond string) int {
	t.Helper()
	conn := b.connect(t)
	defer conn.Close(b.ctx)
	var n int
	require.NoError(t, conn.QueryRow(b.ctx, "SELECT count(*) FROM "+table+" WHERE "+cond).Scan(&n))
	return n
}

func tokensOf(c contextResponse, name string) int {
	for _, s := range c.Sections {
		if s.Name == name {
			return s.Used
		}
	}
	return 0
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// recordingLLM is an OpenAI-compatible endpoint that keeps every prompt it is sent. A streamed
// request is an answer: it cites the first marker of the prompt's last message. A plain one is a
// capsule: a summary naming the turns it read.
type recordingLLM struct {
	*httptest.Server
	mu      sync.Mutex
	prompts [][]chatMessage
}

func newRecordingLLM(t *testing.T) *recordingLLM {
	t.Helper()
	f := &recordingLLM{}
	marker := regexp.MustCompile(`\[([A-Z]+[0-9]+)\]`)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream   bool          `json:"stream"`
			Messages []chatMessage `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.prompts = append(f.prompts, req.Messages)
		f.mu.Unlock()
		last := req.Messages[len(req.Messages)-1].Content
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"id": "s1", "object": "chat.completion", "model": "fake",
				"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]string{"role": "assistant",
					"content": fmt.Sprintf("SUMMARY of %d lines: Pasta Palace for 2 at 19:00, PP4521X", strings.Count(last, "\n"))}}}})
			return
		}
		answer := "Nothing to cite."
		if m := marker.FindStringSubmatch(last); m != nil {
			answer = fmt.Sprintf("See [%s].", m[1])
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": "fake",
			"choices": []map[string]any{{"index": 0, "delta": map[string]string{"content": answer}}}})
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", chunk)
	}))
	t.Cleanup(f.Close)
	return f
}

// answerPrompt returns the prompt of the answer to question.
func (f *recordingLLM) answerPrompt(t *testing.T, question string) []chatMessage {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.prompts {
		if strings.HasSuffix(p[len(p)-1].Content, "Question: "+question) {
			return p
		}
	}
	t.Fatalf("no answer was asked for %q", question)
	return nil
}

// ragd's own LLM answers from the context bundle: at turn 5 its prompt holds the turn-2 "must
// not" (from the rules, though turn 2 is compacted away), the capsules the LLM wrote of the
// finished goals, the taxi goal's messages and the evidence with its markers.
func TestLLMPromptIsTheBundle(t *testing.T) {
	t.Parallel()
	fake := newRecordingLLM(t)
	client, err := llm.New(llm.Config{BaseURL: fake.URL + "/v1", Model: "fake"})
	require.NoError(t, err)
	b := setup(t, options{corpus: true, intent: realIntent{}, answerer: client, summarizer: client})
	resp, body := b.do(t, "POST", "/v1/documents", map[string]any{"title": "Taxis", "format": "markdown",
		"text": "# Taxis\n\nBook a taxi a day ahead. A taxi waits ten minutes at the pick-up address."})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)

	turns := b.chat(t, 5)
	five := turns[4]
	require.NotEmpty(t, five.Sources, "the guide is found")
	require.Regexp(t, `^See \[[A-Z]+[0-9]+\]\.$`, five.Answer)

	prompt := fake.answerPrompt(t, threeGoals[4].user)
	require.Len(t, prompt, 2)
	system, user := prompt[0].Content, prompt[1].Content
	require.Contains(t, system, "Never invent markers")
	require.Contains(t, system, "We must not sit near the kitchen", "turn 2's constraint reaches turn 5's prompt")
	require.Contains(t, system, "goal (turns 1-2): SUMMARY of", "the LLM's capsule of the restaurant")
	require.Contains(t, system, "goal (turns 3-4): SUMMARY of", "and of the hotel")
	require.Contains(t, system, "[turn 5] user: "+threeGoals[4].user)
	require.NotContains(t, system, "[turn 2] user:", "the compacted turns are not in the prompt")
	require.Equal(t, five.Context.Text[:strings.Index(five.Context.Text, "## recent_window")],
		system[strings.Index(system, "## rules"):strings.Index(system, "## recent_window")], "rules and task state as the bundle has them")
	require.True(t, strings.HasPrefix(user, "Evidence:\n["+five.Sources[0].Facts[0].Marker+"] "), user)

	conv := turns[0].ConversationID
	require.Equal(t, 2, b.countWhere(t, "goal_capsules", "conversation_id = '"+conv+"' AND method = 'llm'"))
}
