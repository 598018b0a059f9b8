package ask

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/focus"
	"github.com/ragd/ragd/fuse"
)

// The plan is the one place that decides which lists a turn fuses with which weights, by intent.
func TestPlan(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	doc := uuid.New()
	picks := []carry.Pick{{DocID: doc, ChunkID: 7}}
	lead := &turnFocus{lean: 1, chunks: map[string]int{"GONVILLE HOTEL": 76}, prior: focus.Focus{Turn: 1,
		Terms: []focus.Term{{Text: "GONVILLE HOTEL", Kind: focus.Entity, Weight: 1, Turn: 1, Origin: focus.FromUser}}}}
	q := "is parking free at the hotel near the station?"

	drill := plan(cfg, planInput{query: q, intent: Intent{Label: DrillDown}, picks: picks, graph: []int64{9},
		context: q + " gonville", focus: lead})
	require.Equal(t, []search{
		{name: "bm25", weight: 1, text: q},
		{name: "focus-bm25", weight: 2, text: q, title: "GONVILLE HOTEL"},
	}, drill.searches, "the focus searches the turn: the context search steps aside")
	require.Equal(t, []fuse.List{{Name: "carry", Weight: 0.01, IDs: []int64{7}}, {Name: "kg", Weight: 0.5, IDs: []int64{9}}}, drill.extra)
	own := *lead
	own.lean = 0 // the turn names its own title: the focus leaves it alone
	for _, tf := range []*turnFocus{nil, &own} {
		unfocused := plan(cfg, planInput{query: q, intent: Intent{Label: DrillDown}, context: q + " gonville", focus: tf})
		require.Equal(t, []search{
			{name: "bm25", weight: 1, text: q},
			{name: "context-bm25", weight: 0.5, text: q + " gonville"},
		}, unfocused.searches, "without focus searches, the context search")
	}

	same := plan(cfg, planInput{query: q, intent: Intent{Label: SameSources}, vector: true, picks: picks,
		within: []uuid.UUID{doc}, chunks: []int64{7, 8}})
	require.Equal(t, []search{
		{name: "sources-bm25", weight: 1, text: q, chunks: []int64{7, 8}},
		{name: "sources-vector", weight: 1, text: q, vector: true, docs: []uuid.UUID{doc}},
		{name: "bm25", weight: 0.25, text: q},
		{name: "vector", weight: 0.25, text: q, vector: true},
	}, same.searches, "within the carried sources at full weight, everywhere else at a reduced one")
	require.Equal(t, []fuse.List{{Name: "carry", Weight: 0.3, IDs: []int64{7}}}, same.extra, "a turn that refers to them")

	cmp := plan(cfg, planInput{query: q, intent: Intent{Label: Compare, Entities: []string{"a", "b"}}})
	require.Equal(t, []search{{name: "bm25", weight: 1, text: q}, {name: "compare1-bm25", weight: 1, text: "a"},
		{name: "compare2-bm25", weight: 1, text: "b"}}, cmp.searches)
	require.Empty(t, cmp.extra, "nothing carried")
	// A comparison is about its carried sources when it points back for a side; one that names
	// what it compares carries them as a drill-down does.
	pointing := plan(cfg, planInput{query: "Is it the same after a flood?", intent: Intent{Label: Compare, Entities: []string{"flood"}}, picks: picks})
	require.Equal(t, []fuse.List{{Name: "carry", Weight: 0.3, IDs: []int64{7}}}, pointing.extra)
	require.True(t, referent(Intent{Label: Compare}, "Is it the same after a flood?"))
	vs := plan(cfg, planInput{query: "what are limit orders vs market orders?", intent: Intent{Label: Compare, Entities: []string{"limit orders", "market orders"}}, picks: picks})
	require.Equal(t, []fuse.List{{Name: "carry", Weight: 0.01, IDs: []int64{7}}}, vs.extra)
	require.False(t, referent(Intent{Label: Compare}, "what are limit orders vs market orders?"))
	require.True(t, referent(Intent{Label: SameSources}, "what are limit orders vs market orders?"))
	require.False(t, referent(Intent{Label: DrillDown}, "Is it the same after a flood?"))

	back := plan(cfg, planInput{query: "are their rooms clean?", intent: Intent{Label: DrillDown}, context: "are their rooms clean? gonville"})
	require.Equal(t, 1.0, back.searches[1].weight, "a turn that points back weighs its context search by AnaphoraBoost")

	fresh := plan(cfg, planInput{query: q, intent: Intent{Label: NewTopic}, focus: lead})
	require.Equal(t, []search{{name: "bm25", weight: 1, text: q}}, fresh.searches, "a new topic leans on no focus")
}
