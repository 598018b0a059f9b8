package mode

import (
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Feedback drives the error-rate fallback: a mode whose thumbs-down rate runs above twice the
// baseline falls back, and recovers once its bad ratings leave the window.
func TestErrorRateFallbackAndRecovery(t *testing.T) {
	t.Parallel()
	c, logs := newClock(), &recorder{}
	cfg := DefaultErrorRateConfig()
	cfg.Now, cfg.Logger = c.Now, slog.New(logs)
	e, err := NewErrorRate(cfg)
	require.NoError(t, err)
	rate := func(good, bad int, m Mode) {
		for i := range good + bad {
			c.Advance(time.Minute)
			e.Observe("acme", m, i >= good)
		}
	}
	// A week of ordinary feedback: 10% bad in every mode.
	for range 7 * 24 {
		for _, m := range Modes {
			rate(9, 1, m)
		}
		c.Advance(10 * time.Minute)
	}
	for _, m := range Modes {
		require.False(t, e.Failing("acme", m), m)
	}

	// DEBUGGING answers go bad: 80 of 120 ratings in two hours, which puts the day's rate at
	// (24+80)/360 = 0.29 against a baseline of about 0.11.
	rate(40, 80, Debugging)
	require.True(t, e.Failing("acme", Debugging))
	require.False(t, e.Failing("acme", Learning), "only the failing mode")
	var st ModeErrors
	for _, s := range e.States() {
		if s.Tenant == "acme" && s.Mode == Debugging {
			st = s
		}
	}
	require.True(t, st.Failing)
	require.Greater(t, st.Rate, 2*st.Baseline)
	require.InDelta(t, 0.1, st.Baseline, 0.02)
	require.Equal(t, []slog.Level{slog.LevelWarn}, logs.levels())

	// A day later the bad ratings have left the window, and good ones came in.
	c.Advance(24 * time.Hour)
	rate(25, 0, Debugging)
	require.False(t, e.Failing("acme", Debugging))
	require.Equal(t, []slog.Level{slog.LevelWarn, slog.LevelInfo}, logs.levels())
}

func TestErrorRateNeedsEvidence(t *testing.T) {
	t.Parallel()
	c := newClock()
	cfg := DefaultErrorRateConfig()
	cfg.Now, cfg.Logger = c.Now, slog.New(&recorder{})
	e, err := NewErrorRate(cfg)
	require.NoError(t, err)
	for range 19 {
		c.Advance(time.Minute)
		e.Observe("acme", Task, true)
	}
	require.False(t, e.Failing("acme", Task), "19 ratings are too few")

	cfg.BaselineSet, cfg.Baseline, cfg.MinFeedback = true, 0.05, 5
	e, err = NewErrorRate(cfg)
	require.NoError(t, err)
	for i := range 5 {
		c.Advance(time.Minute)
		e.Observe("acme", Task, i == 0)
	}
	require.True(t, e.Failing("acme", Task), "1 in 5 is above twice a set baseline of 0.05")
	for _, s := range e.States() {
		if s.Mode == Task {
			require.InDelta(t, 0.2, s.Rate, 1e-12)
			require.Equal(t, 0.05, s.Baseline)
		} else {
			require.True(t, math.IsNaN(s.Rate) || s.Rate == 0)
		}
	}

	for _, change := range []func(*ErrorRateConfig){
		func(c *ErrorRateConfig) { c.Window = 0 },
		func(c *ErrorRateConfig) { c.Factor = 0.5 },
		func(c *ErrorRateConfig) { c.MinFeedback = 0 },
		func(c *ErrorRateConfig) { c.BaselineSet, c.Baseline = true, 2 },
	} {
		cfg := DefaultErrorRateConfig()
		change(&cfg)
		_, err := NewErrorRate(cfg)
		require.Error(t, err)
	}
}

// A rating its user changes counts once, as it stands now: four thumbs down send the mode to
// GENERAL, and the same four turned up bring it back with no extra ratings counted.
func TestErrorRateRevisedRatings(t *testing.T) {
	t.Parallel()
	c := newClock()
	cfg := DefaultErrorRateConfig()
	cfg.Now, cfg.Logger, cfg.MinFeedback, cfg.Baseline, cfg.BaselineSet = c.Now, slog.New(slog.DiscardHandler), 4, 0.1, true
	e, err := NewErrorRate(cfg)
	require.NoError(t, err)
	for range 4 {
		c.Advance(time.Minute)
		e.Observe("acme", Task, true)
	}
	require.True(t, e.Failing("acme", Task))
	for range 4 {
		e.Revise("acme", Task, false)
	}
	require.False(t, e.Failing("acme", Task))
	st := e.States()[modeIndex(Task)]
	require.Equal(t, [2]any{4, 0.0}, [2]any{st.Feedback, st.Rate}, "four ratings, none of them bad")
}
