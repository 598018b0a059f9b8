package server_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ask"
)

// A turn that reads only the latest messages (here the last two: one turn) builds the bundle
// that reading every message builds: earlier goals come as their capsules, the current goal's
// first message is read too, and the invariant said at turn 2, long out of the window, is in
// the rules. A conversation from before the invariants were kept (NULL) is read whole once and
// keeps them from then on.
func TestHistoryWindow(t *testing.T) {
	t.Parallel()
	window := func(n int) func(*ask.Config) { return func(c *ask.Config) { c.HistoryMessages = n } }
	narrow := setup(t, options{corpus: true, intent: realIntent{}, pipeline: window(2)})
	whole := setup(t, options{corpus: true, intent: realIntent{}, pipeline: window(0)})
	got, want := narrow.chat(t, len(threeGoals)), whole.chat(t, len(threeGoals))
	for i := range got {
		require.Equal(t, want[i].Goal, got[i].Goal, "turn %d starts a goal alike", i+1)
		require.Equal(t, want[i].Context.Invariants, got[i].Context.Invariants, "turn %d", i+1)
		require.Equal(t, want[i].Context.Text, got[i].Context.Text, "turn %d's bundle", i+1)
	}
	last := got[len(got)-1].Context
	require.Len(t, section(last.Text, "capsules"), 4, "the restaurant's and the hotel's capsules")
	require.Contains(t, strings.Join(section(last.Text, "rules"), "\n"), "must not sit near the kitchen",
		"turn 2's invariant, out of the window since turn 4")

	// As if from before migration 011: the next turn reads every message, and keeps them again.
	conv := got[0].ConversationID
	narrow.exec(t, "UPDATE conversations SET invariants = NULL WHERE id = '"+conv+"'")
	r := narrow.askWith(t, map[string]any{"conversation_id": conv, "message": "Is the taxi booked?", "mode_hint": "task"})
	require.Contains(t, strings.Join(section(r.Context.Text, "rules"), "\n"), "must not sit near the kitchen")
	require.Equal(t, 1, narrow.countWhere(t, "conversations", "id = '"+conv+"' AND jsonb_array_length(invariants) > 0"))
	r = narrow.askWith(t, map[string]any{"conversation_id": conv, "message": "And the restaurant?", "mode_hint": "task"})
	require.Contains(t, strings.Join(section(r.Context.Text, "rules"), "\n"), "must not sit near the kitchen")
}
