package store_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

func TestExperimentSlotsAndBaselines(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	globex, err := s.EnsureTenant(ctx, "globex")
	require.NoError(t, err)
	acme := ragd.WithPrincipal(ctx, ragd.Principal{Tenant: ragd.DefaultTenant, Role: ragd.RoleAdmin})
	other := ragd.WithPrincipal(ctx, ragd.Principal{Tenant: globex, Role: ragd.RoleAdmin})
	for want := int64(0); want < 3; want++ {
		got, err := s.NextExperimentSlot(acme, "budgets")
		require.NoError(t, err)
		require.Equal(t, want, got, "slots count per tenant and design")
	}
	got, err := s.NextExperimentSlot(other, "budgets")
	require.NoError(t, err)
	require.Zero(t, got, "another tenant has its own slots")
	got, err = s.NextExperimentSlot(acme, "recent-window")
	require.NoError(t, err)
	require.Zero(t, got)

	require.NoError(t, s.SaveModeBaseline(acme, []byte(`{"distribution":{"TASK":1},"source":"set"}`)))
	require.NoError(t, s.SaveModeBaseline(acme, []byte(`{"distribution":{"TASK":2},"source":"set"}`)))
	require.Error(t, s.SaveModeBaseline(acme, []byte(`{`)))
	bs, err := s.ModeBaselines(acme)
	require.NoError(t, err)
	require.Len(t, bs, 1)
	require.JSONEq(t, `{"distribution":{"TASK":2},"source":"set"}`, string(bs[ragd.DefaultTenant]), "the latest replaces")
	bs, err = s.ModeBaselines(other)
	require.NoError(t, err)
	require.Empty(t, bs, "another tenant sees no baseline of the first")
	require.NoError(t, s.SaveModeBaseline(other, []byte(`{"distribution":{"LEARNING":1},"source":"set"}`)))
	bs, err = s.ModeBaselines(ragd.AllTenants(ctx))
	require.NoError(t, err)
	var tenants []uuid.UUID
	for k := range bs {
		tenants = append(tenants, k)
	}
	require.ElementsMatch(t, []uuid.UUID{ragd.DefaultTenant, globex}, tenants, "maintenance reads every tenant's")
}

// The audit exports and the experiment report take every condition of their filters together:
// each condition's parameter is numbered in turn, and each condition narrows the rows.
func TestFiltersCombine(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	ca, cb := citable(t, ctx, s)
	a := ca[0].DocID

	conv, other := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	turn := func(ref ragd.ConversationRef) uuid.UUID {
		r, err := s.Turn(ctx, ref, func(*ragd.ConversationState) (*ragd.TurnWrite, error) {
			return &ragd.TurnWrite{UserMessage: "q", Answer: "[A1] [B1]", NextLetter: 2, Citations: []ragd.CitationWrite{
				{DocID: a, DocVersion: 1, ChunkID: ca[0].ID, Marker: "A1", Fact: "a zero", Score: 1, Origin: "bm25", Rank: 1},
				{DocID: cb[0].DocID, DocVersion: 1, ChunkID: cb[0].ID, Marker: "B1", Fact: "b zero", Score: 1, Origin: "bm25", Rank: 2},
			}}, nil
		})
		require.NoError(t, err)
		return r.AssistantMessageID
	}
	answers := []uuid.UUID{turn(ragd.ConversationRef{ID: conv, New: true}), turn(ragd.ConversationRef{ID: other, New: true}),
		turn(ragd.ConversationRef{ID: conv}), turn(ragd.ConversationRef{ID: conv})}

	citations := func(f ragd.CitationFilter) []ragd.Citation {
		return collect(t, func(fn func(ragd.Citation) error) error { return s.Citations(ctx, f, fn) })
	}
	// In id order: a and b of conv's first turn, of other's, of conv's second and of its third.
	c := citations(ragd.CitationFilter{})
	require.Len(t, c, 8)
	got := citations(ragd.CitationFilter{ConversationID: conv, DocID: a, From: c[2].CreatedAt, To: c[6].CreatedAt, AfterID: c[0].ID})
	require.Equal(t, []ragd.Citation{c[4]}, got, "conversation, document, from, to and after together")
	got = citations(ragd.CitationFilter{ConversationID: conv, AfterID: c[4].ID, Limit: 2})
	require.Equal(t, []ragd.Citation{c[5], c[6]}, got)

	for i, rating := range []string{ragd.RatingUp, ragd.RatingDown, ragd.RatingDown, ragd.RatingUp} {
		_, err := s.SaveFeedback(ctx, ragd.NewFeedback{MessageID: answers[i], Rating: rating})
		require.NoError(t, err)
	}
	feedback := func(f ragd.FeedbackFilter) []ragd.Feedback {
		return collect(t, func(fn func(ragd.Feedback) error) error { return s.Feedback(ctx, f, fn) })
	}
	f := feedback(ragd.FeedbackFilter{})
	require.Len(t, f, 4)
	got2 := feedback(ragd.FeedbackFilter{ConversationID: conv, From: f[1].UpdatedAt, To: f[3].UpdatedAt})
	require.Equal(t, []ragd.Feedback{f[2]}, got2, "conversation, from and to together")
	got2 = feedback(ragd.FeedbackFilter{ConversationID: conv, AfterID: f[0].ID, Limit: 1})
	require.Equal(t, []ragd.Feedback{f[2]}, got2)

	stats, err := s.ExperimentStats(ctx, ragd.ExperimentFilter{})
	require.NoError(t, err)
	require.Equal(t, []ragd.ArmStratum{{Turns: 4, Conversations: 2, Rated: 4, Up: 2, Down: 2}}, stats, "answers only")
	msgs, err := s.Messages(ctx, conv)
	require.NoError(t, err)
	require.Len(t, msgs, 6)
	stats, err = s.ExperimentStats(ctx, ragd.ExperimentFilter{From: msgs[3].CreatedAt, To: msgs[5].CreatedAt})
	require.NoError(t, err)
	require.Equal(t, []ragd.ArmStratum{{Turns: 1, Conversations: 1, Rated: 1, Down: 1}}, stats, "conv's second answer")
}
