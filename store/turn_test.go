package store_test

import (
	"math"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

// A turn writes its citations in answer order with their pages (none when a citation has
// none), and its sentence markers: one the conversation already has, or an earlier one of the
// same turn, keeps its place; a later turn's markers join them.
func TestTurnWritesCitationsAndMarkers(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	res, err := s.SaveVersions(ctx, []ragd.NewVersion{version("a", "h", "a0", "a1"), version("b", "h", "b0")})
	require.NoError(t, err)
	a, b := res[0].DocID, res[1].DocID
	ca, err := s.VersionChunks(ctx, a, 1)
	require.NoError(t, err)
	cb, err := s.VersionChunks(ctx, b, 1)
	require.NoError(t, err)

	conv := uuid.Must(uuid.NewV7())
	first, err := s.Turn(ctx, ragd.ConversationRef{ID: conv, New: true}, func(*ragd.ConversationState) (*ragd.TurnWrite, error) {
		return &ragd.TurnWrite{UserMessage: "q1", Answer: "[A1] [B1] [A2]", NextLetter: 2,
			Markers: []ragd.SentenceMarker{
				{Marker: "A1", DocID: a, Sentence: "a zero"},
				{Marker: "B1", DocID: b, Sentence: "b zero"},
				{Marker: "A1", DocID: a, Sentence: "a again"}, // the same marker: the first stays
				{Marker: "A9", DocID: a, Sentence: "a zero"},  // the same sentence: the first stays
				{Marker: "A2", DocID: a, Sentence: "a one"},
			},
			Citations: []ragd.CitationWrite{
				{DocID: a, DocVersion: 1, ChunkID: ca[0].ID, Marker: "A1", Fact: "a zero", Score: 0.9, Origin: "bm25", Rank: 1, PageStart: 3, PageEnd: 4},
				{DocID: b, DocVersion: 1, ChunkID: cb[0].ID, Marker: "B1", Fact: "b zero", Score: 0.7, Origin: "bm25,vector", Rank: 2},
				{DocID: a, DocVersion: 1, ChunkID: ca[1].ID, Marker: "A2", Fact: "a one", Score: 1.0 / 3, Origin: "vector", Rank: 3},
			}}, nil
	})
	require.NoError(t, err)
	cs, err := s.MessageCitations(ctx, first.AssistantMessageID)
	require.NoError(t, err)
	require.Len(t, cs, 3)
	for i, want := range []struct {
		marker, fact, origin string
		chunk                int64
		rank, start, end     int
	}{{"A1", "a zero", "bm25", ca[0].ID, 1, 3, 4}, {"B1", "b zero", "bm25,vector", cb[0].ID, 2, 0, 0}, {"A2", "a one", "vector", ca[1].ID, 3, 0, 0}} {
		c := cs[i]
		require.Equal(t, want.marker, c.Marker)
		require.Equal(t, want.fact, c.Fact)
		require.Equal(t, want.origin, c.Origin)
		require.Equal(t, want.chunk, c.ChunkID)
		require.Equal(t, want.rank, c.Rank)
		require.Equal(t, []int{want.start, want.end}, []int{c.PageStart, c.PageEnd})
		require.Equal(t, first.AssistantMessageID, c.MessageID)
		require.Equal(t, conv, c.ConversationID)
	}
	require.Less(t, cs[0].ID, cs[1].ID, "ids follow the answer's order")
	require.Less(t, cs[1].ID, cs[2].ID)
	require.InDelta(t, float64(float32(1.0/3)), cs[2].Score, 0, "scores are stored as real")
	require.False(t, math.IsNaN(cs[0].Score))

	_, err = s.Turn(ctx, ragd.ConversationRef{ID: conv}, func(st *ragd.ConversationState) (*ragd.TurnWrite, error) {
		return &ragd.TurnWrite{UserMessage: "q2", Answer: "[A1] [B2]", NextLetter: 3,
			Markers: []ragd.SentenceMarker{
				{Marker: "A1", DocID: a, Sentence: "a zero"}, // kept from turn 1
				{Marker: "B2", DocID: b, Sentence: "b later"},
			}}, nil
	})
	require.NoError(t, err)
	st, err := s.ConversationState(ctx, conv)
	require.NoError(t, err)
	require.Equal(t, []ragd.SentenceMarker{
		{Marker: "A1", DocID: a, Sentence: "a zero", FirstTurn: 1},
		{Marker: "A2", DocID: a, Sentence: "a one", FirstTurn: 1},
		{Marker: "B1", DocID: b, Sentence: "b zero", FirstTurn: 1},
		{Marker: "B2", DocID: b, Sentence: "b later", FirstTurn: 2},
	}, st.Markers)
}
