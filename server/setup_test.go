package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/bundle"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/embed"
	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/index"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/internal/modeltest"
	"github.com/ragd/ragd/rerank"
	"github.com/ragd/ragd/server"
	"github.com/ragd/ragd/store"
)

// The models are loaded once per test binary: each costs a second to load, and they are safe
// for concurrent use.
var models = struct {
	sync.Once
	embedder *embed.Embedder
	scorer   *rerank.Scorer
	err      error
}{}

func loadModels(t testing.TB) (*embed.Embedder, *rerank.Scorer) {
	t.Helper()
	models.Do(func() {
		cfg := encoder.Config{Runtime: encoder.ORT, ORTLibrary: modeltest.ORTLibrary(), BatchSize: 16}
		cfg.Dir = modeltest.Dir(t, modeltest.Embedding)
		if models.embedder, models.err = embed.Open(cfg); models.err != nil {
			return
		}
		cfg.Dir = modeltest.Dir(t, modeltest.CrossEncoder)
		models.scorer, models.err = rerank.Open(cfg)
	})
	require.NoError(t, models.err)
	return models.embedder, models.scorer
}

type testBundle struct {
	ctx    context.Context
	url    string // the test database
	store  *store.Store
	index  *index.Index
	srv    *httptest.Server
	router routers.Router
	deps   server.Deps
	cfg    server.Config
}

// replica starts a second server on the same database, index and pipeline: another replica of
// the same deployment.
func (b *testBundle) replica(t *testing.T) *httptest.Server {
	t.Helper()
	srv := server.New(b.cfg, b.deps)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(hs.Close)
	return hs
}

// listenStops has srv follow the stop requests of every replica until the test ends.
func (b *testBundle) listenStops(t testing.TB, srv *server.Server) {
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.store.ListenStops(ctx, srv.StopStream)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

type options struct {
	models   bool         // embeddings and the cross-encoder (stand-ins, on ONNX Runtime)
	answerer ask.Answerer // an LLM
	// summarizer writes goal capsules (an LLM); nil leaves them extractive.
	summarizer compact.Summarizer
	intent     ask.IntentClassifier
	monitors   ask.Monitors
	pipeline   func(*ask.Config) // changes to ask.DefaultConfig()
	build      func(bundle.Input) bundle.Bundle
	corpus     bool          // ingest testdata/corpus
	cfg        server.Config // limits
	reranker   ask.Reranker  // a cross-encoder of the test's own, instead of the models'
	logger     *slog.Logger
	// listenStops has the server follow stop requests made to other replicas, as serve does.
	listenStops bool
	keys        bool  // serve with keys only (not open while none exist)
	maxConns    int32 // the store's pool; 0 lets pgx choose
	// cluster, when set, is the test's own PostgreSQL (which it may stop) instead of a database
	// of the shared server.
	cluster *dbtest.Cluster
	// before, when set, makes the test database what it should be before ragd first serves it
	// (as its owner, at url); the server then migrates it, as `ragd serve` does.
	before func(t testing.TB, url string)
}

// setup starts a server on its own database and index, wired as `ragd serve` wires it.
func setup(t testing.TB, o options) *testBundle {
	t.Helper()
	ctx := context.Background()
	// As `ragd serve` runs: logged in as a login that is only a member of ragd_app, the database's
	// owner having migrated.
	scfg := store.Config{EmbeddingDim: dbtest.Dim, MaxConns: o.maxConns}
	b := &testBundle{ctx: ctx}
	if o.cluster != nil {
		b.url, scfg.URL, scfg.Migrate = o.cluster.URL(), o.cluster.AppURL(), true
	} else {
		b.url = dbtest.NewDatabase(t)
		scfg.URL = dbtest.AppURL(t, b.url)
	}
	if o.before != nil {
		o.before(t, b.url)
		scfg.Migrate = true
	}
	scfg.OwnerURL = b.url
	st, err := store.Open(ctx, scfg)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	b.store = st
	ix, err := index.Open(filepath.Join(t.TempDir(), "bm25"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { ix.Close() })
	b.index = ix

	d := ask.Deps{Index: ix, Store: st, Answerer: o.answerer, Intent: o.intent, Monitors: o.monitors,
		BuildBundle: o.build, Summarizer: o.summarizer}
	var emb ingest.Embedder
	if o.models {
		e, s := loadModels(t)
		d.Embedder, d.Reranker, emb = e, s, e
	}
	if o.reranker != nil {
		d.Reranker = o.reranker
	}
	in, err := ingest.New(ingest.Config{}, st, emb)
	require.NoError(t, err)
	if o.corpus {
		_, err := in.Ingest(ctx, in.Walk(ctx, []string{"../testdata/corpus"}), nil)
		require.NoError(t, err)
		_, err = ix.CatchUp(ctx, st)
		require.NoError(t, err)
	}
	cfg := ask.DefaultConfig()
	if o.pipeline != nil {
		o.pipeline(&cfg)
	}
	p, err := ask.New(cfg, d)
	require.NoError(t, err)
	if !o.keys {
		o.cfg.Access.Open = true // the single-user case: no keys, every request the default tenant's
	}
	b.deps = server.Deps{Pipeline: p, Store: st, Index: ix, Ingester: in, Monitors: o.monitors, Experiment: cfg.Experiment, Logger: o.logger}
	b.cfg = o.cfg
	srv := server.New(o.cfg, b.deps)
	b.srv = httptest.NewServer(srv.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(b.srv.Close)
	if o.listenStops {
		b.listenStops(t, srv)
	}

	spec, err := server.Spec()
	require.NoError(t, err)
	b.router, err = gorillamux.NewRouter(spec)
	require.NoError(t, err)
	return b
}

// do sends a request and returns the response with its body read. JSON bodies are encoded from
// v unless v is a string (sent as is). Every response of a documented route is checked against
// the OpenAPI document: status, content type and body schema.
func (b *testBundle) do(t *testing.T, method, path string, v any, header ...string) (*http.Response, []byte) {
	t.Helper()
	return b.doAt(t, b.srv.URL, method, path, v, header...)
}

// doAt is do against the server at base (a replica).
func (b *testBundle) doAt(t *testing.T, base, method, path string, v any, header ...string) (*http.Response, []byte) {
	t.Helper()
	var body io.Reader
	var raw []byte
	switch v := v.(type) {
	case nil:
	case string:
		raw = []byte(v)
	case []byte:
		raw = v
	default:
		var err error
		raw, err = json.Marshal(v)
		require.NoError(t, err)
	}
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(b.ctx, method, base+path, body)
	require.NoError(t, err)
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	b.checkSpec(t, req, raw, resp, got)
	return resp, got
}

func init() {
	// Exports stream text formats; the checker validates their status and content type.
	for _, mt := range []string{"application/x-ndjson", "text/csv"} {
		openapi3filter.RegisterBodyDecoder(mt, openapi3filter.PlainBodyDecoder)
	}
}

func (b *testBundle) checkSpec(t *testing.T, req *http.Request, reqBody []byte, resp *http.Response, body []byte) {
	t.Helper()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return // event payloads are checked by the stream test
	}
	route, params, err := b.router.FindRoute(req)
	require.NoError(t, err, "%s %s is not in openapi.yaml", req.Method, req.URL.Path)
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{ExcludeRequestBody: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	err = openapi3filter.ValidateResponse(b.ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(body)), Options: &openapi3filter.Options{IncludeResponseStatus: true},
	})
	require.NoError(t, err, "%s %s -> %d %s does not match openapi.yaml", req.Method, req.URL.Path, resp.StatusCode, body)
}

// connect opens a connection to the test database.
func (b *testBundle) connect(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(b.ctx, b.url)
	require.NoError(t, err)
	return conn
}

// count returns the rows of a table in the test database, for checking that nothing was written.
func (b *testBundle) count(t *testing.T, table string) int {
	t.Helper()
	conn, err := pgx.Connect(b.ctx, b.url)
	require.NoError(t, err)
	defer conn.Close(b.ctx)
	var n int
	require.NoError(t, conn.QueryRow(b.ctx, "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n))
	return n
}

// exec runs SQL in the test database, for injecting failures.
func (b *testBundle) exec(t *testing.T, sql string) {
	t.Helper()
	conn, err := pgx.Connect(b.ctx, b.url)
	require.NoError(t, err)
	defer conn.Close(b.ctx)
	_, err = conn.Exec(b.ctx, sql)
	require.NoError(t, err)
}

func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(body, &v), "%s", body)
	return v
}
