package experiment

import (
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

// Every block of a tenant holds the arms in their shares; tenants get different orders; the
// same slot always gets the same arm.
func TestAssignIsBlockedByTenant(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.ControlRatio, cfg.Block = 0.5, 4
	orders := map[string]string{}
	for _, tenant := range []string{"acme", "globex", "initech"} {
		var order []string
		for slot := int64(0); slot < 40; slot++ {
			arm := cfg.Assign(tenant, slot)
			require.Equal(t, arm, cfg.Assign(tenant, slot), "stable")
			order = append(order, arm)
			if slot%4 == 3 {
				n := 0
				for _, a := range order[slot-3 : slot+1] {
					if a == Control {
						n++
					}
				}
				require.Equal(t, 2, n, "%s block %d: %v", tenant, slot/4, order[slot-3:slot+1])
			}
		}
		orders[tenant] = strings.Join(order, ",")
	}
	require.NotEqual(t, orders["acme"], orders["globex"], "each tenant's order is its own")

	cfg.ControlRatio, cfg.Block = 0.25, 20
	n := 0
	for slot := int64(0); slot < 20; slot++ {
		if cfg.Assign("acme", slot) == Control {
			n++
		}
	}
	require.Equal(t, 5, n)

	rw := Config{Design: RecentWindow, Budget: Free, Block: 8}
	seen := map[string]int{}
	for slot := int64(0); slot < 8; slot++ {
		seen[rw.Assign("acme", slot)]++
	}
	require.Equal(t, map[string]int{RecentAll: 2, Recent3: 2, Recent1: 2, Recent0: 2}, seen)
	require.Empty(t, Config{Design: Off, Budget: Free, Block: 1}.Assign("acme", 0))
	require.Equal(t, []int{-1, 3, 1, 0}, []int{RecentTurns(RecentAll), RecentTurns(Recent3), RecentTurns(Recent1), RecentTurns(Recent0)})
}

// The report against a hand computation. Control: 200 rated turns, 120 up (0.60); treatment:
// 180 rated, 126 up (0.70).
//
//	diff = 0.70 - 0.60 = 0.10
//	se (unpooled) = sqrt(0.6*0.4/200 + 0.7*0.3/180) = sqrt(0.0012 + 0.0011667) = 0.048648
//	95% interval = 0.10 ± 1.96*0.048648 = 0.004650 .. 0.195350
//	pooled p = 246/380 = 0.647368; se = sqrt(p(1-p)(1/200+1/180)) = 0.049088; z = 2.03715
//	two-sided p = erfc(z/√2) = 0.04163
//	n for 0.60 -> 0.66 (10% of 0.60) at 80% power:
//	  (1.95996·sqrt(2·0.63·0.37) + 0.84162·sqrt(0.6·0.4 + 0.66·0.34))² / 0.06² = 1015.3 -> 1016
//	  per arm; 1016 - 180 = 836 still needed
func TestReportByHand(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.ControlRatio = 0.5
	rows := []ragd.ArmStratum{
		{Arm: Control, Mode: "TASK", Turns: 150, Conversations: 40, ContextTokens: 150 * 2000, LatencyMS: 150 * 30, Rated: 120, Up: 70, Down: 50},
		{Arm: Control, Mode: "LEARNING", Turns: 100, Conversations: 30, ContextTokens: 100 * 1000, LatencyMS: 100 * 20, Rated: 80, Up: 50, Down: 30},
		{Arm: Treatment, Mode: "TASK", Turns: 140, Conversations: 38, ContextTokens: 140 * 2500, LatencyMS: 140 * 30, Rated: 100, Up: 72, Down: 28},
		{Arm: Treatment, Mode: "LEARNING", Turns: 110, Conversations: 33, ContextTokens: 110 * 1500, LatencyMS: 110 * 20, Rated: 80, Up: 54, Down: 26},
		{Arm: "", Mode: "TASK", Turns: 9, Rated: 9, Up: 9}, // before the experiment: left out
	}
	r := NewReport(cfg, rows, []string{"TASK", "LEARNING"})
	require.Equal(t, []string{"TASK", "LEARNING", "all"}, []string{r.Strata[0].Mode, r.Strata[1].Mode, r.Strata[2].Mode})
	all := r.Strata[2]
	c, tr := all.Arms[0], all.Arms[1]
	require.Equal(t, [3]int{250, 70, 200}, [3]int{c.Turns, c.Conversations, c.Rated})
	require.InDelta(t, (150*2000+100*1000)/250.0, c.ContextTokens, 1e-9)
	require.InDelta(t, 0.60, c.CompletionRate, 1e-12)
	require.InDelta(t, 0.40, c.ErrorRate, 1e-12)
	require.InDelta(t, 0.80, c.FeedbackRate, 1e-12)
	require.InDelta(t, 0.70, tr.CompletionRate, 1e-12)

	cmp := all.Comparisons[0]
	require.Equal(t, Treatment, cmp.Arm)
	require.InDelta(t, 0.10, cmp.Diff, 1e-12)
	require.InDelta(t, 0.004650, cmp.CI.Lo, 1e-5)
	require.InDelta(t, 0.195350, cmp.CI.Hi, 1e-5)
	require.InDelta(t, 2.03715, cmp.Z, 1e-4)
	require.InDelta(t, 0.04163, cmp.P, 1e-4)
	require.Equal(t, 1016, cmp.NeededPerArm)
	require.Equal(t, 836, cmp.StillNeeded)

	task := r.Strata[0].Comparisons[0]
	require.InDelta(t, 0.72-70.0/120, task.Diff, 1e-12, "strata are compared on their own")

	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	require.Contains(t, b.String(), "treatment vs control: completion diff +0.100 (95% +0.005 to +0.195), z 2.04, p 0.0416; 1016 rated per arm")

	// Without ratings there is no rate to size from: the text says so, not "0 still needed".
	r = NewReport(cfg, []ragd.ArmStratum{{Arm: Control, Mode: "TASK", Turns: 3}, {Arm: Treatment, Mode: "TASK", Turns: 3}}, []string{"TASK"})
	require.Zero(t, r.Strata[0].Comparisons[0].NeededPerArm)
	b.Reset()
	require.NoError(t, r.WriteText(&b))
	require.NotContains(t, b.String(), "still needed")
	require.Contains(t, b.String(), "the rated turns a 10% change needs are unknown until the control's completion rate is above 0 and below 1")
}

// Sample sizes as the textbook formula gives them (Fleiss; e.g. 0.5 against 0.6 needs 388).
func TestSampleSize(t *testing.T) {
	t.Parallel()
	require.Equal(t, 388, SampleSize(0.5, 0.6))
	require.Equal(t, 1016, SampleSize(0.6, 0.66))
	require.Equal(t, 0, SampleSize(0.5, 0.5))
	require.False(t, math.IsNaN(float64(SampleSize(0.01, 0.011))))
}

// clock is an injected time source.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// A treatment whose error rate runs above twice the control's is rolled back once, counted by
// trigger, and stays off until an operator switches it back on; so is one twice as slow.
func TestGuardRollsBack(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	cfg := DefaultGuardConfig()
	cfg.Now, cfg.Logger = clk.Now, slog.New(slog.DiscardHandler)
	exp := DefaultConfig()
	exp.ControlRatio = 0.5
	g, err := NewGuard(exp, cfg)
	require.NoError(t, err)

	rate := func(arm string, n, bad int) {
		for i := range n {
			clk.now = clk.now.Add(time.Minute)
			g.Feedback(arm, i >= n-bad) // the bad ones last
		}
	}
	rate(Control, 40, 6)    // 0.15
	rate(Treatment, 40, 11) // 0.275: worse, but not twice
	require.True(t, g.Enabled())
	require.Empty(t, g.Rollbacks())
	rate(Treatment, 20, 20) // 31/60 = 0.52 > 0.30
	require.False(t, g.Enabled(), "rolled back")
	rate(Treatment, 20, 20)
	require.Equal(t, map[string]int{TriggerErrorRate: 1}, g.Rollbacks(), "once")

	g.Enable()
	require.True(t, g.Enabled())
	clk.now = clk.now.Add(25 * time.Hour) // the bad day has left the window
	for range 60 {
		clk.now = clk.now.Add(time.Second)
		g.Turn(Control, 40*time.Millisecond)
		g.Turn(Treatment, 100*time.Millisecond)
	}
	require.False(t, g.Enabled())
	require.Equal(t, map[string]int{TriggerErrorRate: 1, TriggerLatency: 1}, g.Rollbacks())
}

// A rating its user changes counts once in the guard, as it stands now: the treatment's 4 bad
// of 10 turned into 7 of 10 (not 7 of 13) is more than twice the control's 3 of 10.
func TestGuardRevisedRatings(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	cfg := DefaultGuardConfig()
	cfg.Now, cfg.Logger, cfg.MinFeedback = clk.Now, slog.New(slog.DiscardHandler), 10
	exp := DefaultConfig()
	exp.ControlRatio = 0.5
	g, err := NewGuard(exp, cfg)
	require.NoError(t, err)
	for i := range 10 {
		clk.now = clk.now.Add(time.Minute)
		g.Feedback(Control, i < 3)
		g.Feedback(Treatment, i < 4)
	}
	g.Revise(Treatment, true)
	g.Revise(Treatment, true)
	require.True(t, g.Enabled(), "6 of 10 is not more than twice 0.3")
	g.Revise(Treatment, true)
	require.False(t, g.Enabled(), "7 of 10 is")
}
