package ask

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/fuse"
)

func scored(scores ...float64) []Candidate {
	cs := make([]Candidate, len(scores))
	for i, s := range scores {
		cs[i] = Candidate{Chunk: ragd.Chunk{ID: int64(i + 1)}, Rerank: s, Reranked: true}
	}
	return cs
}

func TestKeep(t *testing.T) {
	t.Parallel()
	cfg := Config{KeepMin: 3, KeepMax: 5, TieMargin: 0.01}
	for _, tc := range []struct {
		name   string
		scores []float64
		want   int
	}{
		{"fewer than the minimum: all", []float64{0.9, 0.8}, 2},
		{"a clear gap after the minimum", []float64{0.9, 0.8, 0.7, 0.5, 0.4}, 3},
		{"ties with the last kept come along", []float64{0.9, 0.8, 0.7, 0.695, 0.6}, 4},
		{"never past the maximum", []float64{0.9, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7}, 5},
	} {
		require.Len(t, keep(scored(tc.scores...), cfg), tc.want, tc.name)
	}
}

func TestDedupeListsVotesForPassages(t *testing.T) {
	t.Parallel()
	doc, other := uuid.New(), uuid.New()
	chunks := []ragd.Chunk{
		{ID: 1, DocID: doc, Version: 1, Ordinal: 4, Text: "adjacent a", Active: true},
		{ID: 2, DocID: doc, Version: 1, Ordinal: 5, Text: "adjacent b", Active: true},
		{ID: 3, DocID: other, Version: 1, Ordinal: 0, Text: "elsewhere", Active: true},
		{ID: 4, DocID: other, Version: 1, Ordinal: 9, Text: "left search", Active: false},
	}
	lists := []fuse.List{
		{Name: "bm25", IDs: []int64{3, 2, 4}},
		{Name: "vector", IDs: []int64{1, 3}},
	}
	groups, out := dedupeLists(chunks, lists, 60)
	// Chunks 1 and 2 are neighbours of one document: one passage, kept as chunk 1, the stronger
	// (1/61 from vector against 1/62 from bm25). Chunk 4 is no longer searchable: dropped.
	require.Equal(t, []int64{3, 1}, out[0].IDs)
	require.Equal(t, []int64{1, 3}, out[1].IDs)
	require.ElementsMatch(t, []int64{1, 2}, groups[1].Members)
	for _, f := range fuse.RRF(out, 60) {
		if f.ID == 1 {
			require.Equal(t, map[string]int{"bm25": 2, "vector": 1}, f.Ranks, "the passage gets both lists' votes")
		}
	}
}

func TestRecordAssignsLettersAndState(t *testing.T) {
	t.Parallel()
	a, b := uuid.New(), uuid.New()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := &ragd.ConversationState{
		Conversation: ragd.Conversation{ID: uuid.New(), Turn: 1, NextLetter: 1},
		Sources:      []ragd.ConversationSource{{DocID: a, Marker: "A", FirstTurn: 1, LastTurn: 1}},
	}
	sources := []Source{
		{Rank: 1, DocID: b, Version: 1, ChunkID: 20, Title: "Floods", Text: "Move to higher ground when water rises. Boil tap water after a flood.", Score: 0.9, Origins: []string{"bm25"}},
		{Rank: 2, DocID: a, Version: 1, ChunkID: 10, Title: "Quakes", Text: "Drop, cover and hold on. Check for gas leaks after the shaking.", Score: 0.5, Origins: []string{"bm25", "vector"}},
		{Rank: 3, DocID: b, Version: 1, ChunkID: 21, Title: "Floods", Text: "Never drive through flood water. Six inches of water can knock you down.", Score: 0.4, PageStart: 2, PageEnd: 3},
	}
	w := record(turnRecord{message: "what to do in a flood", sources: sources, intent: Intent{Label: DrillDown},
		perSource: 2, carry: carry.DefaultConfig(), now: now}, st)

	require.Equal(t, "B", sources[0].Letter, "a new document takes the next free letter")
	require.Equal(t, "A", sources[1].Letter, "a known document keeps its letter")
	require.Equal(t, "B", sources[2].Letter)
	require.Equal(t, []string{"B1", "B2"}, []string{sources[0].Facts[0].Marker, sources[0].Facts[1].Marker})
	require.Equal(t, []string{"B3", "B4"}, []string{sources[2].Facts[0].Marker, sources[2].Facts[1].Marker},
		"a second passage of a document continues its numbering")
	require.Equal(t, 2, w.NextLetter)

	require.Len(t, w.Citations, 6)
	for _, c := range w.Citations {
		require.NotEmpty(t, c.Fact)
	}
	last := w.Citations[len(w.Citations)-1]
	require.Equal(t, ragd.CitationWrite{DocID: b, DocVersion: 1, ChunkID: 21, Marker: "B4", Fact: last.Fact,
		Score: 0.4, Origin: "", Rank: 3, PageStart: 2, PageEnd: 3}, last)

	require.Len(t, w.Sources, 2)
	as, bs := w.Sources[0], w.Sources[1] // prior rows first, then new ones
	require.Equal(t, b, bs.DocID)
	require.Equal(t, ragd.ConversationSource{DocID: b, Marker: "B", CarryScore: 1, Carried: true, FirstTurn: 2,
		LastTurn: 2, LastUsedAt: now, CitedChunkIDs: []int64{20, 21}, Facts: bs.Facts, Reason: "retrieved"}, bs)
	require.Len(t, bs.Facts, 4)
	require.Equal(t, 1, as.FirstTurn, "the first turn of a known source is kept")
	require.Equal(t, 2, as.LastTurn)
	require.Contains(t, w.Answer, "[B1]")
}

// The kept chunk of a passage is the one with the most votes, not the one with the single best
// rank: two lists agreeing on a chunk outweigh one list's top pick.
func TestDedupeListsKeepsTheMostVotedChunk(t *testing.T) {
	t.Parallel()
	doc := uuid.New()
	chunks := []ragd.Chunk{
		{ID: 1, DocID: doc, Version: 1, Ordinal: 1, Text: "during the shaking", Active: true},
		{ID: 2, DocID: doc, Version: 1, Ordinal: 2, Text: "after the shaking", Active: true},
	}
	lists := []fuse.List{
		{Name: "carry", IDs: []int64{1}},
		{Name: "sources-bm25", IDs: []int64{2}},
		{Name: "bm25", Weight: 0.25, IDs: []int64{2}},
	}
	groups, out := dedupeLists(chunks, lists, 60)
	require.Equal(t, []int64{2, 1}, groups[2].Members)
	for _, l := range out {
		require.Equal(t, []int64{2}, l.IDs, l.Name)
	}
}

// A source's origins name the kinds of lists that found it: the conversation focus's search is
// "focus", apart from "carry" (the carried list and the searches within or around the carried
// sources), so a client can tell a carried source from one the focus found.
func TestOriginsLabelFocusApartFromCarry(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"focus"}, origins(map[string]int{"focus-bm25": 1}))
	require.Equal(t, []string{"bm25", "carry", "focus", "kg"},
		origins(map[string]int{"kg": 4, "focus-bm25": 2, "carry": 3, "bm25": 1}))
	require.Equal(t, []string{"vector", "carry"},
		origins(map[string]int{"sources-bm25": 1, "context-bm25": 2, "compare-vector": 1}))
}
