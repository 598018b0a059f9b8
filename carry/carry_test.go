package carry

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

var (
	docA = uuid.MustParse("01900000-0000-7000-8000-00000000000a")
	docB = uuid.MustParse("01900000-0000-7000-8000-00000000000b")
	docC = uuid.MustParse("01900000-0000-7000-8000-00000000000c")
	t0   = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// state is what a test checks of one source after a turn.
type state struct {
	carry   float64
	idle    int
	carried bool
	pinned  bool
	reason  string
}

func stateOf(s ragd.ConversationSource) state {
	return state{carry: s.CarryScore, idle: s.InactiveTurns, carried: s.Carried, pinned: s.Pinned, reason: s.Reason}
}

// TestUpdateTurns replays a conversation as a table of turns: what each turn used, pinned or
// declared, and the state of every source after it.
func TestUpdateTurns(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	used := func(letter string, docs ...uuid.UUID) map[uuid.UUID]Used {
		m := map[uuid.UUID]Used{}
		for _, d := range docs {
			m[d] = Used{Letter: letter, Chunks: []int64{1}}
		}
		return m
	}
	turns := []struct {
		name string
		turn Turn
		want map[uuid.UUID]state
	}{
		{
			name: "turn 1 finds A; B is pinned by the request",
			turn: Turn{Used: used("A", docA), Pin: map[uuid.UUID]string{docB: "B"}},
			want: map[uuid.UUID]state{
				docA: {1, 0, true, false, ReasonRetrieved},
				docB: {1, 0, true, true, ReasonPinned},
			},
		},
		{
			name: "turn 2 uses nothing: A decays once, the pin does not",
			want: map[uuid.UUID]state{
				docA: {0.7, 1, true, false, ReasonWaiting},
				docB: {1, 0, true, true, ReasonPinned},
			},
		},
		{
			name: "turn 3: A was under tau, decays again",
			turn: Turn{BelowTau: map[uuid.UUID]bool{docA: true}},
			want: map[uuid.UUID]state{
				docA: {0.49, 2, true, false, ReasonBelowTau},
				docB: {1, 0, true, true, ReasonPinned},
			},
		},
		{
			name: "turn 4: the third idle turn drops A",
			want: map[uuid.UUID]state{
				docA: {0.343, 3, false, false, "idle (turn 4)"},
				docB: {1, 0, true, true, ReasonPinned},
			},
		},
		{
			name: "turn 5: a dropped source stays dropped and stops decaying",
			want: map[uuid.UUID]state{
				docA: {0.343, 3, false, false, "idle (turn 4)"},
				docB: {1, 0, true, true, ReasonPinned},
			},
		},
		{
			name: "turn 6: retrieval finds A again: fresh; C is new",
			turn: Turn{Used: used("C", docC)},
			want: map[uuid.UUID]state{
				docA: {0.343, 3, false, false, "idle (turn 4)"},
				docB: {1, 0, true, true, ReasonPinned},
				docC: {1, 0, true, false, ReasonRetrieved},
			},
		},
		{
			name: "turn 7: A returns through the carried list; C waits",
			turn: Turn{Used: map[uuid.UUID]Used{docA: {Letter: "A", Carried: true, Chunks: []int64{7}}}},
			want: map[uuid.UUID]state{
				docA: {1, 0, true, false, ReasonCarried},
				docB: {1, 0, true, true, ReasonPinned},
				docC: {0.7, 1, true, false, ReasonWaiting},
			},
		},
		{
			name: "turn 8: a new topic drops every unpinned source at once",
			turn: Turn{NewTopic: true},
			want: map[uuid.UUID]state{
				docA: {1, 0, false, false, "new-topic (turn 8)"},
				docB: {1, 0, true, true, ReasonPinned},
				docC: {0.7, 1, false, false, "new-topic (turn 8)"},
			},
		},
	}
	var sources []ragd.ConversationSource
	for i, tc := range turns {
		tc.turn.Number, tc.turn.Now = i+1, t0.Add(time.Duration(i)*time.Minute)
		sources = Update(sources, tc.turn, cfg)
		got := map[uuid.UUID]state{}
		for _, s := range sources {
			st := stateOf(s)
			st.carry = float64(int(st.carry*1000+0.5)) / 1000
			got[s.DocID] = st
		}
		require.Equal(t, tc.want, got, tc.name)
	}
	var a ragd.ConversationSource
	for _, s := range sources {
		if s.DocID == docA {
			a = s
		}
	}
	require.Equal(t, "A", a.Marker, "a document keeps its letter through drops")
	require.Equal(t, 1, a.FirstTurn)
	require.Equal(t, 7, a.LastTurn)
	require.Equal(t, []int64{7}, a.CitedChunkIDs)
}

func TestPinsNeverDecayOrDrop(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	sources := Update(nil, Turn{Number: 1, Pin: map[uuid.UUID]string{docA: "A"}}, cfg)
	for turn := 2; turn <= 50; turn++ {
		sources = Update(sources, Turn{Number: turn, NewTopic: turn%7 == 0}, cfg)
	}
	require.Equal(t, state{1, 0, true, true, ReasonPinned}, stateOf(sources[0]))
}

func TestSelect(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Cap = 2
	sources := []ragd.ConversationSource{
		{DocID: docA, CarryScore: 0.49, Carried: true},
		{DocID: docB, CarryScore: 1, Carried: true},
		{DocID: docC, CarryScore: 0.1, Carried: true, Pinned: true},
	}
	for _, tc := range []struct {
		name     string
		rescores map[uuid.UUID]ReScore
		want     []uuid.UUID
	}{
		{"pinned first, then by re-score times carry score",
			map[uuid.UUID]ReScore{docA: {1, 0.9}, docB: {2, 0.5}, docC: {3, 0.01}}, []uuid.UUID{docC, docB}},
		{"under tau stays out, pinned or not is what decides",
			map[uuid.UUID]ReScore{docA: {1, 0.19}, docB: {2, 0.2}, docC: {3, 0}}, []uuid.UUID{docC, docB}},
		{"without a re-score a source cannot enter, even pinned",
			map[uuid.UUID]ReScore{docA: {1, 0.9}}, []uuid.UUID{docA}},
	} {
		var got []uuid.UUID
		for _, p := range Select(sources, tc.rescores, cfg) {
			got = append(got, p.DocID)
		}
		require.Equal(t, tc.want, got, tc.name)
	}
	picks := Select(sources, map[uuid.UUID]ReScore{docA: {11, 0.9}}, cfg)
	require.Equal(t, Pick{DocID: docA, ChunkID: 11, ReScore: 0.9, Carry: 0.49, Score: 0.9 * 0.49}, picks[0])

	// With tau waived, sources that re-score 0 enter in carry score order.
	cfg.Tau = 0
	var order []uuid.UUID
	for _, p := range Select(sources[:2], map[uuid.UUID]ReScore{docA: {1, 0}, docB: {2, 0}}, cfg) {
		order = append(order, p.DocID)
	}
	require.Equal(t, []uuid.UUID{docB, docA}, order)
}

func TestCandidates(t *testing.T) {
	t.Parallel()
	sources := []ragd.ConversationSource{
		{DocID: docA, Carried: true},
		{DocID: docB, Carried: false},
		{DocID: docC, Carried: true, Pinned: true},
	}
	ids := func(ss []ragd.ConversationSource) []uuid.UUID {
		var out []uuid.UUID
		for _, s := range ss {
			out = append(out, s.DocID)
		}
		return out
	}
	require.Equal(t, []uuid.UUID{docA, docC}, ids(Candidates(sources, false)))
	require.Equal(t, []uuid.UUID{docC}, ids(Candidates(sources, true)), "a new topic keeps only pins")
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, DefaultConfig().Validate())
	for field, set := range map[string]func(*Config){
		"Tau":     func(c *Config) { c.Tau = 1.5 },
		"Decay":   func(c *Config) { c.Decay = 0 },
		"MaxIdle": func(c *Config) { c.MaxIdle = 0 },
		"Cap":     func(c *Config) { c.Cap = -1 },
	} {
		c := DefaultConfig()
		set(&c)
		var ie *ragd.InputError
		require.ErrorAs(t, c.Validate(), &ie, field)
		require.Equal(t, field, ie.Field)
	}
	zero := DefaultConfig()
	zero.Tau, zero.Cap = 0, 0
	require.NoError(t, zero.Validate(), "tau 0 (everything enters) and cap 0 (nothing enters) are settings, not unset")
}
