package store_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/focus"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/store"
)

// A turn writes the conversation's focus in its transaction: a turn without one keeps it, a
// failed turn leaves it as it was, and another tenant cannot read it.
func TestTurnWritesFocus(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	id := uuid.Must(uuid.NewV7())
	f := focus.Focus{Turn: 1, Replies: 0, Terms: []focus.Term{
		{Text: "HOBSONS HOUSE", Kind: focus.Entity, Weight: 1, Turn: 1, Origin: focus.FromUser},
		{Text: "parking", Kind: focus.Subject, Weight: 0.5, Turn: 1, Origin: focus.FromSource},
	}}
	_, err := s.Turn(ctx, ragd.ConversationRef{ID: id, New: true}, func(st *ragd.ConversationState) (*ragd.TurnWrite, error) {
		require.Empty(t, st.Focus.Terms, "a new conversation is about nothing yet")
		return &ragd.TurnWrite{UserMessage: "Hobsons House parking?", Answer: "a", Focus: &f}, nil
	})
	require.NoError(t, err)
	st, err := s.ConversationState(ctx, id)
	require.NoError(t, err)
	require.Equal(t, f, st.Focus)

	_, err = s.Turn(ctx, ragd.ConversationRef{ID: id}, func(*ragd.ConversationState) (*ragd.TurnWrite, error) {
		return &ragd.TurnWrite{UserMessage: "q", Answer: "a"}, nil
	})
	require.NoError(t, err)
	st, err = s.ConversationState(ctx, id)
	require.NoError(t, err)
	require.Equal(t, f, st.Focus, "a turn without a focus keeps the one it had")

	boom := errors.New("boom")
	_, err = s.Turn(ctx, ragd.ConversationRef{ID: id}, func(*ragd.ConversationState) (*ragd.TurnWrite, error) {
		return nil, boom
	})
	require.ErrorIs(t, err, boom)
	st, err = s.ConversationState(ctx, id)
	require.NoError(t, err)
	require.Equal(t, f, st.Focus, "a failed turn leaves the focus as it was")

	other := ragd.WithPrincipal(ctx, ragd.Principal{Tenant: uuid.Must(uuid.NewV7())})
	_, err = s.ConversationState(other, id)
	require.ErrorIs(t, err, ragd.ErrNotFound)
}

// Titles lists the titles of the caller's tenant's documents in search, once each, with the
// chunks of all their documents.
func TestTitles(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tx := dbtest.TestTx(t)
	s := store.New(tx)
	beta, err := s.EnsureTenant(ctx, "beta")
	require.NoError(t, err)
	a := version("a", "h", "one", "two")
	a.Title = "HOBSONS HOUSE"
	b := version("b", "h", "three")
	b.Title = "HOBSONS HOUSE"
	c := version("c", "h", "four")
	c.Title = "ALLENBELL"
	gone := version("gone", "h", "five")
	gone.Title = "GONE HOTEL"
	untitled := version("untitled", "h", "six")
	untitled.Title = ""
	res, err := s.SaveVersions(ctx, []ragd.NewVersion{a, b, c, gone, untitled})
	require.NoError(t, err)
	require.NoError(t, s.DeleteDocument(ctx, res[3].DocID))
	// Another tenant's document, as its own connection would write it.
	_, err = tx.Exec(ctx, "SELECT set_config('ragd.tenant', $1, true)", beta.String())
	require.NoError(t, err)
	theirs := version("theirs", "h", "seven")
	theirs.Title = "BETA LODGE"
	_, err = s.SaveVersions(ragd.WithPrincipal(ctx, ragd.Principal{Tenant: beta}), []ragd.NewVersion{theirs})
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "SELECT set_config('ragd.tenant', '', true)")
	require.NoError(t, err)

	titles, err := s.Titles(ctx)
	require.NoError(t, err)
	require.Equal(t, []ragd.Title{{Title: "ALLENBELL", Chunks: 1}, {Title: "HOBSONS HOUSE", Chunks: 3}}, titles)
	titles, err = s.Titles(ragd.WithPrincipal(ctx, ragd.Principal{Tenant: beta}))
	require.NoError(t, err)
	require.Equal(t, []ragd.Title{{Title: "BETA LODGE", Chunks: 1}}, titles)
}
