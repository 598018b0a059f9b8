package mode

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
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

// observeAll feeds modes one second apart and returns how many observations reported a change
// and the last result.
func observeAll(d *Drift, c *clock, modes []Mode) (changes int, kl float64, drifting bool) {
	for _, m := range modes {
		c.Advance(time.Second)
		var changed bool
		kl, drifting, changed = d.Observe(m)
		if changed {
			changes++
		}
	}
	return changes, kl, drifting
}

func uniform(n int) []Mode {
	out := make([]Mode, n)
	for i := range out {
		out[i] = Modes[i%len(Modes)]
	}
	return out
}

func repeat(m Mode, n int) []Mode {
	out := make([]Mode, n)
	for i := range out {
		out[i] = m
	}
	return out
}

func TestDriftTripsAndRecovers(t *testing.T) {
	t.Parallel()
	c, logs := newClock(), &recorder{}
	d := NewDrift(DriftConfig{Now: c.Now, Logger: slog.New(logs)})

	changes, kl, drifting := observeAll(d, c, uniform(100))
	require.Zero(t, changes)
	require.False(t, drifting)
	require.Less(t, kl, 0.01, "baseline-like traffic")

	changes, kl, drifting = observeAll(d, c, repeat(Debugging, 200))
	require.Equal(t, 1, changes, "changed exactly once on entering")
	require.True(t, drifting)
	require.Greater(t, kl, 0.1)
	require.Equal(t, []slog.Level{slog.LevelWarn}, logs.levels())

	c.Advance(2 * time.Hour)
	changes, kl, drifting = observeAll(d, c, uniform(100))
	require.Equal(t, 1, changes, "changed exactly once on recovering")
	require.False(t, drifting)
	require.Less(t, kl, 0.01)
	require.Equal(t, []slog.Level{slog.LevelWarn, slog.LevelInfo}, logs.levels())
}

func TestDriftNeedsMinimumObservations(t *testing.T) {
	t.Parallel()
	c := newClock()
	d := NewDrift(DriftConfig{Now: c.Now, Logger: slog.New(&recorder{}), MinObservations: 50})
	changes, kl, drifting := observeAll(d, c, repeat(Debugging, 49))
	require.Zero(t, changes)
	require.False(t, drifting)
	require.Greater(t, kl, 0.1, "divergent, but too little evidence")
	_, _, drifting = observeAll(d, c, repeat(Debugging, 1))
	require.True(t, drifting)
}

func TestDriftKL(t *testing.T) {
	t.Parallel()
	c := newClock()
	d := NewDrift(DriftConfig{Now: c.Now, Logger: slog.New(&recorder{})})
	// Two observations, both TASK, Laplace smoothing: q = (3, 1, 1, 1, 1)/7 against 0.2 each.
	observeAll(d, c, repeat(Task, 2))
	kl, _ := d.State()
	want := 3.0/7*math.Log(3.0/7/0.2) + 4*(1.0/7)*math.Log(1.0/7/0.2)
	require.InDelta(t, want, kl, 1e-9)
}

func TestDriftStateExpiresOldObservations(t *testing.T) {
	t.Parallel()
	c, logs := newClock(), &recorder{}
	d := NewDrift(DriftConfig{Now: c.Now, Logger: slog.New(logs), Window: 10 * time.Minute})
	observeAll(d, c, repeat(Learning, 100))
	_, drifting := d.State()
	require.True(t, drifting)
	c.Advance(11 * time.Minute)
	kl, drifting := d.State()
	require.False(t, drifting)
	require.InDelta(t, 0, kl, 1e-12, "an empty window is smoothed to the baseline")
	require.Equal(t, []slog.Level{slog.LevelWarn, slog.LevelInfo}, logs.levels())
}

func TestDriftConfiguredBaseline(t *testing.T) {
	t.Parallel()
	c := newClock()
	d := NewDrift(DriftConfig{Now: c.Now, Logger: slog.New(&recorder{}), Baseline: map[Mode]float64{Debugging: 9, Task: 1}})
	_, kl, drifting := observeAll(d, c, append(repeat(Debugging, 90), repeat(Task, 10)...))
	require.False(t, drifting, "kl %g", kl)
}

func TestDriftConcurrentUse(t *testing.T) {
	t.Parallel()
	d := NewDrift(DriftConfig{Logger: slog.New(&recorder{})})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				d.Observe(Modes[(g+i)%len(Modes)])
				d.State()
			}
		})
	}
	wg.Wait()
	_, drifting := d.State()
	require.False(t, drifting)
}

func TestLowConfidenceAlertsAndRecovers(t *testing.T) {
	t.Parallel()
	c, logs := newClock(), &recorder{}
	l := NewLowConfidence(LowConfidenceConfig{Now: c.Now, Logger: slog.New(logs)})
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
	changes, _, alerting = observe(0.5, 25)
	require.Zero(t, changes)
	require.False(t, alerting)
	changes, share, alerting = observe(0.69, 1)
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

func TestArmIsStable(t *testing.T) {
	t.Parallel()
	id := [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	first := Arm(id, 0.5)
	for range 100 {
		require.Equal(t, first, Arm(id, 0.5))
	}
	require.Equal(t, Control, Arm(id, 0))
	require.Equal(t, Treatment, Arm(id, 1))
}

func TestArmRatio(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([][16]byte, 10000)
	for i := range ids {
		for j := range ids[i] {
			ids[i][j] = byte(rng.UintN(256))
		}
	}
	for _, ratio := range []float64{0, 0.1, 0.25, 0.5, 0.9, 1} {
		treated := 0
		for _, id := range ids {
			if Arm(id, ratio) == Treatment {
				treated++
			}
		}
		require.InDelta(t, ratio, float64(treated)/float64(len(ids)), 0.02, "ratio %g", ratio)
	}
	// Raising the ratio only moves conversations into treatment.
	for _, id := range ids[:1000] {
		if Arm(id, 0.3) == Treatment {
			require.Equal(t, Treatment, Arm(id, 0.6))
		}
	}
}
