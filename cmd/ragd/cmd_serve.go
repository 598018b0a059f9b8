package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"time"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/intent"
	"github.com/ragd/ragd/llm"
	"github.com/ragd/ragd/redact"
	"github.com/ragd/ragd/server"
)

type serveCmd struct {
	AutoMigrate bool          `help:"Apply pending migrations at start-up." default:"true" negatable:""`
	IndexPoll   time.Duration `help:"How often the BM25 index checks for changes it was not notified of." default:"30s"`
	// Uploads over this size are ingested as jobs (202 and /v1/jobs/{id}) instead of inside
	// their request.
	UploadAsyncBytes int64         `help:"Largest upload ingested inside its request; larger ones become jobs to poll (-1: never)." default:"1048576" name:"upload-async-bytes"`
	IngestTimeout    time.Duration `help:"Longest the ingest of one upload may take, in its request or as a job." default:"10m"`
	// Each post read inside its request may hold up to 64 MiB (more for JSON) before
	// --upload-async-bytes sends it to the job queue, which bounds only what it is given.
	IngestInRequest int           `help:"Most document posts (uploads and URL ingests, admin keys only) read and ingested inside their requests at once; one more is refused at once with 503 and Retry-After (0: no bound)." default:"4" name:"ingest-in-request"`
	Pprof           string        `help:"Serve Go's profiles (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060. Empty serves none." name:"pprof"`
	ReadTimeout     time.Duration `help:"Longest a client may take to send a whole request, body included (a slow trickle holds a connection no longer)." default:"60s"`
	Insecure        bool          `help:"Serve without API keys on a non-loopback address. Without it, ragd refuses to start there until a key exists (ragd keys create)."`
	// MetricsListen keeps /metrics off a public API port: it needs no key (as Prometheus expects)
	// and names every tenant by id with its drift and feedback error rates.
	MetricsListen string `help:"Serve /metrics (Prometheus) alone on this address, apart from the API: 127.0.0.1:9090, or 0.0.0.0:9090 for a Prometheus on another host (firewall it: /metrics needs no key and shows every tenant's id, drift and feedback error rates); off serves it nowhere. Empty serves it on the API's address (--listen) while that is loopback only, and nowhere otherwise." name:"metrics-listen"`
	// WarmTenants bounds the gazetteers built before any turn asks: each costs a query and some
	// CPU (0.3 s for 5,000 titles) and stays in memory, for a tenant that may not ask here.
	WarmTenants int `help:"Build the focus gazetteers of this many tenants (those with documents, the latest to ingest or converse first) in the background after start-up, so that their first turns do not wait for them (0: none; a tenant's first turn builds its own)." default:"8"`
	// InsecureDBLogin is apart from --insecure: serving openly and serving as a privileged
	// login are two different risks, and accepting one should not accept the other.
	InsecureDBLogin bool `help:"Serve although the database login (--database-url) is a superuser, bypasses row-level security or owns ragd's tables, so that row-level security and append-only citations no longer bind ragd's sessions. Without it, ragd refuses to start with such a login." name:"insecure-db-login"`
}

func (c serveCmd) Run(ctx context.Context, a *app) error {
	if c.IndexPoll <= 0 {
		return fmt.Errorf("--index-poll must be positive")
	}
	if c.Pprof != "" {
		if err := loopback(c.Pprof); err != nil {
			return fmt.Errorf("--pprof: %w", err)
		}
	}
	metricsAddr, metricsOff, err := c.metricsAddr(a.cfg.Listen)
	if err != nil {
		return err
	}
	// Bind before anything slow: a taken port is reported at once, not after the models, the
	// database and the index have been opened.
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", a.cfg.Listen, err)
	}
	defer ln.Close() // Serve closes it too; this covers the failures before Serve
	var metricsLn net.Listener
	if metricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", metricsAddr); err != nil {
			return fmt.Errorf("--metrics-listen %s: %w", metricsAddr, err)
		}
		defer metricsLn.Close()
	}

	if c.UploadAsyncBytes == 0 || c.UploadAsyncBytes < -1 {
		return fmt.Errorf("--upload-async-bytes must be positive, or -1 to ingest every upload inside its request")
	}
	if c.IngestTimeout <= 0 {
		return fmt.Errorf("--ingest-timeout must be positive")
	}
	if c.IngestInRequest < 0 {
		return fmt.Errorf("--ingest-in-request must be 0 (no bound) or more, got %d", c.IngestInRequest)
	}
	if c.ReadTimeout <= 0 {
		return fmt.Errorf("--read-timeout must be positive")
	}
	if c.WarmTenants < 0 {
		return fmt.Errorf("--warm-tenants must be 0 (none) or more")
	}
	if err := a.openModels(true); err != nil {
		return err
	}
	if err := a.openStore(ctx, a.cfg.Schema, c.AutoMigrate); err != nil {
		return err
	}
	if err := c.checkLogin(ctx, a); err != nil {
		return err
	}
	if err := a.openIndex(ctx, a.cfg.indexDir(), false); err != nil {
		return err
	}
	if a.cfg.KG {
		if err := a.checkGraph(ctx); err != nil {
			return err
		}
	}
	// The background work ends before Run returns: it holds a pooled connection, and closing the
	// store waits for it.
	bgCtx, stopBackground := context.WithCancel(ctx)
	var background sync.WaitGroup
	defer func() {
		stopBackground()
		background.Wait()
	}()
	background.Go(func() { a.followChanges(bgCtx, c.IndexPoll) })

	mon, err := a.monitors(ctx)
	if err != nil {
		return err
	}
	pipeline, err := a.pipeline(mon)
	if err != nil {
		return err
	}
	// Before ready, not on the first turn: a replica that said ready then made its first user
	// wait some 0.15 s while the classifiers and the token counter loaded.
	warm := time.Now()
	pipeline.Warm()
	a.logger.Info("loaded the classifiers (intent, mode, invariants, word vectors) and the token counter",
		slog.Duration("took", time.Since(warm)))
	in, err := ingest.New(a.cfg.ingestConfig(a.logger), a.store, embedderOrNil(a))
	if err != nil {
		return err
	}
	access, err := c.access(ctx, a, ln.Addr())
	if err != nil {
		return err
	}
	scfg := a.cfg.serverConfig()
	scfg.Access = access
	scfg.AsyncBytes, scfg.IngestTimeout = c.UploadAsyncBytes, c.IngestTimeout
	scfg.IngestInRequest = c.ingestInRequest()
	scfg.MetricsApart = metricsLn != nil || metricsOff || !isLoopback(ln.Addr())
	srv := server.New(scfg, server.Deps{Pipeline: pipeline, Store: a.store, Index: a.index, Ingester: in,
		Monitors: mon, Experiment: a.cfg.experimentConfig(), Logger: a.logger})
	defer srv.Close()
	// Stops asked of another replica reach the stream this one sends.
	background.Go(func() {
		a.keepListening(bgCtx, "stop requests", func(ctx context.Context) error { return a.store.ListenStops(ctx, srv.StopStream) })
	})
	if c.Pprof != "" {
		stop, err := servePprof(c.Pprof, a.logger)
		if err != nil {
			return err
		}
		defer stop()
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: c.ReadTimeout,
		IdleTimeout: 2 * time.Minute}
	// /metrics on its own server, which ends with the API's.
	metricsErrc := make(chan error, 1)
	switch {
	case metricsLn != nil:
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", srv.Metrics())
		ms := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: c.ReadTimeout}
		defer ms.Close()
		go func() { metricsErrc <- ms.Serve(metricsLn) }()
		a.logger.Info("metrics served", slog.String("addr", "http://"+metricsLn.Addr().String()+"/metrics"))
	case metricsOff:
		a.logger.Info("metrics served nowhere (--metrics-listen off)")
	case scfg.MetricsApart:
		a.logger.Warn("/metrics is not served: the API listens on a non-loopback address, and /metrics needs no key and shows every tenant's id, drift and feedback error rates; "+
			"serve it on an address of its own with --metrics-listen (127.0.0.1:9090, or 0.0.0.0:9090 behind a firewall for a Prometheus elsewhere)",
			slog.String("addr", ln.Addr().String()))
	}
	a.logger.Info("ragd serving", slog.String("addr", ln.Addr().String()), slog.String("version", version()))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if c.WarmTenants > 0 {
		background.Go(func() { warmFocus(bgCtx, a, pipeline, c.WarmTenants) })
	}
	if a.embedder != nil {
		background.Go(func() { a.checkVectors(bgCtx) })
	}
	select {
	case err := <-errc:
		return err
	case err := <-metricsErrc:
		return fmt.Errorf("--metrics-listen: %w", err)
	case <-ctx.Done():
	}
	a.logger.Info("shutting down: finishing requests in flight")
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ingestInRequest is --ingest-in-request as server.Config has it: there 0 is the default and a
// negative number no bound.
func (c serveCmd) ingestInRequest() int {
	if c.IngestInRequest == 0 {
		return -1
	}
	return c.IngestInRequest
}

// pipeline wires the turn pipeline from what the app opened, with the guardrails given (none
// for evaluation).
func (a *app) pipeline(mon ask.Monitors) (*ask.Pipeline, error) {
	return a.pipelineWith(ask.Deps{Index: a.index, Store: a.store, Embedder: embedderOrNil(a), Reranker: rerankerOrNil(a), Monitors: mon})
}

// pipelineWith completes d, which names the index, the store, the models and the guardrails,
// with what every turn pipeline of ragd has: the intent classifier and the LLM as configured.
func (a *app) pipelineWith(d ask.Deps) (*ask.Pipeline, error) {
	d.Intent, d.Logger = turnIntent{}, a.logger
	if a.cfg.LLMURL != "" {
		client, err := llm.New(a.cfg.llmConfig())
		if err != nil {
			return nil, err
		}
		d.Answerer, d.Summarizer = client, client
		a.logger.Info("answers and goal capsules are generated", slog.String("llm", redact.URL(a.cfg.LLMURL)), slog.String("model", a.cfg.LLMModel))
	} else {
		a.logger.Info("no LLM configured (--llm-url): answers are the fact sheet, goal capsules extractive")
	}
	return ask.New(a.cfg.askConfig(), d)
}

// checkVectors warns when an embedding model is configured but chunks have no vector: they were
// ingested without one, and only BM25 can find them. It runs in the background, while serving:
// counting reads every chunk.
func (a *app) checkVectors(ctx context.Context) {
	active, with, err := a.store.VectorCoverage(ragd.AllTenants(ctx))
	switch {
	case err != nil:
		if ctx.Err() == nil {
			a.logger.Warn("could not count the chunks without a vector", slog.String("error", err.Error()))
		}
	case with < active:
		a.logger.Warn("some chunks have no vector (ingested without --embed-model), so the vector search cannot find them; "+
			"`ragd reindex --embeddings --embed-model ...` embeds them", slog.Int64("chunks", active), slog.Int64("without_vector", active-with))
	}
}

// checkGraph refuses --kg over chunks that were ingested without the graph, which would
// otherwise serve silently without it, and warns when only some chunks have entities.
func (a *app) checkGraph(ctx context.Context) error {
	active, with, err := a.store.GraphCoverage(ragd.AllTenants(ctx)) // every tenant's: the check is the deployment's
	if err != nil {
		return err
	}
	if active > 0 && with == 0 {
		return fmt.Errorf("--kg: none of the %d chunks has entities recorded (they were ingested without --kg), so the knowledge graph is empty; "+
			"build it with `ragd reindex --graph`, or serve without --kg", active)
	}
	if with < active {
		a.logger.Warn("--kg: some chunks have no entities recorded (ingested without --kg, or naming none); `ragd reindex --graph` adds what is missing",
			slog.Int64("chunks", active), slog.Int64("with_entities", with))
	} else {
		a.logger.Info("knowledge graph on", slog.Int64("chunks", active))
	}
	return nil
}

// followChanges keeps the BM25 index caught up with writes from any process: the store's
// change notifications wake it, a poll backs them up. It returns when ctx ends, after its
// listener has let go of its connection.
func (a *app) followChanges(ctx context.Context, poll time.Duration) {
	wake := make(chan struct{}, 1)
	var listener sync.WaitGroup
	defer listener.Wait()
	listener.Go(func() {
		a.keepListening(ctx, "changes", func(ctx context.Context) error {
			return a.store.ListenChanges(ctx, func() {
				select {
				case wake <- struct{}{}:
				default: // a catch-up is already pending
				}
			})
		})
	})
	a.index.Follow(ctx, a.store, wake, poll)
}

// keepListening runs listen until ctx ends, again a second after each failure (a lost
// connection, a database restart).
func (a *app) keepListening(ctx context.Context, what string, listen func(context.Context) error) {
	for ctx.Err() == nil {
		err := listen(ctx)
		if ctx.Err() != nil {
			return
		}
		a.logger.Warn("listening for "+what+" failed; retrying", slog.String("error", err.Error()))
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// warmFocus builds the focus gazetteers of the n most recently active tenants, one at a time,
// while the server already serves: a tenant's first turn otherwise builds its own (0.3 s for
// 5,000 titles), and one that arrives during the build waits for it rather than starting
// another. It stops between tenants when ctx ends.
func warmFocus(ctx context.Context, a *app, p *ask.Pipeline, n int) {
	start := time.Now()
	ids, err := a.store.ActiveTenantIDs(ctx, n)
	if err != nil {
		if ctx.Err() == nil {
			a.logger.Warn("listing the tenants to build their focus gazetteers failed; their first turns build them", slog.String("error", err.Error()))
		}
		return
	}
	for _, id := range ids {
		if err := p.WarmFocus(ragd.WithPrincipal(ctx, ragd.Principal{Tenant: id})); err != nil {
			if ctx.Err() != nil {
				return
			}
			a.logger.Warn("building a tenant's focus gazetteer failed; its first turn builds it", slog.String("tenant", id.String()), slog.String("error", err.Error()))
		}
	}
	a.logger.Info("built the focus gazetteers", slog.Int("tenants", len(ids)), slog.Duration("took", time.Since(start)))
}

// turnIntent adapts package intent to the pipeline: the trained classifier, and for comparisons
// the entities to retrieve for.
type turnIntent struct{}

func (turnIntent) Classify(t ask.IntentInput) ask.Intent {
	r := intent.Classify(intent.Turn{Text: t.Text, History: t.History, Sources: t.Sources, Focus: t.Focus, Titles: t.Titles})
	in := ask.Intent{Label: string(r.Label), Confidence: r.Confidence}
	if r.Raw == intent.NewTopic {
		in.NewTopic = r.Probs[intent.NewTopic]
	}
	if r.Label == intent.Compare {
		in.Entities = intent.CompareEntities(t.Text, t.History)
	}
	return in
}

// loopback checks that addr listens on a loopback address only: profiles show the program's
// internals and cost CPU to take, so they are never served to the network.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address (use 127.0.0.1:PORT or [::1]:PORT)", addr)
	}
	return nil
}

// isLoopback reports whether a bound address listens on loopback only.
func isLoopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// metricsOffValue is the --metrics-listen value that serves /metrics nowhere.
const metricsOffValue = "off"

// metricsAddr reads --metrics-listen: the address of a listener of its own (addr), or off, or
// neither when it is empty (the API's listener serves /metrics while it is loopback only). The
// API's own address is refused: the two servers cannot share a port.
func (c serveCmd) metricsAddr(listen string) (addr string, off bool, err error) {
	switch c.MetricsListen {
	case "":
		return "", false, nil
	case metricsOffValue:
		return "", true, nil
	}
	host, port, err := net.SplitHostPort(c.MetricsListen)
	if err != nil {
		return "", false, fmt.Errorf("--metrics-listen %q: want HOST:PORT (like 127.0.0.1:9090), or off to serve /metrics nowhere: %w", c.MetricsListen, err)
	}
	everywhere := func(h string) bool { ip := net.ParseIP(h); return h == "" || ip != nil && ip.IsUnspecified() }
	if lhost, lport, err := net.SplitHostPort(listen); err == nil && port == lport && port != "0" &&
		(host == lhost || everywhere(host) || everywhere(lhost)) {
		return "", false, fmt.Errorf("--metrics-listen %s is the API's address (--listen %s): /metrics needs a port of its own, "+
			"or leave --metrics-listen empty to serve it on the API while that listens on loopback only", c.MetricsListen, listen)
	}
	return c.MetricsListen, false, nil
}

// servePprof serves net/http/pprof on its own listener, apart from the API, and returns the
// function that stops it.
func servePprof(addr string, logger *slog.Logger) (func(), error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof: listening on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	logger.Info("profiles served", slog.String("addr", "http://"+ln.Addr().String()+"/debug/pprof/"))
	return func() { _ = hs.Close() }, nil
}

// access decides who may call the API. With keys, every request needs one. Without any, ragd
// serves openly (every request the default tenant's admin) only where that is safe: a loopback
// address, or wherever --insecure says so; elsewhere it refuses to start.
func (c serveCmd) access(ctx context.Context, a *app, addr net.Addr) (server.Access, error) {
	n, err := a.store.KeysMade(ctx)
	if err != nil {
		return server.Access{}, err
	}
	onLoopback := isLoopback(addr)
	switch {
	case n > 0:
		a.logger.Info("API keys required", slog.Int("keys", n))
		return server.Access{Open: onLoopback || c.Insecure}, nil
	case onLoopback:
		a.logger.Warn("no API keys exist: serving openly on loopback, every request as the default tenant's admin; create one with `ragd keys create --role admin` to require keys",
			slog.String("addr", addr.String()))
		return server.Access{Open: true}, nil
	case c.Insecure:
		a.logger.Warn("no API keys exist and --insecure: serving openly on a non-loopback address; anyone who reaches it can read and change everything",
			slog.String("addr", addr.String()))
		return server.Access{Open: true}, nil
	}
	return server.Access{}, fmt.Errorf("--listen %s is not a loopback address and no API key exists: create one with `ragd keys create --role admin` (or pass --insecure to serve openly)", a.cfg.Listen)
}

// checkLogin refuses to serve as a database login that could get past the second wall between
// tenants (row-level security) or rewrite citations (TRUNCATE, disabling the append-only trigger):
// a superuser, a role that bypasses row-level security, or the tables' owner, itself or by SET
// ROLE. The store works as ragd_app, but a session of such a login can switch back. Refusing
// rather than warning keeps ragd safe by default, as keys do on a non-loopback address;
// --insecure-db-login accepts it, loudly.
func (c serveCmd) checkLogin(ctx context.Context, a *app) error {
	l, err := a.store.Login(ctx)
	if err != nil {
		return err
	}
	if len(l.Privileged) == 0 {
		a.logger.Info("database login owns nothing: row-level security binds it", slog.String("login", l.User))
		return nil
	}
	why := strings.Join(l.Privileged, ", ")
	if c.InsecureDBLogin {
		a.logger.Warn("--insecure-db-login: serving as a database login that "+why+"; row-level security and append-only citations do not bind its sessions",
			slog.String("login", l.User))
		return nil
	}
	return fmt.Errorf("the database login %s %s, so a session of ragd's could switch back to it past row-level security and the append-only citations: "+
		"serve as a login that is only a member of ragd_app (--database-url) and migrate as the owner (--migrate-database-url; see the README), "+
		"or pass --insecure-db-login to serve anyway", l.User, why)
}
