package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ragd/ragd/embed"
	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/index"
	"github.com/ragd/ragd/pgcluster"
	"github.com/ragd/ragd/rerank"
	"github.com/ragd/ragd/store"
)

// app holds what a command opened, and closes it in reverse order. Commands open only what they
// need: migrate loads at most the embedding model (its dimension fixes the schema), models verify
// never touches the database.
type app struct {
	cfg    *Config
	logger *slog.Logger

	cluster  *pgcluster.Cluster
	store    *store.Store
	index    *index.Index
	embedder *embed.Embedder
	scorer   *rerank.Scorer

	closers []func()
}

func newApp(cfg *Config, logger *slog.Logger) *app { return &app{cfg: cfg, logger: logger} }

func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

// databaseURLs returns the URL ragd works with and the URL of the tables' owner, which migrates
// ("": the first migrates): the configured server, or the private cluster in the data directory,
// started or joined, whose pool logs in as its unprivileged login and whose superuser migrates.
// Leaving the cluster stops it only when no other ragd process uses it (package pgcluster).
func (a *app) databaseURLs(ctx context.Context) (login, owner string, err error) {
	if a.cfg.DatabaseURL != "" {
		return a.cfg.DatabaseURL, a.cfg.MigrateDatabaseURL, nil
	}
	c, err := pgcluster.Start(ctx, pgcluster.Config{Dir: a.cfg.clusterDir(), Logger: a.logger})
	if err != nil {
		return "", "", fmt.Errorf("starting the private PostgreSQL (set --database-url to use a server instead): %w", err)
	}
	a.cluster = c
	a.closers = append(a.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			a.logger.Error("leaving the private PostgreSQL", slog.String("error", err.Error()))
		}
	})
	return c.AppURL(), c.URL(), nil
}

// openModels loads the configured models. The embedding dimension fixes the schema, so models
// come before the store.
func (a *app) openModels(withRerank bool) error {
	if err := a.openEmbedder(); err != nil {
		return err
	}
	if a.embedder == nil {
		a.logger.Warn("no embedding model configured (--embed-model): vector search is off, BM25 only; " +
			"get one with `ragd models pull all-MiniLM-L6-v2`, then --embed-model models/all-MiniLM-L6-v2")
	}
	if !withRerank {
		return nil
	}
	if a.cfg.RerankModel != "" {
		s, err := rerank.Open(a.cfg.modelConfig(a.cfg.RerankModel, a.cfg.RerankBatch, a.logger),
			rerank.WithWindow(a.cfg.RerankWindow))
		if errors.Is(err, rerank.ErrWindow) {
			return fmt.Errorf("--rerank-window: %w", err)
		}
		if err != nil {
			return a.modelError("rerank-model", err)
		}
		a.scorer = s
		a.closers = append(a.closers, func() { s.Close() })
	} else {
		a.logger.Warn("no reranking model configured (--rerank-model): results are not reranked; " +
			"get one with `ragd models pull ms-marco-MiniLM-L-6-v2`, then --rerank-model models/ms-marco-MiniLM-L-6-v2")
	}
	return nil
}

// openEmbedder loads the embedding model when one is configured. migrate and reindex call it
// alone: they need the model's dimension (or its vectors) when there is one, and have no search
// to warn about when there is none.
func (a *app) openEmbedder() error {
	if a.cfg.EmbedModel == "" {
		return nil
	}
	e, err := embed.Open(a.cfg.modelConfig(a.cfg.EmbedModel, a.cfg.EmbedBatch, a.logger))
	if err != nil {
		return a.modelError("embed-model", err)
	}
	a.embedder = e
	a.closers = append(a.closers, func() { e.Close() })
	return nil
}

// modelError names the setting behind a model's error, as the user typed it: the model flag for
// an unusable directory, --ort-library for a library that did not load (or --runtime when
// none was given: the loader path and /usr/local/lib were searched).
func (a *app) modelError(flag string, err error) error {
	if errors.Is(err, encoder.ErrModel) {
		return fmt.Errorf("%s: %w", flagNamed(flag), err)
	}
	return a.runtimeError(err)
}

// runtimeError names the setting behind a runtime library that did not load: --ort-library, or
// --runtime when no library was given. `ragd models verify`, whose model is an argument, uses it alone.
func (a *app) runtimeError(err error) error {
	switch {
	case errors.Is(err, encoder.ErrORTLibrary) && a.cfg.ORTLibrary != "":
		return fmt.Errorf("%s: %w", flagNamed("ort-library"), err)
	case errors.Is(err, encoder.ErrORTLibrary):
		return fmt.Errorf("%s onnxruntime without --ort-library: %w", flagNamed("runtime"), err)
	}
	return err
}

// embeddingDim is the dimension chunks.embedding must have: the model's, or the dimension of the
// default model (all-MiniLM-L6-v2) when none is loaded, so a BM25-only start can be upgraded by
// configuring that model later.
func (a *app) embeddingDim() int {
	if a.embedder != nil {
		return a.embedder.Dim()
	}
	return 384
}

func (a *app) openStore(ctx context.Context, schema string, migrate bool) error {
	url, owner, err := a.databaseURLs(ctx)
	if err != nil {
		return err
	}
	s, err := store.Open(ctx, store.Config{URL: url, OwnerURL: owner, Schema: schema, EmbeddingDim: a.embeddingDim(),
		Migrate: migrate, MaxConns: int32(a.cfg.DBMaxConns), EfSearch: a.cfg.EfSearch, Logger: a.logger})
	if err != nil {
		return err
	}
	a.store = s
	a.closers = append(a.closers, s.Close)
	return nil
}

// openIndex opens the BM25 index in dir and catches it up with the store. An index another
// process holds is an error unless optional is set: `ragd ingest` next to a running server
// leaves the catch-up to the server.
func (a *app) openIndex(ctx context.Context, dir string, optional bool) error {
	ix, err := index.OpenWith(dir, a.logger, a.cfg.indexOptions())
	if errors.Is(err, index.ErrLocked) && optional {
		a.logger.Info("the BM25 index is open in another process (a running server?); it catches up from the database by itself",
			slog.String("dir", dir))
		return nil
	}
	if err != nil {
		return withLockAdvice(err)
	}
	a.index = ix
	a.closers = append(a.closers, func() { ix.Close() })
	_, err = ix.CatchUp(ctx, a.store)
	return err
}

// withLockAdvice says what to do about an index another process holds (index.LockedError says
// which lock, and who holds it when known).
func withLockAdvice(err error) error {
	if !errors.Is(err, index.ErrLocked) {
		return err
	}
	return fmt.Errorf("%w; stop the process that holds it (a running ragd serve?) and try again (a second server needs its own --index-dir)", err)
}
