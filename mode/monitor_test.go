package mode

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clock is an injected time source that tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// recorder is a slog.Handler that keeps the records it is given.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

func (r *recorder) levels() []slog.Level {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []slog.Level
	for _, rec := range r.records {
		out = append(out, rec.Level)
	}
	return out
}

func TestLowConfidenceAlertsAndRecovers(t *testing.T) {
	t.Parallel()
	c, logs := newClock(), &recorder{}
	cfg := DefaultLowConfidenceConfig()
	cfg.Now, cfg.Logger = c.Now, slog.New(logs)
	l, err := NewLowConfidence(cfg)
	require.NoError(t, err)
	observe := func(conf float64, n int) (changes int, share float64, alerting bool) {
		for range n {
			c.Advance(time.Second)
			var changed bool
			share, alerting, changed = l.Observe(conf)
			if changed {
				changes++
			}
		}
		return changes, share, alerting
	}

	changes, share, alerting := observe(0.9, 60)
	require.Zero(t, changes)
	require.Zero(t, share)
	require.False(t, alerting)

	// 25 low of 85 is 0.294; the 26th makes 26/86 = 0.302 > 0.30.
	changes, _, alerting = observe(cfg.Threshold-0.05, 25)
	require.Zero(t, changes)
	require.False(t, alerting)
	changes, share, alerting = observe(cfg.Threshold-0.01, 1)
	require.Equal(t, 1, changes)
	require.True(t, alerting)
	require.InDelta(t, 26.0/86, share, 1e-12)
	changes, _, alerting = observe(0.1, 50)
	require.Zero(t, changes, "no second enter")
	require.True(t, alerting)

	c.Advance(31 * time.Minute)
	changes, share, alerting = observe(0.95, 60)
	require.Equal(t, 1, changes)
	require.False(t, alerting)
	require.Zero(t, share)
	require.Equal(t, []slog.Level{slog.LevelWarn, slog.LevelInfo}, logs.levels())

	state, alerting := l.State()
	require.Zero(t, state)
	require.False(t, alerting)
}
