package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

type metrics struct {
	requests *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ragd_http_request_duration_seconds",
			Help:    "HTTP request latency by route and status.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15), // 1 ms .. 16 s
		}, []string{"method", "route", "status"}),
	}
	reg.MustRegister(m.requests, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) request(method, route string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched" // keep unknown paths from multiplying series
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Observe(d.Seconds())
}
