package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/experiment"
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
			Help: "Turns that fell back, by reason: low-confidence, switching, drift, error-rate (the mode fell back to GENERAL), breach (the bundle lost an invariant and was rebuilt with GENERAL budgets), rollback (a treatment arm served as the control after the experiment was rolled back).",
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
	if t.Context.Fallback {
		m.fallbacks.WithLabelValues("breach").Inc()
	}
	if experiment.IsTreatment(t.Context.Arm) && !t.Context.Treated {
		m.fallbacks.WithLabelValues("rollback").Inc()
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

// monitors exports the guardrails' state at scrape time: per tenant the drift divergence and
// whether it falls back, per tenant and mode the feedback error rate and whether the mode falls
// back, the low-confidence share, and the experiment's treatment switch and rollbacks.
type monitors struct {
	mon ask.Monitors

	driftKL, drifting, errorRate, errorBaseline, errorFailing *prometheus.Desc
	lowShare, lowAlert, treatment, rollbacks                  *prometheus.Desc
}

func newMonitors(mon ask.Monitors) *monitors {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &monitors{mon: mon,
		driftKL:       d("ragd_mode_drift_kl", "KL divergence of the tenant's modes over the drift window (--drift-window) from its baseline (0 while its reference period runs).", "tenant"),
		drifting:      d("ragd_mode_drifting", "1 while the tenant's divergence has stayed above the threshold for the hold period and classification falls back to GENERAL.", "tenant"),
		errorRate:     d("ragd_mode_error_rate", "Share of thumbs-down feedback on the tenant's turns of a mode over the error-rate window.", "tenant", "mode"),
		errorBaseline: d("ragd_mode_error_baseline", "Baseline error rate a mode's is compared with (NaN until the reference holds enough feedback).", "tenant", "mode"),
		errorFailing:  d("ragd_mode_error_fallback", "1 while a mode's error rate exceeds --error-factor times the baseline and the mode falls back to GENERAL.", "tenant", "mode"),
		lowShare:      d("ragd_mode_low_confidence_share", "Share of the last 30 minutes' turns whose mode confidence was under the threshold."),
		lowAlert:      d("ragd_mode_low_confidence_alert", "1 while more than 30% of the last 30 minutes' turns were under the threshold."),
		treatment:     d("ragd_experiment_treatment_enabled", "1 while the experiment's treatment arms get their treatment; 0 after a rollback."),
		rollbacks:     d("ragd_experiment_rollbacks_total", "Experiment rollbacks (treatment switched off), by trigger: error-rate or latency.", "trigger"),
	}
}

func (m *monitors) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.driftKL, m.drifting, m.errorRate, m.errorBaseline, m.errorFailing, m.lowShare, m.lowAlert, m.treatment, m.rollbacks} {
		ch <- d
	}
}

func (m *monitors) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if m.mon.Drift != nil {
		for _, s := range m.mon.Drift.States() {
			gauge(m.driftKL, s.KL, s.Tenant)
			gauge(m.drifting, boolGauge(s.Drifting), s.Tenant)
		}
	}
	if m.mon.ErrorRate != nil {
		for _, s := range m.mon.ErrorRate.States() {
			gauge(m.errorRate, s.Rate, s.Tenant, string(s.Mode))
			gauge(m.errorBaseline, s.Baseline, s.Tenant, string(s.Mode))
			gauge(m.errorFailing, boolGauge(s.Failing), s.Tenant, string(s.Mode))
		}
	}
	if m.mon.LowConfidence != nil {
		share, alert := m.mon.LowConfidence.State()
		gauge(m.lowShare, share)
		gauge(m.lowAlert, boolGauge(alert))
	}
	if g := m.mon.Experiment; g != nil {
		gauge(m.treatment, boolGauge(g.Enabled()))
		counts := g.Rollbacks()
		for _, trigger := range []string{experiment.TriggerErrorRate, experiment.TriggerLatency} {
			ch <- prometheus.MustNewConstMetric(m.rollbacks, prometheus.CounterValue, float64(counts[trigger]), trigger)
		}
	}
}

// indexStats exports the BM25 index's open tenant indexes at scrape time.
type indexStats struct {
	ix            Index
	open, evicted *prometheus.Desc
}

func newIndexStats(ix Index) *indexStats {
	return &indexStats{ix: ix,
		open: prometheus.NewDesc("ragd_bm25_open_tenant_indexes", "Tenants' BM25 indexes open now (at most --bm25-open-tenants while no more are in use at once).", nil, nil),
		evicted: prometheus.NewDesc("ragd_bm25_tenant_index_closes_total",
			"Tenants' BM25 indexes closed to keep --bm25-open-tenants; growing about as fast as searches means most searches reopen their index.", nil, nil),
	}
}

func (m *indexStats) Describe(ch chan<- *prometheus.Desc) { ch <- m.open; ch <- m.evicted }

func (m *indexStats) Collect(ch chan<- prometheus.Metric) {
	open, evicted := m.ix.OpenStats()
	ch <- prometheus.MustNewConstMetric(m.open, prometheus.GaugeValue, float64(open))
	ch <- prometheus.MustNewConstMetric(m.evicted, prometheus.CounterValue, float64(evicted))
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
