// Package server is ragd's HTTP API on Echo. Handlers decode, validate, call the ask pipeline or
// the store, and encode; they return errors, and one function (problem) turns every error into an
// RFC 9457 problem document with the right status.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/experiment"
	"github.com/ragd/ragd/focus"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/request"
	"github.com/ragd/ragd/web"
)

// Pipeline runs turns.
type Pipeline interface {
	Ask(ctx context.Context, req ask.Request) (*ask.Turn, error)
	// Focus is what a conversation is about as of its last turn, with replies recorded since.
	Focus(ctx context.Context, st *ragd.ConversationState, msgs []ragd.Message) (focus.Focus, error)
	Answer(ctx context.Context, t *ask.Turn, onDelta func(string) error) (string, []string, error)
	CanAnswer() bool
}

// Index is the BM25 index, caught up right after the API changes documents so the next /v1/ask
// finds them.
type Index interface {
	Ping(ctx context.Context) error
	CatchUp(ctx context.Context, src ragd.Store) (int, error)
	// OpenStats is how many tenants' indexes are open, and how many were closed to keep the
	// bound on open indexes (for /metrics).
	OpenStats() (open int, evicted uint64)
}

// Ingester records uploaded documents.
type Ingester interface {
	IngestOne(ctx context.Context, src ingest.Source) (ingest.Result, error)
}

// Config holds the API's limits.
type Config struct {
	MaxBodyBytes   int64 // JSON request bodies
	MaxUploadBytes int64 // document uploads
	MaxReplyBytes  int   // recorded assistant replies
	// MaxPins is the most pinned documents of one conversation (ask.Config.MaxPins).
	MaxPins int
	// Access says who may call the API (keys, or open to the default tenant while none exist).
	Access Access
	// AsyncBytes is the largest upload ingested inside its request; a larger one becomes a job
	// (202). Negative ingests every upload inside its request.
	AsyncBytes int64
	// IngestWorkers run upload jobs; IngestQueue is how many may wait (more is a 503).
	IngestWorkers int
	IngestQueue   int
	// IngestInRequest is how many document posts (uploads and URL fetches) may be read and
	// ingested inside their requests at once; more are a 503. Each may hold MaxUploadBytes, and
	// more for JSON, before AsyncBytes decides whether it becomes a job. Negative: no bound.
	IngestInRequest int
	// IngestTimeout bounds the ingest of one upload, in its request or as a job.
	IngestTimeout time.Duration
	// Fetcher downloads documents posted by URL; nil fetches from public internet addresses only
	// (ingest.FetchConfig{}.Client()).
	Fetcher *http.Client
	// CORSOrigins are the browser origins (scheme://host[:port], or "*") allowed to call the API
	// from another site's page; empty allows none, which is the default.
	CORSOrigins []string
	// MetricsApart leaves /metrics off the API's routes: it needs no key and carries every
	// tenant's series by tenant id, so an API others can reach serves it only on a listener of
	// its own (Metrics), or not at all.
	MetricsApart bool
}

// Validate checks the settings a user gives.
func (c Config) Validate() error {
	for _, o := range c.CORSOrigins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
			u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("CORS origin %q must be scheme://host[:port] (like https://chat.example.com) or *", o)
		}
	}
	return nil
}

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.MaxUploadBytes == 0 {
		c.MaxUploadBytes = 64 << 20
	}
	if c.MaxReplyBytes == 0 {
		c.MaxReplyBytes = 64 << 10
	}
	if c.Fetcher == nil {
		c.Fetcher = ingest.FetchConfig{}.Client()
	}
	if c.MaxPins == 0 {
		c.MaxPins = ask.DefaultConfig().MaxPins
	}
	if c.AsyncBytes == 0 {
		c.AsyncBytes = 1 << 20
	}
	if c.IngestWorkers == 0 {
		c.IngestWorkers = 1
	}
	if c.IngestQueue == 0 {
		c.IngestQueue = 4
	}
	if c.IngestInRequest == 0 {
		c.IngestInRequest = 4
	}
	if c.IngestTimeout == 0 {
		c.IngestTimeout = 10 * time.Minute
	}
	return c
}

// Deps are what the handlers call.
type Deps struct {
	Pipeline Pipeline
	Store    ragd.Store
	Index    Index
	Ingester Ingester
	// Monitors are the pipeline's guardrails, exported as gauges and fed with feedback.
	Monitors ask.Monitors
	// Experiment is the experiment the pipeline runs, for its report.
	Experiment experiment.Config
	Logger     *slog.Logger
	// Registry receives the server's metrics; nil uses a new registry.
	Registry *prometheus.Registry
}

// Server is the HTTP API.
type Server struct {
	cfg     Config
	deps    Deps
	echo    *echo.Echo
	metrics *metrics
	streams streams
	jobs    *jobs
	// ingesting holds a token per document post in flight (Config.IngestInRequest); nil when
	// unbounded.
	ingesting chan struct{}
	open      openCache
	stop      context.CancelFunc // ends the ingest workers
}

// New builds the routes.
func New(cfg Config, deps Deps) *Server {
	cfg = cfg.WithDefaults()
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Registry == nil {
		deps.Registry = prometheus.NewRegistry()
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	s := &Server{cfg: cfg, deps: deps, echo: e, metrics: newMetrics(deps.Registry), jobs: newJobs(cfg.IngestQueue)}
	if cfg.IngestInRequest > 0 {
		s.ingesting = make(chan struct{}, cfg.IngestInRequest)
	}
	var workCtx context.Context
	workCtx, s.stop = context.WithCancel(context.Background())
	for range cfg.IngestWorkers {
		go s.work(workCtx)
	}
	deps.Registry.MustRegister(newMonitors(deps.Monitors), newIndexStats(deps.Index))
	e.HTTPErrorHandler = s.problem
	e.Pre(echo.WrapMiddleware(noSniff))
	e.Use(s.observe)
	if len(cfg.CORSOrigins) > 0 {
		origins := make([]string, len(cfg.CORSOrigins))
		for i, o := range cfg.CORSOrigins {
			origins[i] = strings.TrimSuffix(o, "/")
		}
		e.Use(middleware.CORSWithConfig(middleware.CORSConfig{
			AllowOrigins:  origins,
			AllowMethods:  []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
			AllowHeaders:  []string{echo.HeaderContentType, echo.HeaderAccept, echo.HeaderAuthorization, request.HeaderIdempotencyKey},
			ExposeHeaders: []string{request.HeaderReplayed},
			MaxAge:        600,
		}))
	}

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	if !cfg.MetricsApart {
		e.GET("/metrics", echo.WrapHandler(s.Metrics()))
	}
	e.GET("/openapi.json", s.openapi)

	// The chat and audit page (package web), outside the API.
	e.GET("/", echo.WrapHandler(web.Handler()))
	e.GET("/ui/*", echo.WrapHandler(http.StripPrefix("/ui", web.Handler())))

	// Each /v1 route runs authenticate itself rather than as the group's middleware: Group.Use
	// adds catch-all routes for /v1, on which the role check answered an unknown path, or a known
	// one with the wrong method, with 403, and which Echo's router prefers to its 405.
	// A route whose handler reads no query parameter refuses any (request.Only): a filter it does
	// not have would be ignored, a DELETE with one would act on everything. The five that read
	// some (readsQuery) check their own.
	v1 := e.Group("/v1")
	readsQuery := s.authenticate
	auth := func(next echo.HandlerFunc) echo.HandlerFunc { return s.authenticate(noQuery(next)) }
	v1.POST("/ask", s.ask, auth)
	v1.GET("/conversations", s.listConversations, readsQuery)
	v1.GET("/conversations/:id", s.conversation, auth)
	v1.PATCH("/conversations/:id", s.renameConversation, auth)
	v1.DELETE("/conversations/:id", s.deleteConversation, auth)
	v1.POST("/conversations/:id/messages", s.recordReply, auth)
	v1.GET("/conversations/:id/sources", s.conversationSources, auth)
	v1.PUT("/conversations/:id/pins/:doc_id", s.pin, auth)
	v1.DELETE("/conversations/:id/pins/:doc_id", s.unpin, auth)
	v1.GET("/messages/:id/citations", s.messageCitations, auth)
	v1.POST("/messages/:id/stop", s.stopAnswer, auth)
	v1.GET("/citations", s.citations, readsQuery)
	v1.POST("/messages/:id/feedback", s.feedback, auth)
	v1.GET("/feedback", s.feedbackExport, readsQuery)
	// Admins' routes (server/auth.go: a route it does not list is admin-only), each of the
	// admin's tenant.
	admin := v1.Group("/admin")
	admin.GET("/experiment", s.experimentReport, readsQuery)
	admin.GET("/drift", s.driftState, auth)
	admin.PUT("/drift/baseline", s.setBaseline, auth)
	v1.GET("/documents", s.listDocuments, readsQuery)
	v1.POST("/documents", s.postDocument, auth)
	v1.GET("/documents/:id", s.getDocument, auth)
	v1.DELETE("/documents/:id", s.deleteDocument, auth)
	v1.GET("/jobs/:id", s.getJob, auth)
	v1.POST("/keys", s.createKey, auth)
	v1.GET("/keys", s.listKeys, auth)
	v1.DELETE("/keys/:id", s.revokeKey, auth)
	return s
}

// noQuery refuses a request carrying query parameters, for the routes that read none.
func noQuery(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := request.Only(c.QueryParams()); err != nil {
			return err
		}
		return next(c)
	}
}

// Close stops the ingest workers; a job in flight is cancelled.
func (s *Server) Close() { s.stop() }

// Handler is the server's http.Handler.
func (s *Server) Handler() http.Handler { return s.echo }

// Metrics serves the server's Prometheus metrics, for a listener apart from the API's
// (Config.MetricsApart).
func (s *Server) Metrics() http.Handler {
	return noSniff(promhttp.HandlerFor(s.deps.Registry, promhttp.HandlerOpts{}))
}

// noSniff has browsers take every response as its Content-Type says, as the page's files do
// (package web): an error or export that repeats a client's text is never run as a page or
// script. Set before routing, so 404s and 405s carry it too.
func noSniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

// Routes lists "METHOD /path" for every route of the API (not the page's files), for the
// OpenAPI agreement test.
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.echo.Routes() {
		if r.Path == "/" || strings.HasPrefix(r.Path, "/ui/") {
			continue // the page
		}
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

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
	for name, ping := range map[string]func(context.Context) error{"database": s.deps.Store.Ping, "index": s.deps.Index.Ping} {
		if err := ping(ctx); err != nil {
			// The cause goes to the log; the probe says only what is wrong.
			checks[name] = "unavailable"
			if strings.Contains(err.Error(), "disk full") {
				checks[name] = "disk full"
			}
			s.deps.Logger.WarnContext(ctx, "not ready", slog.String("check", name), slog.String("error", err.Error()))
			ready = false
		} else {
			checks[name] = "ok"
		}
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
		c.Response().Header().Set("Retry-After", retryAfter)
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

// statusClientClosed is the status counted for a request whose client hung up before its answer
// (nginx's 499): not a server error, and nobody reads it.
const statusClientClosed = 499

// retryAfter is the Retry-After of a 503, in seconds: long enough for a database restart or a
// failover to make progress, short enough for a chat user to wait.
const retryAfter = "2"

// statusOf maps an error to its HTTP status and the detail a client may see. Errors the client
// caused say what was wrong; others are described only by their status, so internals (and any
// upstream's error text, which may echo a credential) do not leak.
func statusOf(err error) (int, string) {
	var he *echo.HTTPError
	var re *request.Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &re):
		return re.Status, re.Detail
	case errors.As(err, &he):
		if m, ok := he.Message.(string); ok {
			return he.Code, m
		}
		return he.Code, ""
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over the %d-byte limit", mbe.Limit)
	case errors.Is(err, ragd.ErrUnauthenticated):
		return http.StatusUnauthorized, err.Error()
	case errors.Is(err, ragd.ErrForbidden):
		return http.StatusForbidden, err.Error()
	case errors.Is(err, ragd.ErrInvalid):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, ragd.ErrNotFound):
		return http.StatusNotFound, err.Error()
	case errors.Is(err, ragd.ErrConflict):
		return http.StatusConflict, err.Error()
	case errors.Is(err, ragd.ErrBusy):
		// ragd's own limits, named as its operator set them: no upstream text in it.
		return http.StatusServiceUnavailable, err.Error() + "; retry later"
	case errors.Is(err, ragd.ErrUnavailable):
		return http.StatusServiceUnavailable, "a service ragd depends on is unavailable; retry later"
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, ""
	}
	return http.StatusInternalServerError, ""
}

func problemOf(status int, detail string) Problem {
	title := http.StatusText(status)
	if status == statusClientClosed {
		title = "Client Closed Request"
	}
	return Problem{Type: "about:blank", Title: title, Status: status, Detail: detail}
}

// clientGone reports whether err is only the request's context ending because its client hung up.
func clientGone(c echo.Context, err error) bool {
	return errors.Is(err, context.Canceled) && errors.Is(c.Request().Context().Err(), context.Canceled)
}

// problem writes err as a problem document, logging server-side failures with their cause. A
// client that hung up is logged at debug level and counted as 499, not as a server error.
func (s *Server) problem(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, detail := statusOf(err)
	ctx := c.Request().Context()
	attrs := []any{slog.String("method", c.Request().Method), slog.String("path", c.Path()), slog.String("error", err.Error())}
	switch {
	case clientGone(c, err):
		status, detail = statusClientClosed, "the client closed the request"
		s.deps.Logger.DebugContext(ctx, "client closed the request", attrs...)
	case status == http.StatusServiceUnavailable:
		c.Response().Header().Set("Retry-After", retryAfter)
		s.deps.Logger.WarnContext(ctx, "request failed: unavailable", append(attrs, slog.Int("status", status))...)
	case status >= 500:
		s.deps.Logger.ErrorContext(ctx, "request failed", append(attrs, slog.Int("status", status))...)
	}
	c.Response().Header().Set(echo.HeaderContentType, "application/problem+json")
	if err := c.JSON(status, problemOf(status, detail)); err != nil {
		s.deps.Logger.ErrorContext(c.Request().Context(), "writing problem", slog.String("error", err.Error()))
	}
}

// observe counts requests and their latency by route and status.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err)
		}
		s.metrics.request(c.Request().Method, c.Path(), c.Response().Status, time.Since(start))
		return nil
	}
}

// pathID parses the :id path parameter as a UUID.
func pathID(c echo.Context) (uuid.UUID, error) { return pathUUID(c, "id") }

// pathUUID parses a path parameter as a UUID.
func pathUUID(c echo.Context, name string) (uuid.UUID, error) { return request.ID(name, c.Param(name)) }

// body reads the request's JSON body, of at most MaxBodyBytes.
func (s *Server) body(c echo.Context) ([]byte, error) {
	return request.Body(c.Response(), c.Request(), s.cfg.MaxBodyBytes)
}
