package eval

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/index"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/internal/modeltest"
	"github.com/ragd/ragd/store"
)

func TestLoadDSTC11(t *testing.T) {
	t.Parallel()
	m, err := LoadMTRAG(filepath.Join(testdata, "dstc11t5"))
	require.NoError(t, err)
	require.Equal(t, EntityReference, m.Reference, "DSTC11's rewrite is the entity's name, not a rewrite")
	require.Len(t, m.Conversations, 2, "conversations of other domains are left out")
	require.Equal(t, "Are their bathrooms clean? (HOBSONS HOUSE)", m.Tasks["rewrite"]["val0001<::>2"])
	require.Equal(t, "Tell me about the Allenbell. Is the breakfast good? Do they have parking at the Allenbell?", m.Tasks["questions"]["val0002<::>3"])
	require.Equal(t, "entity reference (ceiling)", Labels(m)["rewrite"])

	mtrag, err := LoadMTRAG(filepath.Join(modeltest.SharedDir(t), "data", "mtrag", "fiqa"))
	require.NoError(t, err)
	require.Equal(t, LLMRewrite, mtrag.Reference)
}

func TestSlices(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		question, reference string
		want                []string
	}{
		{"Are their bathrooms adequately sanitized?", "Are their bathrooms adequately sanitized? (HOBSONS HOUSE)", []string{SlicePronoun, SliceShort}},
		{"Are the bathrooms at this place adequately sanitized?", "Are the bathrooms at this place adequately sanitized? (HOBSONS HOUSE)", []string{SlicePronoun}},
		{"Does Kymmoy serve beer that's worth the money?", "Does Kymmoy serve beer that's worth the money? (KYMMOY)", []string{SliceSelfContained}},
		{"Investments?", "What kinds of investments can a Roth IRA hold?", []string{SliceShort}},
		{"How do I prepare for a flood?", "How do I prepare for a flood?", []string{SliceSelfContained}},
		{"Is the view from the Gonville great?", "Is the view from the Gonville great? (GONVILLE HOTEL)", nil},
		{"What about it’s cost?", "", []string{SlicePronoun, SliceShort}},
	} {
		require.Equal(t, tc.want, Slices(tc.question, tc.reference), tc.question)
	}
}

// spy passes calls to the real pipeline and store and remembers their order.
type spy struct {
	*ask.Pipeline
	replier Replier
	calls   []string
	convs   map[uuid.UUID]bool
}

func (s *spy) Ask(ctx context.Context, req ask.Request) (*ask.Turn, error) {
	s.calls = append(s.calls, "ask: "+req.Message)
	t, err := s.Pipeline.Ask(ctx, req)
	if err == nil {
		s.convs[t.ConversationID] = true
	}
	return t, err
}

func (s *spy) RecordReply(ctx context.Context, conv, msg uuid.UUID, content string) (*ragd.Message, error) {
	s.calls = append(s.calls, "reply: "+content)
	return s.replier.RecordReply(ctx, conv, msg, content)
}

// The replay records the reply of each earlier turn before the next one is asked, as a chat UI
// does, and never the judged turn's own reply: it answers the question being judged.
func TestReplayRecordsOnlyEarlierReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.TestTx(t))
	in, err := ingest.New(ingest.Config{}, st, nil)
	require.NoError(t, err)
	dir := filepath.Join(testdata, "dstc11t5")
	_, err = in.Ingest(ctx, in.Walk(ctx, []string{filepath.Join(dir, "corpus.jsonl")}), nil)
	require.NoError(t, err)
	ix, err := index.Open(filepath.Join(t.TempDir(), "bm25"), nil)
	require.NoError(t, err)
	defer ix.Close()
	_, err = ix.CatchUp(ctx, st)
	require.NoError(t, err)
	p, err := ask.New(ask.DefaultConfig(), ask.Deps{Index: ix, Store: st})
	require.NoError(t, err)
	keys, err := st.SourceKeys(ctx)
	require.NoError(t, err)
	docID := func(id uuid.UUID) string { return strings.TrimPrefix(keys[id], "corpus:dstc11t5/") }

	m, err := LoadMTRAG(dir)
	require.NoError(t, err)
	s := &spy{Pipeline: p, replier: st, convs: map[uuid.UUID]bool{}}
	rp, err := ReplayMTRAG(ctx, m, s, s, ask.BM25, docID)
	require.NoError(t, err)
	runs := rp.Runs
	require.Equal(t, []string{
		"ask: I need a guesthouse in the west.",
		"reply: The Hobsons House is a nice guesthouse in the west.",
		"ask: Are their bathrooms clean?",
		"ask: Tell me about the Allenbell.",
		"reply: The Allenbell is a cheap guesthouse in the east.",
		"ask: Is the breakfast good?",
		"reply: I have no reviews about breakfast.",
		"ask: Do they have parking at the Allenbell?",
	}, s.calls)
	require.Len(t, s.convs, 2)
	for conv := range s.convs {
		msgs, err := st.Messages(ctx, conv)
		require.NoError(t, err)
		last := msgs[len(msgs)-1]
		require.Equal(t, "assistant", last.Role)
		require.Nil(t, last.ReplyRecordedAt, "the judged turn's reply is never recorded")
		for _, msg := range msgs {
			require.NotContains(t, msg.Content, "JUDGED REPLY")
		}
	}

	for _, name := range Strategies {
		require.Len(t, runs[name].PerQuery, 2, name)
	}
	require.Equal(t, "faq:hotel:2:0", runs[Carry].PerQuery["val0002<::>3"][0], "the judged turn names its hotel")
	require.NotEmpty(t, rp.Queries["val0001<::>2"]["intent"])

	rep := ScoreMTRAG(m, runs)
	require.Equal(t, "dstc11t5", rep.Domain)
	byGroup := map[string]GroupResult{}
	for _, g := range rep.Groups {
		byGroup[g.Group] = g
	}
	require.Equal(t, 2, byGroup["later turns"].Tasks)
	require.Equal(t, 2, byGroup["later: "+SlicePronoun].Tasks)
	require.Equal(t, 1, byGroup["later: "+SliceSelfContained].Tasks)
	require.Equal(t, 0, byGroup["turn 1"].Tasks)
	d := byGroup["later turns"].CarryVsLast
	require.NotNil(t, d)
	require.Equal(t, 2, d.N)
	rows := TurnRows(m, rp)
	require.Len(t, rows, 2)
	require.InDelta(t, d.Mean, ((rows[0].NDCG5[Carry]-rows[0].NDCG5["lastturn"])+(rows[1].NDCG5[Carry]-rows[1].NDCG5["lastturn"]))/2, 1e-12)

	// The latency of carry's turns: the two first turns apart from the three later ones, each
	// turn's all but rerank its own total (no reranker here), and the judged turns' among them.
	lat := rp.Latency()
	require.Len(t, lat, 2)
	require.Equal(t, "turn 1", lat[0].Group)
	require.Equal(t, 2, lat[0].Turns)
	require.Equal(t, "later turns", lat[1].Group)
	require.Equal(t, 3, lat[1].Turns)
	require.Equal(t, rp.Later.Stages["total"], rp.Later.AllButRerank)
	require.Equal(t, Summarize(rp.Later.AllButRerank), lat[1].AllButRerank)
	require.Positive(t, lat[1].AllButRerank.P50)
	stages := map[string]StageLatency{}
	for _, s := range lat[1].Stages {
		stages[s.Stage] = s
	}
	require.Equal(t, 3, stages["focus"].Turns, "the focus is on by default: every later turn reads it")
	require.Equal(t, Summarize(rp.Later.Stages["focus"]), stages["focus"].Latency)
	for _, r := range rows {
		require.Contains(t, rp.Later.AllButRerank, rp.AllButRerank[r.Task], r.Task)
		require.InDelta(t, millis(rp.AllButRerank[r.Task]), r.CarryAllButRerankMS, 1e-9)
	}
	rep.Latency = lat
	var out strings.Builder
	require.NoError(t, ConversationReport{Domains: []DomainReport{rep}}.WriteTable(&out))
	require.Regexp(t, fmt.Sprintf(`later turns +3 +all but rerank +%.2f `, millis(lat[1].AllButRerank.P50)), out.String())
	require.Regexp(t, `later turns +3 +focus +\d`, out.String())
	out.Reset()
	require.NoError(t, ConversationReport{Domains: []DomainReport{rep}}.WriteJSON(&out))
	require.Contains(t, out.String(), `"carry_latency"`)
}

// A turn's all but rerank is its total less its rerank stage, or its total when none ran.
func TestTurnTimes(t *testing.T) {
	t.Parallel()
	var tt TurnTimes
	require.Equal(t, 6*time.Millisecond, tt.Add(ask.Timings{{Stage: "bm25", Duration: time.Millisecond},
		{Stage: "rerank", Duration: 4 * time.Millisecond}, {Stage: "total", Duration: 10 * time.Millisecond}}))
	require.Equal(t, 3*time.Millisecond, tt.Add(ask.Timings{{Stage: "focus", Duration: time.Millisecond},
		{Stage: "total", Duration: 3 * time.Millisecond}}))
	require.Equal(t, []string{"bm25", "rerank", "total", "focus"}, tt.Order)
	l := tt.Latency("later turns")
	require.Equal(t, 2, l.Turns)
	require.Equal(t, 3*time.Millisecond, l.AllButRerank.P50)
	require.Equal(t, 6*time.Millisecond, l.AllButRerank.P95)
	require.Equal(t, StageLatency{Stage: "focus", Turns: 1, Latency: Summarize([]time.Duration{time.Millisecond})}, l.Stages[3])
}
