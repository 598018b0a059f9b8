package server_test

import (
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/experiment"
	"github.com/ragd/ragd/mode"
)

type feedbackResponse struct {
	ID        string `json:"id"`
	MessageID string `json:"message_id"`
	Rating    string `json:"rating"`
	Reason    string `json:"reason"`
	Sources   []struct {
		Source string `json:"source"`
		Flag   string `json:"flag"`
	} `json:"sources"`
	Mode string `json:"mode"`
	Arm  string `json:"arm"`
}

// ratedMessages returns the messages rated so far, oldest rating first.
func (b *testBundle) ratedMessages(t *testing.T) []string {
	t.Helper()
	resp, body := b.do(t, "GET", "/v1/feedback", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var ids []string
	for _, f := range decode[struct {
		Feedback []feedbackResponse `json:"feedback"`
	}](t, body).Feedback {
		ids = append(ids, f.MessageID)
	}
	return ids
}

func (b *testBundle) rate(t *testing.T, msg, rating string) feedbackResponse {
	t.Helper()
	resp, body := b.do(t, "POST", "/v1/messages/"+msg+"/feedback", map[string]any{"rating": rating})
	require.Contains(t, []int{http.StatusOK, http.StatusCreated}, resp.StatusCode, "%s", body)
	return decode[feedbackResponse](t, body)
}

// Feedback is recorded once per answer (a second rating replaces the first), refused for what
// it cannot rate, and exported with the audit API in every format.
func TestFeedback(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	r := b.askWith(t, map[string]any{"message": "What should I do if I smell gas after an earthquake?", "intent": "debug"})
	letter := r.Sources[0].Letter

	resp, body := b.do(t, "POST", "/v1/messages/"+r.MessageID+"/feedback", map[string]any{
		"rating": "down", "reason": "it missed the part about the meter", "sources": []map[string]string{{"source": letter, "flag": "irrelevant"}}})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	f := decode[feedbackResponse](t, body)
	require.Equal(t, "down", f.Rating)
	require.Equal(t, "DEBUGGING", f.Mode, "the rated turn's mode is kept with the rating")
	require.Len(t, f.Sources, 1)

	resp, body = b.do(t, "POST", "/v1/messages/"+r.MessageID+"/feedback", map[string]any{"rating": "up"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "a second rating replaces the first: %s", body)
	require.Equal(t, f.ID, decode[feedbackResponse](t, body).ID)

	for _, tc := range []struct {
		msg  string
		body any
		want int
	}{
		{r.MessageID, map[string]any{"rating": "meh"}, http.StatusBadRequest},
		{r.MessageID, map[string]any{"rating": "up", "sources": []map[string]string{{"source": "ZZ", "flag": "wrong"}}}, http.StatusBadRequest},
		{r.MessageID, map[string]any{"rating": "up", "sources": []map[string]string{{"source": letter, "flag": "meh"}}}, http.StatusBadRequest},
		{r.MessageID, map[string]any{"rating": "up", "stars": 5}, http.StatusBadRequest},
		{r.UserMessageID, map[string]any{"rating": "up"}, http.StatusBadRequest},
		{"0195b0a4-0000-7000-8000-000000000000", map[string]any{"rating": "up"}, http.StatusNotFound},
		{"not-a-uuid", map[string]any{"rating": "up"}, http.StatusBadRequest},
	} {
		resp, body := b.do(t, "POST", "/v1/messages/"+tc.msg+"/feedback", tc.body)
		require.Equal(t, tc.want, resp.StatusCode, "%v: %s", tc.body, body)
	}

	resp, body = b.do(t, "GET", "/v1/feedback?conversation_id="+r.ConversationID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	page := decode[struct {
		Feedback []feedbackResponse `json:"feedback"`
	}](t, body)
	require.Len(t, page.Feedback, 1)
	require.Equal(t, "up", page.Feedback[0].Rating, "the latest rating")

	resp, body = b.do(t, "GET", "/v1/feedback?format=jsonl", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, 1, strings.Count(strings.TrimSpace(string(body)), "\n")+1)
	resp, body = b.do(t, "GET", "/v1/feedback?format=csv", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, "rating", rows[0][4])
	require.Equal(t, "up", rows[1][4])
	resp, _ = b.do(t, "GET", "/v1/feedback?from=yesterday", nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// JSON comes in pages: a full page says where the next one starts, the last one does not.
	second := b.rate(t, b.askWith(t, map[string]any{"message": "How do smoke alarms work?"}).MessageID, "down")
	type feedbackPage struct {
		Feedback  []feedbackResponse `json:"feedback"`
		NextAfter string             `json:"next_after"`
	}
	resp, body = b.do(t, "GET", "/v1/feedback?limit=1", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	first := decode[feedbackPage](t, body)
	require.Len(t, first.Feedback, 1)
	require.Equal(t, f.ID, first.Feedback[0].ID)
	require.Equal(t, f.ID, first.NextAfter)
	resp, body = b.do(t, "GET", "/v1/feedback?limit=2&after="+first.NextAfter, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	last := decode[feedbackPage](t, body)
	require.Len(t, last.Feedback, 1)
	require.Equal(t, second.ID, last.Feedback[0].ID)
	require.Empty(t, last.NextAfter)
}

// Users' feedback drives the error-rate fallback: once the turns of a mode are rated down far
// above the baseline, that mode falls back to GENERAL (counted, with a gauge), and it comes back
// when the bad ratings have left the window.
func TestFeedbackDrivesErrorRateFallback(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	ec := mode.DefaultErrorRateConfig()
	ec.Now, ec.MinFeedback, ec.Baseline, ec.BaselineSet = clk.Now, 4, 0.1, true
	errs, err := mode.NewErrorRate(ec)
	require.NoError(t, err)
	b := setup(t, options{corpus: true, monitors: ask.Monitors{ErrorRate: errs},
		pipeline: func(c *ask.Config) { c.Mode.Threshold = 0 }}) // no low-confidence fallback in the way
	const question = "how does a smoke alarm detect smoke?"
	first := b.askWith(t, map[string]any{"message": question})
	classified := first.Mode.Label
	require.Equal(t, "classified", first.Mode.Source)

	b.rate(t, first.MessageID, "down")
	for range 3 {
		clk.add(time.Minute)
		r := b.askWith(t, map[string]any{"message": question})
		require.Equal(t, classified, r.Mode.Label, "three ratings are too few to judge")
		b.rate(t, r.MessageID, "down")
	}
	r := b.askWith(t, map[string]any{"message": question})
	require.Equal(t, "GENERAL", r.Mode.Label, "four thumbs down of four: above twice the baseline 0.1")
	require.Equal(t, "fallback", r.Mode.Source)
	require.Contains(t, b.metric(t, `ragd_mode_fallbacks_total{reason="error-rate"}`), " 1")
	require.Contains(t, b.metric(t, "ragd_mode_error_fallback"), fmt.Sprintf(`ragd_mode_error_fallback{mode=%q,tenant=%q} 1`, classified, ragd.DefaultTenant))

	// Users who change their minds are counted once: turning two of the four up leaves 2 of 4
	// bad, still above twice 0.1; turning all four up brings the mode back at once.
	msgs := b.ratedMessages(t)
	for _, m := range msgs[:2] {
		b.rate(t, m, "up")
	}
	require.Contains(t, b.metric(t, "ragd_mode_error_rate"), fmt.Sprintf(`ragd_mode_error_rate{mode=%q,tenant=%q} 0.5`, classified, ragd.DefaultTenant))
	b.rate(t, msgs[0], "up") // the same rating again changes nothing
	require.Contains(t, b.metric(t, "ragd_mode_error_rate"), fmt.Sprintf(`ragd_mode_error_rate{mode=%q,tenant=%q} 0.5`, classified, ragd.DefaultTenant))
	for _, m := range msgs[2:] {
		b.rate(t, m, "up")
	}
	r = b.askWith(t, map[string]any{"message": question})
	require.Equal(t, classified, r.Mode.Label, "no thumbs down left")
	for _, m := range msgs {
		b.rate(t, m, "down")
	}
	r = b.askWith(t, map[string]any{"message": question})
	require.Equal(t, "GENERAL", r.Mode.Label, "down again")

	clk.add(25 * time.Hour) // the window forgets them
	r = b.askWith(t, map[string]any{"message": question})
	require.Equal(t, classified, r.Mode.Label, "recovered")
	require.Contains(t, b.metric(t, "ragd_mode_error_fallback"), fmt.Sprintf(`ragd_mode_error_fallback{mode=%q,tenant=%q} 0`, classified, ragd.DefaultTenant))
}

// Simulated conversations in both arms, rated: the report's figures, z-test and interval are the
// hand computation's, and a treatment rated much worse than the control is rolled back,
// counted in /metrics, and served as the control from then on.
func TestExperimentReportAndRollback(t *testing.T) {
	t.Parallel()
	exp := experiment.DefaultConfig()
	exp.ControlRatio, exp.Block = 0.5, 4
	gc := experiment.DefaultGuardConfig()
	gc.MinFeedback = 8
	guard, err := experiment.NewGuard(exp, gc)
	require.NoError(t, err)
	b := setup(t, options{corpus: true, monitors: ask.Monitors{Experiment: guard},
		pipeline: func(c *ask.Config) { c.Experiment = exp }})

	// Eight conversations of two DEBUGGING turns (a mapped hint: a fixed mode) in two blocks of
	// four: four in each arm. Control's 8 answers are rated 6 up, 2 down; treatment's 3 up, 5
	// down, control rated first.
	turns := map[string][]string{}
	convs := map[string][]string{}
	for i := range 8 {
		one := b.askWith(t, map[string]any{"message": fmt.Sprintf("gas smell after earthquake %d", i), "intent": "debug"})
		two := b.askWith(t, map[string]any{"conversation_id": one.ConversationID, "message": "and the water heater?", "intent": "debug"})
		arm := one.Context.Arm
		require.True(t, one.Context.Treated == (arm == "treatment"))
		turns[arm] = append(turns[arm], one.MessageID, two.MessageID)
		convs[arm] = append(convs[arm], one.ConversationID)
	}
	require.Len(t, turns["control"], 8)
	require.Len(t, turns["treatment"], 8)
	for i, msg := range turns["control"] {
		b.rate(t, msg, map[bool]string{true: "down", false: "up"}[i < 2])
	}
	require.True(t, guard.Enabled())
	for i, msg := range turns["treatment"] {
		b.rate(t, msg, map[bool]string{true: "down", false: "up"}[i < 5])
	}

	// By hand, stratum DEBUGGING and all: control 6/8 = 0.75, treatment 3/8 = 0.375.
	//   diff = -0.375; unpooled se = sqrt(.75·.25/8 + .375·.625/8) = 0.229640
	//   95% interval = -0.375 ± 1.959964·0.229640 = -0.825085 .. 0.075085
	//   pooled p = 9/16; se = sqrt(.5625·.4375·(1/8 + 1/8)) = 0.248039; z = -1.511858
	//   two-sided p = erfc(1.511858/√2) = 0.130570
	//   n for 0.75 -> 0.825 at 80% power = 466 per arm; 466 - 8 = 458 still needed
	resp, body := b.do(t, "GET", "/v1/admin/experiment", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	type arm struct {
		Arm            string  `json:"arm"`
		Turns          int     `json:"turns"`
		Conversations  int     `json:"conversations"`
		Rated          int     `json:"rated"`
		CompletionRate float64 `json:"completion_rate"`
		ErrorRate      float64 `json:"error_rate"`
		ContextTokens  float64 `json:"context_tokens_mean"`
	}
	rep := decode[struct {
		Report struct {
			Control string `json:"control"`
			Strata  []struct {
				Mode        string `json:"mode"`
				Arms        []arm  `json:"arms"`
				Comparisons []struct {
					Arm  string  `json:"arm"`
					Diff float64 `json:"diff"`
					CI   struct {
						Lo float64 `json:"lo"`
						Hi float64 `json:"hi"`
					} `json:"diff_ci"`
					Z           float64 `json:"z"`
					P           float64 `json:"p"`
					Needed      int     `json:"needed_per_arm"`
					StillNeeded int     `json:"still_needed"`
				} `json:"comparisons"`
			} `json:"strata"`
		} `json:"report"`
		TreatmentEnabled bool           `json:"treatment_enabled"`
		Rollbacks        map[string]int `json:"rollbacks"`
	}](t, body)
	require.Equal(t, "control", rep.Report.Control)
	var debugging, all = -1, -1
	for i, st := range rep.Report.Strata {
		switch st.Mode {
		case "DEBUGGING":
			debugging = i
		case "all":
			all = i
		}
	}
	for _, i := range []int{debugging, all} {
		st := rep.Report.Strata[i]
		c, tr := st.Arms[0], st.Arms[1]
		require.Equal(t, [4]any{"control", 8, 4, 8}, [4]any{c.Arm, c.Turns, c.Conversations, c.Rated}, st.Mode)
		require.Equal(t, [4]any{"treatment", 8, 4, 8}, [4]any{tr.Arm, tr.Turns, tr.Conversations, tr.Rated}, st.Mode)
		require.InDelta(t, 0.75, c.CompletionRate, 1e-12)
		require.InDelta(t, 0.25, c.ErrorRate, 1e-12)
		require.InDelta(t, 0.375, tr.CompletionRate, 1e-12)
		require.Positive(t, c.ContextTokens)
		cmp := st.Comparisons[0]
		require.InDelta(t, -0.375, cmp.Diff, 1e-12)
		require.InDelta(t, -0.825085, cmp.CI.Lo, 1e-5)
		require.InDelta(t, 0.075085, cmp.CI.Hi, 1e-5)
		require.InDelta(t, -1.511858, cmp.Z, 1e-5)
		require.InDelta(t, 0.130570, cmp.P, 1e-5)
		require.Equal(t, 466, cmp.Needed)
		require.Equal(t, 458, cmp.StillNeeded)
	}
	require.Zero(t, rep.Report.Strata[0].Arms[0].Turns, "no TASK turns")

	// The treatment's error rate, 5/8, is more than twice the control's 2/8: rolled back.
	require.False(t, rep.TreatmentEnabled)
	require.Equal(t, map[string]int{"error-rate": 1}, rep.Rollbacks)
	require.Contains(t, b.metric(t, "ragd_experiment_rollbacks_total"), `ragd_experiment_rollbacks_total{trigger="error-rate"} 1`)
	require.Contains(t, b.metric(t, "ragd_experiment_treatment_enabled"), "ragd_experiment_treatment_enabled 0")

	// A treatment conversation is now served as the control: GENERAL budgets, its arm kept.
	r := b.askWith(t, map[string]any{"conversation_id": convs["treatment"][0], "message": "and the stove?", "intent": "debug"})
	require.Equal(t, "treatment", r.Context.Arm)
	require.False(t, r.Context.Treated)
	require.Equal(t, "GENERAL", r.Context.Mode)
	require.Contains(t, b.metric(t, `ragd_mode_fallbacks_total{reason="rollback"}`), " 1")
	require.False(t, math.IsNaN(rep.Report.Strata[all].Comparisons[0].P))
}

// What each arm changes: matched treatment budgets add up to GENERAL's total; the recent-window
// arms keep all, 3, 1 or none of the earlier turns.
func TestExperimentArms(t *testing.T) {
	t.Parallel()
	matched := setup(t, options{corpus: true, pipeline: func(c *ask.Config) { c.Experiment.Budget = experiment.Matched }})
	r := matched.askWith(t, map[string]any{"message": "my smoke alarm keeps beeping", "intent": "debug"})
	require.Equal(t, "DEBUGGING", r.Context.Mode)
	total := 0
	for _, s := range r.Context.Sections {
		total += s.Budget
	}
	require.Equal(t, mode.BudgetsFor(mode.General).Total(), total, "DEBUGGING's shares at GENERAL's 53000 tokens")

	b := setup(t, options{corpus: true, pipeline: func(c *ask.Config) {
		c.Experiment.Design, c.Experiment.Block = experiment.RecentWindow, 4
	}})
	items := map[string]int{}
	for i := range 4 {
		one := b.askWith(t, map[string]any{"message": fmt.Sprintf("smoke alarms %d", i), "intent": "explore"})
		last := one
		for _, q := range []string{"and in the kitchen?", "what about the garage?", "and the attic?", "and outside?"} {
			last = b.askWith(t, map[string]any{"conversation_id": one.ConversationID, "message": q, "intent": "explore"})
		}
		for _, s := range last.Context.Sections {
			if s.Name == "recent_window" {
				items[last.Context.Arm] = s.Items
			}
		}
	}
	require.Len(t, items, 4, "a block of four holds every arm once: %v", items)
	require.Equal(t, 1, items["recent-0"], "only the current turn")
	require.Greater(t, items["recent-1"], items["recent-0"])
	require.Greater(t, items["recent-3"], items["recent-1"])
	require.Greater(t, items["recent-all"], items["recent-3"])
}
