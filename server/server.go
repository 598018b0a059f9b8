// Package server is ragd's HTTP API on Echo. Handlers decode, validate, call the ask pipeline or
// the store, and encode; they return errors, and one function (problem) turns every error into an
// RFC 9457 problem document with the right status.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ragd/ragd"
)

// Pinger is a dependency that /readyz checks.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Deps are what the handlers call.
type Deps struct {
	Store  Pinger
	Index  Pinger
	Logger *slog.Logger
	// Registry receives the server's metrics; nil uses a new registry.
	Registry *prometheus.Registry
}

// Server is the HTTP API.
type Server struct {
	deps    Deps
	echo    *echo.Echo
	metrics *metrics
}

// New builds the routes.
func New(deps Deps) *Server {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Registry == nil {
		deps.Registry = prometheus.NewRegistry()
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	s := &Server{deps: deps, echo: e, metrics: newMetrics(deps.Registry)}
	e.HTTPErrorHandler = s.problem
	e.Use(s.observe)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(deps.Registry, promhttp.HandlerOpts{})))
	return s
}

// Handler is the server's http.Handler.
func (s *Server) Handler() http.Handler { return s.echo }

// healthz says the process is up; it checks nothing else, so an orchestrator restarts only a
// process that cannot answer at all.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz says whether the database and the index answer, so traffic goes elsewhere until they do.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{}
	ready := true
	for name, p := range map[string]Pinger{"database": s.deps.Store, "index": s.deps.Index} {
		if p == nil {
			continue
		}
		if err := p.Ping(ctx); err != nil {
			checks[name] = err.Error()
			ready = false
		} else {
			checks[name] = "ok"
		}
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	return c.JSON(status, map[string]any{"ready": ready, "checks": checks})
}

// Problem is an RFC 9457 problem document.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// problem maps an error to its status and writes it as a problem document. Errors the client
// caused say what was wrong; others are logged and described only by their status, so internals
// do not leak.
func (s *Server) problem(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, detail := http.StatusInternalServerError, ""
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he):
		status = he.Code
		if m, ok := he.Message.(string); ok {
			detail = m
		}
	case errors.Is(err, ragd.ErrInvalid):
		status, detail = http.StatusBadRequest, err.Error()
	case errors.Is(err, ragd.ErrNotFound):
		status, detail = http.StatusNotFound, err.Error()
	case errors.Is(err, ragd.ErrConflict):
		status, detail = http.StatusConflict, err.Error()
	case errors.Is(err, ragd.ErrUnavailable):
		status, detail = http.StatusServiceUnavailable, err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		status = http.StatusGatewayTimeout
	}
	if status >= 500 {
		s.deps.Logger.ErrorContext(c.Request().Context(), "request failed", slog.String("method", c.Request().Method),
			slog.String("path", c.Path()), slog.Int("status", status), slog.String("error", err.Error()))
	}
	p := Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail}
	c.Response().Header().Set(echo.HeaderContentType, "application/problem+json")
	if err := c.JSON(status, p); err != nil {
		s.deps.Logger.ErrorContext(c.Request().Context(), "writing problem", slog.String("error", err.Error()))
	}
}

// observe counts requests and their latency by route and status.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		s.metrics.request(c.Request().Method, c.Path(), c.Response().Status, time.Since(start))
		return nil
	}
}
