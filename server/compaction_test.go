package server_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/intent"
)

// realIntent is the trained turn-intent classifier, as `ragd serve` wires it.
type realIntent struct{}

func (realIntent) Classify(text string, history, sources []string) ask.Intent {
	r := intent.Classify(intent.Turn{Text: text, History: history, Sources: sources})
	return ask.Intent{Label: string(r.Label), Confidence: r.Confidence}
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
