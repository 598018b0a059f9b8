package mode

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ordinary is a traffic mix unlike the training data's uniform one: against a uniform baseline
// it diverges by KL 0.155, above the threshold, though nothing is wrong with it.
var ordinary = map[Mode]float64{Learning: 0.40, Task: 0.25, General: 0.15, Debugging: 0.12, Exploration: 0.08}

// traffic draws modes from a distribution with a seeded generator.
type traffic struct{ rng *rand.Rand }

func newTraffic() *traffic { return &traffic{rand.New(rand.NewPCG(3, 5))} }

func (tr *traffic) draw(dist map[Mode]float64) Mode {
	x := tr.rng.Float64()
	for _, m := range Modes {
		if x -= dist[m]; x < 0 {
			return m
		}
	}
	return General
}

// run feeds one turn every step for d, drawn from dist, and returns the first time drifting was
// reported (zero if never), the last state and the largest divergence seen.
func run(d *Drift, c *clock, tr *traffic, dist map[Mode]float64, dur, step time.Duration) (first time.Time, drifting bool, maxKL float64) {
	for end := c.Now().Add(dur); c.Now().Before(end); {
		c.Advance(step)
		var kl float64
		kl, drifting, _ = d.Observe("acme", tr.draw(dist))
		maxKL = max(maxKL, kl)
		if drifting && first.IsZero() {
			first = c.Now()
		}
	}
	return first, drifting, maxKL
}

func newTestDrift(t *testing.T, c *clock, logs *recorder, change func(*DriftConfig)) *Drift {
	t.Helper()
	cfg := DefaultDriftConfig()
	cfg.Now, cfg.Logger = c.Now, slog.New(logs)
	if change != nil {
		change(&cfg)
	}
	d, err := NewDrift(cfg)
	require.NoError(t, err)
	return d
}

// A tenant's first day is its reference period; afterwards two hours of the same ordinary mix
// never trip, although that mix is far from the training data's uniform distribution. A real
// shift trips only after it has lasted the hold period, and recovers when traffic returns.
func TestDriftOrdinaryTrafficAndARealShift(t *testing.T) {
	t.Parallel()
	c, logs, tr := newClock(), &recorder{}, newTraffic()
	var saved []Baseline
	d := newTestDrift(t, c, logs, func(cfg *DriftConfig) {
		cfg.Save = func(tenant string, b Baseline) error {
			require.Equal(t, "acme", tenant)
			saved = append(saved, b)
			return nil
		}
	})
	const step = 30 * time.Second

	first, _, _ := run(d, c, tr, ordinary, 24*time.Hour+step, step)
	require.True(t, first.IsZero(), "no drift without a baseline")
	b, ok := d.Baseline("acme")
	require.True(t, ok, "the reference period made a baseline")
	require.Equal(t, BaselineObserved, b.Source)
	require.Len(t, saved, 1, "and it was saved once")
	require.InDelta(t, 0.40, b.Distribution[Learning], 0.03)

	first, _, ordinaryKL := run(d, c, tr, ordinary, 2*time.Hour, step)
	require.True(t, first.IsZero(), "two hours of ordinary traffic never drift")
	kl, drifting := d.State("acme")
	require.False(t, drifting)
	require.Less(t, kl, 0.02)

	shift := map[Mode]float64{Debugging: 0.8, Learning: 0.2}
	start := c.Now()
	shiftStart := start
	first, drifting, shiftKL := run(d, c, tr, shift, 100*time.Minute, step)
	require.True(t, drifting, "a shift that lasts trips")
	require.GreaterOrEqual(t, first.Sub(start), time.Hour, "but only after KL stayed above 0.1 for the hold period")
	require.Less(t, first.Sub(start), 90*time.Minute)
	require.Equal(t, []slog.Level{slog.LevelInfo, slog.LevelWarn}, logs.levels(), "baseline observed, then one alert")

	start = c.Now()
	var recovered time.Time
	for end := start.Add(2 * time.Hour); c.Now().Before(end); {
		c.Advance(step)
		if _, drifting, changed := d.Observe("acme", tr.draw(ordinary)); changed && !drifting {
			recovered = c.Now()
		}
	}
	require.False(t, recovered.IsZero(), "recovers when traffic returns to normal")
	require.Less(t, recovered.Sub(start), time.Hour)
	require.Equal(t, []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelInfo}, logs.levels())
	_, drifting = d.State("acme")
	require.False(t, drifting)
	t.Logf("one turn per %s; baseline observed over the first 24h: %v", step, b.Distribution)
	t.Logf("ordinary mix, 2h after the reference day: largest KL %.4f (threshold 0.1), never drifting; against a uniform baseline the same mix is KL %.3f",
		ordinaryKL, kl1(ordinary))
	t.Logf("shift to %v: largest KL %.3f, fallback after %s (hold 1h); back to the ordinary mix: recovered after %s",
		shift, shiftKL, first.Sub(shiftStart), recovered.Sub(start))
}

// kl1 is KL(dist || uniform) in nats.
func kl1(dist map[Mode]float64) float64 {
	var kl float64
	for _, p := range dist {
		if p > 0 {
			kl += p * math.Log(p*float64(len(Modes)))
		}
	}
	return kl
}

// A saved baseline survives a restart: the new monitor judges at once, with no reference period.
func TestDriftPersistedBaseline(t *testing.T) {
	t.Parallel()
	c, tr := newClock(), newTraffic()
	b := Baseline{Distribution: ordinary, Source: BaselineObserved, Observations: 2880}
	d := newTestDrift(t, c, &recorder{}, func(cfg *DriftConfig) {
		cfg.Baselines, cfg.Hold = map[string]Baseline{"acme": b}, 0
	})
	got, ok := d.Baseline("acme")
	require.True(t, ok)
	require.Equal(t, b, got)
	_, drifting, _ := run(d, c, tr, map[Mode]float64{General: 1}, 10*time.Minute, 5*time.Second)
	require.True(t, drifting, "judged against the persisted baseline from the first turn")

	_, ok = d.Baseline("other")
	require.False(t, ok, "another tenant observes its own reference period")
}

// An operator's baseline, set for every tenant or for one, replaces the observed one.
func TestDriftSetBaseline(t *testing.T) {
	t.Parallel()
	c, tr := newClock(), newTraffic()
	var saved []string
	d := newTestDrift(t, c, &recorder{}, func(cfg *DriftConfig) {
		cfg.Hold = 0
		cfg.Save = func(tenant string, b Baseline) error { saved = append(saved, tenant+":"+b.Source); return nil }
	})
	debug, err := ParseBaseline("DEBUGGING=0.9, task=0.1")
	require.NoError(t, err)
	require.NoError(t, d.SetBaseline(Any, debug))
	_, drifting, _ := run(d, c, tr, map[Mode]float64{Debugging: 0.9, Task: 0.1}, 10*time.Minute, 5*time.Second)
	require.False(t, drifting, "traffic like the set baseline")

	require.NoError(t, d.SetBaseline("acme", Baseline{Distribution: ordinary}))
	_, drifting, _ = run(d, c, tr, map[Mode]float64{Debugging: 0.9, Task: 0.1}, time.Minute, 5*time.Second)
	require.True(t, drifting, "the tenant's own baseline replaced the default")
	require.Equal(t, []string{"*:set", "acme:set"}, saved)

	require.Error(t, d.SetBaseline("acme", Baseline{Distribution: map[Mode]float64{"CHAT": 1}}))
	require.Error(t, d.SetBaseline("acme", Baseline{Distribution: map[Mode]float64{Task: 0}}))
	_, err = ParseBaseline("TASK:0.5")
	require.Error(t, err)
}

// Shares that are each finite but add up past a float64 are refused: set, they made the tenant's
// divergence NaN for good.
func TestDriftBaselineMustAddUpToANumber(t *testing.T) {
	t.Parallel()
	_, err := ParseBaseline("TASK=1e308,GENERAL=1e308")
	require.ErrorContains(t, err, "add up to more than a float64 holds")
	d := newTestDrift(t, newClock(), &recorder{}, nil)
	require.Error(t, d.SetBaseline("acme", Baseline{Distribution: map[Mode]float64{Task: 1e308, General: 1e308}}))
	_, ok := d.Baseline("acme")
	require.False(t, ok, "refused, so nothing set")
	_, err = NewDrift(DriftConfig{Window: time.Hour, Reference: time.Hour, MinObservations: 1, Smoothing: 1,
		Baselines: map[string]Baseline{"acme": {Distribution: map[Mode]float64{Task: 1e308, General: 1e308}}}})
	require.Error(t, err)
	_, err = ParseBaseline("TASK=1e307,GENERAL=1e307")
	require.NoError(t, err, "large shares that add up to a number are a distribution")
}

func TestDriftKL(t *testing.T) {
	t.Parallel()
	c := newClock()
	d := newTestDrift(t, c, &recorder{}, func(cfg *DriftConfig) {
		cfg.Baselines = map[string]Baseline{Any: {Distribution: map[Mode]float64{Task: 1, Exploration: 1, Debugging: 1, Learning: 1, General: 1}}}
	})
	// Two observations, both TASK, one pseudo-count per mode: q = (3, 1, 1, 1, 1)/7 against
	// (nearly) 0.2 each (the floor of 1e-3 is shared equally, so exactly 0.2).
	for range 2 {
		c.Advance(time.Second)
		d.Observe("acme", Task)
	}
	kl, drifting := d.State("acme")
	want := 3.0/7*math.Log(3.0/7/0.2) + 4*(1.0/7)*math.Log(1.0/7/0.2)
	require.InDelta(t, want, kl, 1e-9)
	require.False(t, drifting, "two observations are too few")
}

func TestDriftConfigMeansWhatItSays(t *testing.T) {
	t.Parallel()
	for _, change := range []func(*DriftConfig){
		func(c *DriftConfig) { c.Window = 0 },
		func(c *DriftConfig) { c.Threshold = -1 },
		func(c *DriftConfig) { c.Hold = -time.Second },
		func(c *DriftConfig) { c.Reference = 0 },
		func(c *DriftConfig) { c.MinObservations = 0 },
		func(c *DriftConfig) { c.Smoothing = 0 },
		func(c *DriftConfig) { c.Baselines = map[string]Baseline{"x": {}} },
	} {
		cfg := DefaultDriftConfig()
		change(&cfg)
		_, err := NewDrift(cfg)
		require.Error(t, err, "%+v", cfg)
	}
	cfg := DefaultDriftConfig()
	cfg.Threshold, cfg.Hold = 0, 0
	_, err := NewDrift(cfg)
	require.NoError(t, err, "threshold 0 and hold 0 are settings")
}

func TestDriftConcurrentUse(t *testing.T) {
	t.Parallel()
	d := newTestDrift(t, newClock(), &recorder{}, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				d.Observe([]string{"a", "b"}[g%2], Modes[(g+i)%len(Modes)])
				d.State("a")
				d.States()
			}
		})
	}
	wg.Wait()
	require.Len(t, d.States(), 2)
}
