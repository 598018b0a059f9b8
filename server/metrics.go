package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ragd/ragd/ask"
)

type metrics struct {
	requests *prometheus.HistogramVec
	stages   *prometheus.HistogramVec
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
	}
	reg.MustRegister(m.requests, m.stages, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) request(method, route string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched" // keep unknown paths from multiplying series
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Observe(d.Seconds())
}

// turn records the stage timings of one turn.
func (m *metrics) turn(ts ask.Timings) {
	for _, t := range ts {
		m.stages.WithLabelValues(t.Stage).Observe(t.Duration.Seconds())
	}
}
