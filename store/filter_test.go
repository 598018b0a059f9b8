package store_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

// The audit exports and the experiment report take every condition of their filters together:
// each condition's parameter is numbered in turn, and each condition narrows the rows.
func TestFiltersCombine(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	res, err := s.SaveVersions(ctx, []ragd.NewVersion{version("a", "h", "a0"), version("b", "h", "b0")})
	require.NoError(t, err)
	a, b := res[0].DocID, res[1].DocID
	ca, err := s.VersionChunks(ctx, a, 1)
	require.NoError(t, err)
	cb, err := s.VersionChunks(ctx, b, 1)
	require.NoError(t, err)

	conv, other := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	turn := func(ref ragd.ConversationRef) uuid.UUID {
		r, err := s.Turn(ctx, ref, func(*ragd.ConversationState) (*ragd.TurnWrite, error) {
			return &ragd.TurnWrite{UserMessage: "q", Answer: "[A1] [B1]", NextLetter: 2, Citations: []ragd.CitationWrite{
				{DocID: a, DocVersion: 1, ChunkID: ca[0].ID, Marker: "A1", Fact: "a zero", Score: 1, Origin: "bm25", Rank: 1},
				{DocID: b, DocVersion: 1, ChunkID: cb[0].ID, Marker: "B1", Fact: "b zero", Score: 1, Origin: "bm25", Rank: 2},
			}}, nil
		})
		require.NoError(t, err)
		return r.AssistantMessageID
	}
	answers := []uuid.UUID{turn(ragd.ConversationRef{ID: conv, New: true}), turn(ragd.ConversationRef{ID: other, New: true}),
		turn(ragd.ConversationRef{ID: conv}), turn(ragd.ConversationRef{ID: conv})}

	citations := func(f ragd.CitationFilter) []ragd.Citation {
		var out []ragd.Citation
		require.NoError(t, s.Citations(ctx, f, func(c ragd.Citation) error {
			out = append(out, c)
			return nil
		}))
		return out
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
		var out []ragd.Feedback
		require.NoError(t, s.Feedback(ctx, f, func(fb ragd.Feedback) error {
			out = append(out, fb)
			return nil
		}))
		return out
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
