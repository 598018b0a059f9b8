package store_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

// RecentMessages reads a conversation's last messages, with its current goal's first user
// message when that is older, in Messages' order; a window of 0 reads them all.
func TestRecentMessages(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	id := uuid.Must(uuid.NewV7())
	for turn := 1; turn <= 6; turn++ {
		_, err := s.Turn(ctx, ragd.ConversationRef{ID: id, New: turn == 1}, func(*ragd.ConversationState) (*ragd.TurnWrite, error) {
			return &ragd.TurnWrite{UserMessage: fmt.Sprintf("q%d", turn), Answer: fmt.Sprintf("a%d", turn)}, nil
		})
		require.NoError(t, err)
	}
	texts := func(ms []ragd.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Content+m.Answer)
		}
		return out
	}
	all, err := s.Messages(ctx, id)
	require.NoError(t, err)
	require.Len(t, all, 12)

	got, err := s.RecentMessages(ctx, id, 3, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"a5", "q6", "a6"}, texts(got))

	got, err = s.RecentMessages(ctx, id, 3, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"q2", "a5", "q6", "a6"}, texts(got), "the goal's first message comes first")

	got, err = s.RecentMessages(ctx, id, 4, 5)
	require.NoError(t, err)
	require.Equal(t, []string{"q5", "a5", "q6", "a6"}, texts(got), "a goal start inside the window is read once")

	got, err = s.RecentMessages(ctx, id, 0, 0)
	require.NoError(t, err)
	require.Equal(t, all, got)

	other := ragd.WithPrincipal(ctx, ragd.Principal{Tenant: uuid.Must(uuid.NewV7())})
	got, err = s.RecentMessages(other, id, 3, 1)
	require.NoError(t, err)
	require.Empty(t, got, "another tenant reads nothing")
}

// A turn writes the conversation's sticky invariants in its transaction; a turn without them
// keeps them, and a conversation that never had them reads nil.
func TestTurnWritesSticky(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	id := uuid.Must(uuid.NewV7())
	sticky := []byte(`[{"Type":"hard_constraint","Text":"no peanuts","Turn":1,"MessageID":"current","Priority":900}]`)
	_, err := s.Turn(ctx, ragd.ConversationRef{ID: id, New: true}, func(st *ragd.ConversationState) (*ragd.TurnWrite, error) {
		require.Nil(t, st.Sticky)
		return &ragd.TurnWrite{UserMessage: "q", Answer: "a"}, nil
	})
	require.NoError(t, err)
	st, err := s.ConversationState(ctx, id)
	require.NoError(t, err)
	require.Nil(t, st.Sticky, "not kept yet")

	_, err = s.Turn(ctx, ragd.ConversationRef{ID: id}, func(*ragd.ConversationState) (*ragd.TurnWrite, error) {
		return &ragd.TurnWrite{UserMessage: "no peanuts", Answer: "a", Sticky: sticky}, nil
	})
	require.NoError(t, err)
	_, err = s.Turn(ctx, ragd.ConversationRef{ID: id}, func(st *ragd.ConversationState) (*ragd.TurnWrite, error) {
		require.JSONEq(t, string(sticky), string(st.Sticky), "the locked state has them")
		return &ragd.TurnWrite{UserMessage: "q", Answer: "a"}, nil
	})
	require.NoError(t, err)
	st, err = s.ConversationState(ctx, id)
	require.NoError(t, err)
	require.JSONEq(t, string(sticky), string(st.Sticky), "a turn without them keeps them")
}
