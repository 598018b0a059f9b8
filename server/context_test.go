package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/bundle"
	"github.com/ragd/ragd/mode"
)

func (b *testBundle) askWith(t *testing.T, req map[string]any) askResponse {
	t.Helper()
	resp, body := b.do(t, "POST", "/v1/ask", req)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	return decode[askResponse](t, body)
}

func (b *testBundle) metric(t *testing.T, name string) string {
	t.Helper()
	resp, body := b.do(t, "GET", "/metrics", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var lines []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, name) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// The spec's budget table, as the response reports it: rules, task_state, recent_window,
// retrieved_evidence, relevant_decisions, capsules.
var specBudgets = map[string][6]int{
	"TASK":        {10000, 5000, 2000, 28000, 4000, 4000},
	"EXPLORATION": {3000, 1000, 15000, 35000, 6000, 2000},
	"DEBUGGING":   {5000, 4000, 12000, 25000, 3000, 0},
	"LEARNING":    {8000, 0, 2000, 40000, 8000, 2000},
	"GENERAL":     {6000, 3000, 8000, 28000, 4000, 4000},
}

func TestModeHintsAndBudgets(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	for hint, want := range map[string]string{"debug": "DEBUGGING", "implement": "TASK", "explore": "EXPLORATION",
		"teach": "LEARNING", "general": "GENERAL"} {
		r := b.askWith(t, map[string]any{"message": "smoke alarms", "intent": hint})
		if hint == "general" {
			require.NotEqual(t, "mapped", r.Mode.Source, "general leaves the mode to the classifier")
		} else {
			require.Equal(t, want, r.Mode.Label, hint)
			require.Equal(t, "mapped", r.Mode.Source)
			require.Equal(t, 1.0, r.Mode.Confidence)
		}
		m := r.Context.Mode
		require.Equal(t, r.Mode.Label, m)
		var got [6]int
		for i, s := range r.Context.Sections {
			got[i] = s.Budget
			require.LessOrEqual(t, s.Used, s.Budget, "%s %s", m, s.Name)
		}
		require.Equal(t, specBudgets[m], got, "budgets of %s", m)
		require.Contains(t, r.Context.Text, "[A1]", "the evidence section carries the fact sheet")
	}
}

// A safety requirement stated early stays in every later bundle, even when a tight budget would
// cut everything around it.
func TestInvariantsStayInTheBundle(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	one := b.askWith(t, map[string]any{"message": "Never log the residents' personal data. How do smoke alarms work?", "intent": "task"})
	require.NotEmpty(t, one.Context.Invariants)
	r := one
	for _, q := range []string{"burns", "floods", "Actually, I meant battery smoke alarms only.", "and earthquakes?"} {
		r = b.askWith(t, map[string]any{"conversation_id": one.ConversationID, "message": q, "intent": "debug"})
	}
	var types []string
	for _, inv := range r.Context.Invariants {
		types = append(types, inv.Type)
		require.Contains(t, r.Context.Text, inv.Text, "every invariant is in the rendered bundle")
	}
	require.Contains(t, types, "safety_requirement", "turn 1's requirement is still there at turn 5")
	require.Contains(t, types, "user_correction")
	require.Empty(t, r.Context.Breach)
	require.False(t, r.Context.Fallback)
}

// A bundle that loses an invariant (here a builder made to drop them) is caught, rebuilt with
// GENERAL budgets, and counted.
func TestBreachFallsBackToGeneral(t *testing.T) {
	t.Parallel()
	dropInvariants := func(in bundle.Input) bundle.Bundle {
		in.Invariants = nil
		return bundle.Build(in)
	}
	b := setup(t, options{corpus: true, build: dropInvariants})
	r := b.askWith(t, map[string]any{"message": "You must always keep the gas valve closed. What about earthquakes?", "intent": "debug"})
	require.Equal(t, "DEBUGGING", r.Mode.Label)
	require.NotEmpty(t, r.Context.Breach)
	require.True(t, r.Context.Fallback)
	require.Equal(t, "GENERAL", r.Context.Mode, "rebuilt with the baseline budgets")
	require.NotEmpty(t, r.Context.Invariants)
	require.Contains(t, r.Context.Text, r.Context.Invariants[0].Text)
	require.Contains(t, b.metric(t, "ragd_context_breaches_total"), "ragd_context_breaches_total 1")
}

// clock is a test clock for the monitors.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// A synthetic shift of the mode distribution trips drift once it has lasted the hold period:
// classification falls back to GENERAL until the window holds ordinary traffic again. The
// baseline is set through the admin route.
func TestDriftFallbackAndRecovery(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	dc := mode.DefaultDriftConfig()
	dc.Now = clk.Now
	drift, err := mode.NewDrift(dc)
	require.NoError(t, err)
	lc := mode.DefaultLowConfidenceConfig()
	lc.Now = clk.Now
	low, err := mode.NewLowConfidence(lc)
	require.NoError(t, err)
	b := setup(t, options{corpus: true, monitors: ask.Monitors{Drift: drift, LowConfidence: low}})

	tenant := ragd.DefaultTenant.String() // the baseline route sets its caller's tenant's
	ordinary := map[string]float64{"LEARNING": 0.4, "TASK": 0.25, "GENERAL": 0.15, "DEBUGGING": 0.12, "EXPLORATION": 0.08}
	resp, body := b.do(t, "PUT", "/v1/admin/drift/baseline", map[string]any{"distribution": ordinary})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	resp, body = b.do(t, "PUT", "/v1/admin/drift/baseline", map[string]any{"distribution": map[string]float64{"CHAT": 1}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), `distribution: `, "the error names the body's field")

	for range 150 { // two hours and a quarter of nothing but debugging
		clk.add(54 * time.Second)
		drift.Observe(tenant, mode.Debugging)
	}
	r := b.askWith(t, map[string]any{"message": "explain how smoke alarms detect smoke"})
	require.Equal(t, "fallback", r.Mode.Source)
	require.Equal(t, "GENERAL", r.Mode.Label)
	require.Contains(t, b.metric(t, "ragd_mode_drifting"), fmt.Sprintf("ragd_mode_drifting{tenant=%q} 1", tenant))
	require.Contains(t, b.metric(t, `ragd_mode_fallbacks_total{reason="drift"}`), " 1")
	resp, body = b.do(t, "GET", "/v1/admin/drift", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `"drifting":true`)

	// An hour later the window holds traffic like the baseline: recovered.
	clk.add(61 * time.Minute)
	for m, share := range ordinary {
		for range int(share * 100) {
			clk.add(time.Second)
			drift.Observe(tenant, mode.Mode(m))
		}
	}
	r = b.askWith(t, map[string]any{"message": "explain how smoke alarms detect smoke"})
	require.NotEqual(t, "drift", r.Mode.Source)
	require.Contains(t, b.metric(t, "ragd_mode_drifting"), fmt.Sprintf("ragd_mode_drifting{tenant=%q} 0", tenant))
	require.NotEmpty(t, b.metric(t, "ragd_mode_low_confidence_share"))
}

// A conversation keeps its A/B arm: control conversations get GENERAL budgets whatever their
// mode, and the arms come in their shares (blocks of 20: 10 and 10).
func TestABArmsAreStable(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true, pipeline: func(c *ask.Config) { c.Experiment.ControlRatio = 0.5 }})
	arms := map[string]int{}
	for i := range 20 {
		one := b.askWith(t, map[string]any{"message": fmt.Sprintf("smoke alarms %d", i), "intent": "debug"})
		two := b.askWith(t, map[string]any{"conversation_id": one.ConversationID, "message": "and burns?", "intent": "debug"})
		require.Equal(t, one.Context.Arm, two.Context.Arm, "the same conversation, the same arm")
		arms[one.Context.Arm]++
		want := "DEBUGGING"
		if one.Context.Arm == "control" {
			want = "GENERAL"
		}
		require.Equal(t, want, two.Context.Mode, "control gets GENERAL budgets")
		require.Equal(t, "DEBUGGING", two.Mode.Label, "the mode itself is still detected and reported")
	}
	require.Equal(t, map[string]int{"control": 10, "treatment": 10}, arms)
	require.NotEmpty(t, b.metric(t, `ragd_mode_turns_total{arm="control"`))
}

// /metrics says how many tenants' BM25 indexes are open and how many were closed to keep the
// bound (none here: the test's index has no bound).
func TestMetricsCountOpenTenantIndexes(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	b.ask(t, "", "what to do in an earthquake")
	require.Equal(t, "ragd_bm25_open_tenant_indexes 1", b.metric(t, "ragd_bm25_open_tenant_indexes "))
	require.Equal(t, "ragd_bm25_tenant_index_closes_total 0", b.metric(t, "ragd_bm25_tenant_index_closes_total "))
}
