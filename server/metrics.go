package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ragd/ragd/ask"
)

type metrics struct {
	requests    *prometheus.HistogramVec
	stages      *prometheus.HistogramVec
	modes       *prometheus.CounterVec
	confidence  prometheus.Histogram
	tokens      *prometheus.HistogramVec
	invariants  *prometheus.CounterVec
	breaches    prometheus.Counter
	fallbacks   *prometheus.CounterVec
	turnIntents *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ragd_http_request_duration_seconds",
			Help:    "HTTP request latency by route and status.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15), // 1 ms .. 16 s
		}, []string{"method", "route", "status"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ragd_ask_stage_duration_seconds",
			Help:    "Latency of each stage of a /v1/ask turn (stage=total for the whole turn).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18), // 0.1 ms .. 13 s
		}, []string{"stage"}),
		modes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ragd_mode_turns_total",
			Help: "Turns by interaction mode, how it was decided (mapped, classified, fallback) and A/B arm.",
		}, []string{"mode", "source", "arm"}),
		confidence: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ragd_mode_confidence",
			Help:    "Confidence of the mode of each turn (1 for a mapped hint).",
			Buckets: []float64{0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1},
		}),
		tokens: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ragd_context_tokens",
			Help:    "Tokens used by each section of the context bundle (section=total for the bundle).",
			Buckets: prometheus.ExponentialBuckets(64, 2, 11), // 64 .. 65536
		}, []string{"section"}),
		invariants: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ragd_context_invariants_total",
			Help: "Sticky invariants placed in context bundles, by type.",
		}, []string{"type"}),
		breaches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ragd_context_breaches_total",
			Help: "Bundles that lost a sticky invariant of priority >= 800 and were rebuilt with GENERAL budgets.",
		}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ragd_mode_fallbacks_total",
			Help: "Turns whose mode fell back to GENERAL, by reason (low-confidence, switching, drift).",
		}, []string{"reason"}),
		turnIntents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ragd_turn_intents_total",
			Help: "Turns by intent: new-topic, drill-down, compare, same-sources.",
		}, []string{"intent"}),
	}
	reg.MustRegister(m.requests, m.stages, m.modes, m.confidence, m.tokens, m.invariants, m.breaches, m.fallbacks,
		m.turnIntents, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) request(method, route string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched" // keep unknown paths from multiplying series
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Observe(d.Seconds())
}

// turn records one turn's stage timings, mode, context bundle and intent.
func (m *metrics) turn(t *ask.Turn) {
	for _, st := range t.Timings {
		m.stages.WithLabelValues(st.Stage).Observe(st.Duration.Seconds())
	}
	m.modes.WithLabelValues(string(t.Mode.Mode), string(t.Mode.Source), t.Context.Arm).Inc()
	m.confidence.Observe(t.Mode.Confidence)
	if t.Mode.Reason != "" {
		m.fallbacks.WithLabelValues(t.Mode.Reason).Inc()
	}
	for _, s := range t.Context.Sections {
		m.tokens.WithLabelValues(s.Name).Observe(float64(s.Used))
	}
	m.tokens.WithLabelValues("total").Observe(float64(t.Context.UsedTokens))
	for _, inv := range t.Context.Invariants {
		m.invariants.WithLabelValues(string(inv.Type)).Inc()
	}
	if len(t.Context.Breach) > 0 {
		m.breaches.Inc()
	}
	m.turnIntents.WithLabelValues(t.Intent.Label).Inc()
}

// monitorGauges exports the mode monitors' current state at scrape time.
func monitorGauges(reg *prometheus.Registry, mon ask.Monitors) {
	if mon.Drift != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ragd_mode_drift_kl",
			Help: "KL divergence of the last hour's mode distribution from the baseline.",
		}, func() float64 { kl, _ := mon.Drift.State(); return kl }))
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ragd_mode_drifting",
			Help: "1 while the mode distribution drifts (above 0.1) and classification falls back to GENERAL.",
		}, func() float64 { _, d := mon.Drift.State(); return boolGauge(d) }))
	}
	if mon.LowConfidence != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ragd_mode_low_confidence_share",
			Help: "Share of the last 30 minutes' turns whose mode confidence was under 0.70.",
		}, func() float64 { s, _ := mon.LowConfidence.State(); return s }))
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ragd_mode_low_confidence_alert",
			Help: "1 while more than 30% of the last 30 minutes' turns were under 0.70 confidence.",
		}, func() float64 { _, a := mon.LowConfidence.State(); return boolGauge(a) }))
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
