package compact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/token"
)

// conversation builds messages from alternating user and assistant texts, turn by turn; a user
// text starting with "*" starts a goal.
func conversation(texts ...string) []Message {
	var out []Message
	for i, t := range texts {
		m := Message{Turn: i/2 + 1, Role: "user", Text: t}
		if i%2 == 1 {
			m.Role = "assistant"
		}
		if strings.HasPrefix(t, "*") {
			m.Text, m.GoalStart = t[1:], true
		}
		out = append(out, m)
	}
	return out
}

// threeGoals is a restaurant, then a hotel, then a taxi between them.
var threeGoals = conversation(
	"I need a cheap Italian restaurant in the centre.", "Pasta Palace is a cheap Italian place in the centre. Shall I book it?",
	"Yes, book a table for 2 people at 19:00 on Friday.", "I have booked a table at Pasta Palace for 2 people at 19:00 on Friday. Your reference number is PP4521X.",
	"*I also need a hotel with free parking in the north.", "The Acorn Guest House has free parking. How many nights?",
	"3 nights for 2 people from Friday, please.", "Booked! The Acorn Guest House, 3 nights from Friday. Reference: AG77Q2.",
	"*Can I also get a taxi from the hotel to the restaurant?", "What time would you like to leave?",
	"I want to leave by 18:30.",
)

func TestGoals(t *testing.T) {
	t.Parallel()
	goals := Goals(threeGoals)
	require.Len(t, goals, 3)
	require.Equal(t, []int{1, 3, 5}, []int{goals[0].First, goals[1].First, goals[2].First})
	require.Equal(t, []int{2, 4, 6}, []int{goals[0].Last, goals[1].Last, goals[2].Last})
	require.Len(t, goals[2].Messages, 3)
	require.Empty(t, Goals(nil))

	caps := []ragd.Capsule{{First: 1, Last: 2, Text: "one"}}
	missing := Missing(threeGoals, caps)
	require.Len(t, missing, 1, "goal 3 is finished and has no capsule; goal 5 is not finished")
	require.Equal(t, 3, missing[0].First)
}

func TestValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"Yes, book a table for 2 people at 19:00 on Friday.", []string{"people=2", "time=19:00", "day=friday"}},
		{"I need a train from Cambridge to London Kings Cross, leaving after 11:45 on Tuesday.",
			[]string{"from=Cambridge", "to=London Kings Cross", "leave=after 11:45", "day=tuesday"}},
		{"I want to arrive by 7:30pm.", []string{"arrive=by 7:30pm"}},
		{"Your reference number is PP4521X.", []string{"ref=PP4521X"}},
		{"I have booked the Acorn Guest House for 3 nights.", []string{"name=Acorn Guest House", "nights=3", "status=booked"}},
		{"I'm sorry, the booking was unsuccessful: they are fully booked.", []string{"status=failed"}},
		{"I'm looking for a place called clare college.", []string{"name=clare college"}},
		{"Something in the east part of town, please.", []string{"in=east"}},
		{"There are 4 hotels in the same area. It is at 74 Mill Road.", nil},
		{"The train leaves at 17:30 monday", []string{"leave=17:30", "day=monday"}},
		{"I recommend Frankie and Bennys for Italian food.", []string{"name=Frankie and Bennys"}},
		{"Can I book it for 12 June? A table for 4.", []string{"date=12 June", "for=4"}},
		{"thank you, goodbye", nil},
	} {
		var got []string
		for _, v := range Values(tc.text) {
			got = append(got, v.Key+"="+v.Text)
		}
		// Names may come with more than the test cares about (Italian): the wanted values must be
		// there, in order, and no other value of a non-name key.
		var checked []string
		for _, g := range got {
			if strings.HasPrefix(g, "name=") && !contains(tc.want, g) {
				continue
			}
			checked = append(checked, g)
		}
		require.Equal(t, tc.want, checked, "%q: %v", tc.text, got)
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func TestCompress(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"I need to book a hotel in the east that has 4 stars .":      "book hotel east 4 stars",
		"Thank you , goodbye !":                                      "",
		"I am looking for the alexander bed and breakfast .":         "alexander bed and breakfast",
		"I don't need internet, but I do need free parking.":         "not internet free parking",
		"Tell me about the whipple museum of the history of science": "whipple museum of the history of science",
	} {
		require.Equal(t, want, compress(text), text)
	}
}

func TestExtract(t *testing.T) {
	t.Parallel()
	goal := Goals(threeGoals)[0]
	c := Extract(goal.Messages, 400)
	require.True(t, strings.HasPrefix(c, "goal (turns 1-2): "), c)
	for _, v := range []string{"cheap italian restaurant", "in=centre", "name=Italian / Pasta Palace", "people=2", "time=19:00", "day=friday",
		"ref=PP4521X", "status=booked"} {
		require.Contains(t, c, v)
	}
	full := 0
	for _, m := range goal.Messages {
		full += MessageTokens(m)
	}
	require.Less(t, token.Count(c), full, "a capsule is shorter than its goal")

	for _, max := range []int{30, 12, 3} {
		short := Extract(goal.Messages, max)
		require.LessOrEqual(t, token.Count(short), max, "%d: %q", max, short)
		require.NotEmpty(t, short)
	}
	require.Contains(t, Extract(goal.Messages, 30), "ref=PP4521X", "values outlast the request line")
	require.Empty(t, Extract(goal.Messages, 0))
	require.Empty(t, Extract(nil, 100))
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	got := Outcomes(Goals(threeGoals)[0].Messages)
	require.Len(t, got, 1)
	require.True(t, strings.HasPrefix(got[0], "turn 2: "), got[0])
	require.Contains(t, got[0], "ref=PP4521X")
	require.Contains(t, got[0], "status=booked")
	require.Empty(t, Outcomes(Goals(threeGoals)[2].Messages))
}

func TestStrategies(t *testing.T) {
	t.Parallel()
	goals := Goals(threeGoals)
	caps := []ragd.Capsule{
		{First: 1, Last: 2, Text: Extract(goals[0].Messages, 400)},
		{First: 3, Last: 4, Text: Extract(goals[1].Messages, 400)},
	}
	turns := func(w Window) []string {
		var out []string
		for _, m := range w.Recent {
			out = append(out, fmt.Sprintf("%d%c", m.Turn, m.Role[0]))
		}
		return out
	}

	w := FullContext{}.Window(threeGoals, caps)
	require.Len(t, w.Recent, len(threeGoals))
	require.Empty(t, w.Capsules)

	w = Sliding{Messages: 4}.Window(threeGoals, caps)
	require.Equal(t, []string{"4u", "4a", "5u", "5a", "6u"}[1:], turns(w))
	require.Equal(t, len(threeGoals)-4, w.Dropped)
	w = Sliding{Tokens: 1}.Window(threeGoals, caps)
	require.Equal(t, []string{"6u"}, turns(w), "the latest message stays even when it alone is over")

	w = Boundaries{}.Window(threeGoals, caps)
	require.Equal(t, []string{"5u", "5a", "6u"}, turns(w))
	require.Equal(t, caps, w.Capsules)
	w = Boundaries{}.Window(threeGoals, caps[1:])
	require.Equal(t, []string{"1u", "1a", "2u", "2a", "5u", "5a", "6u"}, turns(w), "a goal without a capsule stays verbatim")

	all := 0
	for _, m := range threeGoals {
		all += MessageTokens(m)
	}
	w = Budget{Tokens: all}.Window(threeGoals, caps)
	require.Len(t, w.Recent, len(threeGoals), "everything fits: nothing compacted")
	require.Empty(t, w.Capsules)
	w = Budget{Tokens: all - 10}.Window(threeGoals, caps)
	require.Equal(t, []string{"3u", "3a", "4u", "4a", "5u", "5a", "6u"}, turns(w), "the oldest goal goes first")
	require.Equal(t, caps[:1], w.Capsules)
	w = Budget{Tokens: 1}.Window(threeGoals, caps)
	require.Equal(t, []string{"5u", "5a", "6u"}, turns(w), "the current goal is never compacted")
	require.Len(t, w.Capsules, 2)

	// Read through a window of the latest messages: the goals before it are their capsules, and
	// a goal the window cuts into is its capsule's too.
	for _, window := range [][]Message{threeGoals[4:], threeGoals[6:], threeGoals[3:]} {
		w = Boundaries{}.Window(window, caps)
		require.Equal(t, []string{"5u", "5a", "6u"}, turns(w), "from turn %d", window[0].Turn)
		require.Equal(t, caps, w.Capsules, "from turn %d", window[0].Turn)
		require.Empty(t, Missing(window, caps), "from turn %d", window[0].Turn)
	}
	w = Budget{Tokens: 1}.Window(threeGoals[6:], caps)
	require.Equal(t, []string{"5u", "5a", "6u"}, turns(w))
	require.Equal(t, caps, w.Capsules)
	missing := Missing(threeGoals[3:], nil)
	require.Len(t, missing, 2)
	require.Equal(t, []int{2, 3}, []int{missing[0].First, missing[1].First},
		"a goal the window cuts into, without a capsule, is missing from where the window starts")
}

func TestNew(t *testing.T) {
	t.Parallel()
	for _, name := range Names {
		c := DefaultConfig()
		c.Strategy = name
		s, err := New(c)
		require.NoError(t, err)
		require.Equal(t, name, s.Name())
	}
	c := DefaultConfig()
	require.Equal(t, GoalBoundary, c.Strategy)
	c.Strategy, c.WindowMessages, c.BudgetTokens, c.CapsuleTokens = "rolling", 0, 0, -1
	err := c.Validate()
	require.ErrorIs(t, err, ragd.ErrInvalid)
	require.ErrorContains(t, err, `Strategy: "rolling" is not one of`)
	require.ErrorContains(t, err, "WindowMessages: must be at least 1")
	require.ErrorContains(t, err, "BudgetTokens: must be at least 1")
	require.ErrorContains(t, err, "CapsuleTokens: must not be negative")
	c = DefaultConfig()
	c.CapsuleTokens = 0
	require.NoError(t, c.Validate(), "0 makes no capsules")
}

func TestShift(t *testing.T) {
	t.Parallel()
	goal := Goals(threeGoals)[0].Messages
	d := Shift{}
	for _, tc := range []struct {
		name     string
		text     string
		newTopic float64
		want     bool
	}{
		{"a new request the classifier calls new", "I also need a hotel with free parking in the north.", 0.9, true},
		{"the classifier unsure", "I also need a hotel with free parking in the north.", 0.6, false},
		{"values only", "Make it 3 people on Saturday at 20:00 please.", 0.95, false},
		{"small talk", "Thank you so much, goodbye!", 0.95, false},
		{"about what the goal mentioned", "Is Pasta Palace in the centre?", 0.9, false},
		{"no classifier, another request", "Can you also find me a museum?", -1, true},
		{"no classifier, a request", "Can you find me a museum?", -1, false},
	} {
		b := d.Detect(Signals{Text: tc.text, Goal: goal, NewTopic: tc.newTopic})
		require.Equal(t, tc.want, b.New, "%s: %+v", tc.name, b)
		require.GreaterOrEqual(t, b.Confidence, 0.0)
		require.LessOrEqual(t, b.Confidence, 1.0)
		require.NotEmpty(t, b.Reason)
	}
	b := d.Detect(Signals{Text: "hello", NewTopic: -1})
	require.True(t, b.New, "a first message starts the first goal")
	b = d.Detect(Signals{Text: "I also need a taxi please", Goal: goal, NewTopic: 0.9, Focus: []string{"the taxi"}})
	require.False(t, b.New, "what the focus already holds is not new")
	require.True(t, Shift{Threshold: 0.95}.Detect(Signals{Text: "first", NewTopic: 0}).New)
	require.False(t, Shift{Threshold: 0.95}.Detect(Signals{Text: "I also need a hotel", Goal: goal, NewTopic: 0.9}).New)
}
