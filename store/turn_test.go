package store_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/store"
)

// citable saves two documents for turns to cite, a (chunks a0, a1) and b (chunk b0), and
// returns their chunks.
func citable(t *testing.T, ctx context.Context, s *store.Store) (ca, cb []ragd.Chunk) {
	t.Helper()
	res, err := s.SaveVersions(ctx, []ragd.NewVersion{version("a", "h", "a0", "a1"), version("b", "h", "b0")})
	require.NoError(t, err)
	ca, err = s.VersionChunks(ctx, res[0].DocID, 1)
	require.NoError(t, err)
	cb, err = s.VersionChunks(ctx, res[1].DocID, 1)
	require.NoError(t, err)
	return ca, cb
}

// collect reads every row an export selects: each(fn) calls fn per row.
func collect[T any](t *testing.T, each func(fn func(T) error) error) []T {
	t.Helper()
	var out []T
	require.NoError(t, each(func(v T) error {
		out = append(out, v)
		return nil
	}))
	return out
}

// A turn writes its citations in answer order with their pages (none when a citation has
// none), and its sentence markers: one the conversation already has, or an earlier one of the
// same turn, keeps its place; a later turn's markers join them.
func TestTurnWritesCitationsAndMarkers(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	ca, cb := citable(t, ctx, s)
	a, b := ca[0].DocID, cb[0].DocID

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

// A turn writes the conversation's sources in one statement; the rows must be exactly what one
// upsert per source wrote (the statement before it, run here by hand on a second conversation
// with the same sources): scores rounded to real the same way, cited chunk ids, facts, times,
// a document listed twice.
func TestTurnWritesSourcesAsOneUpsertEach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx := dbtest.TestTx(t)
	s := store.New(tx)
	res, err := s.SaveVersions(ctx, []ragd.NewVersion{version("a", "h", "a0"), version("b", "h", "b0"), version("c", "h", "c0")})
	require.NoError(t, err)
	a, b, c := res[0].DocID, res[1].DocID, res[2].DocID
	t1 := time.Date(2026, 11, 24, 14, 0, 0, 123456789, time.UTC)
	t2 := t1.Add(90*time.Second + 999)
	turns := [][]ragd.ConversationSource{{
		{DocID: a, Marker: "A", CarryScore: 0.1, Carried: true, FirstTurn: 1, LastTurn: 1, LastUsedAt: t1,
			CitedChunkIDs: []int64{3, 1 << 62, 42},
			Facts:         []ragd.Fact{{Marker: "A1", Text: "naïve \"quoted\" \u2028 <b>&", ChunkID: 1<<53 + 1, Score: 0.1 + 0.2}},
			Reason:        "retrieved"},
		{DocID: b, Marker: "B", CarryScore: 1.0 / 3, Pinned: true, Carried: true, FirstTurn: 1, LastTurn: 1, LastUsedAt: t1},
	}, {
		{DocID: a, Marker: "A", CarryScore: 1e-8, Carried: false, InactiveTurns: 1, FirstTurn: 1, LastTurn: 1, LastUsedAt: t1,
			CitedChunkIDs: []int64{}, Facts: []ragd.Fact{}, Reason: "dropped: new topic at turn 2"},
		{DocID: b, Marker: "B", CarryScore: math.MaxFloat32, Pinned: true, Carried: true, FirstTurn: 1, LastTurn: 2, LastUsedAt: t2,
			CitedChunkIDs: []int64{7}, Reason: "pinned",
			Facts: []ragd.Fact{{Marker: "B1", Text: "tab\there, emoji 🙂, \\ and more", ChunkID: 7, Score: 1e-300}}},
		{DocID: c, Marker: "C", CarryScore: 0.7, Carried: true, FirstTurn: 2, LastTurn: 2, LastUsedAt: t2, Reason: "retrieved"},
		{DocID: c, Marker: "C", CarryScore: 2.0 / 3, Carried: true, FirstTurn: 3, LastTurn: 2, LastUsedAt: t2, Reason: "twice"},
	}}
	one, two := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	for i, srcs := range turns {
		_, err := s.Turn(ctx, ragd.ConversationRef{ID: one, New: i == 0}, func(*ragd.ConversationState) (*ragd.TurnWrite, error) {
			return &ragd.TurnWrite{UserMessage: "q", Answer: "a", NextLetter: 3, Sources: srcs}, nil
		})
		require.NoError(t, err)
		_, err = s.Turn(ctx, ragd.ConversationRef{ID: two, New: i == 0}, func(*ragd.ConversationState) (*ragd.TurnWrite, error) {
			return &ragd.TurnWrite{UserMessage: "q", Answer: "a", NextLetter: 3}, nil
		})
		require.NoError(t, err)
		for _, src := range srcs {
			facts := src.Facts
			if facts == nil {
				facts = []ragd.Fact{}
			}
			f, err := json.Marshal(facts)
			require.NoError(t, err)
			ids := src.CitedChunkIDs
			if ids == nil {
				ids = []int64{}
			}
			_, err = tx.Exec(ctx, `
				INSERT INTO conversation_sources (conversation_id, doc_id, marker, carry_score, pinned, carried,
				       inactive_turns, first_turn, last_turn, last_used_at, cited_chunk_ids, facts, reason)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
				ON CONFLICT (conversation_id, doc_id) DO UPDATE SET
				       carry_score = excluded.carry_score, pinned = excluded.pinned, carried = excluded.carried,
				       inactive_turns = excluded.inactive_turns, last_turn = excluded.last_turn,
				       last_used_at = excluded.last_used_at, cited_chunk_ids = excluded.cited_chunk_ids,
				       facts = excluded.facts, reason = excluded.reason`,
				two, src.DocID, src.Marker, src.CarryScore, src.Pinned, src.Carried, src.InactiveTurns,
				src.FirstTurn, src.LastTurn, src.LastUsedAt, ids, f, src.Reason)
			require.NoError(t, err)
		}
	}
	rows := func(conv uuid.UUID) []string {
		r, err := tx.Query(ctx, `SELECT concat_ws(' | ', doc_id, marker, carry_score, float4send(carry_score), pinned, carried,
			inactive_turns, first_turn, last_turn, last_used_at, cited_chunk_ids, facts, reason, tenant_id)
			FROM conversation_sources WHERE conversation_id = $1 ORDER BY doc_id`, conv)
		require.NoError(t, err)
		out, err := pgx.CollectRows(r, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	got := rows(one)
	require.Len(t, got, 3)
	require.Equal(t, rows(two), got)

	st, err := s.ConversationState(ctx, one)
	require.NoError(t, err)
	require.Len(t, st.Sources, 3)
	byDoc := map[uuid.UUID]ragd.ConversationSource{}
	for _, src := range st.Sources {
		byDoc[src.DocID] = src
	}
	require.Equal(t, float64(float32(1e-8)), byDoc[a].CarryScore)
	require.Equal(t, float64(float32(math.MaxFloat32)), byDoc[b].CarryScore)
	require.Equal(t, []int64{7}, byDoc[b].CitedChunkIDs)
	require.Equal(t, float64(float32(2.0/3)), byDoc[c].CarryScore, "a document listed twice ends as the last entry says")
	require.Equal(t, 2, byDoc[c].FirstTurn, "first seen in the first entry's turn")
	require.Equal(t, "twice", byDoc[c].Reason)
	require.True(t, t2.Truncate(time.Microsecond).Equal(byDoc[c].LastUsedAt))
}
