package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/ragd/ragd/server"
)

type serveCmd struct {
	AutoMigrate bool          `help:"Apply pending migrations at start-up." default:"true" negatable:""`
	IndexPoll   time.Duration `help:"How often the BM25 index checks for changes it was not notified of." default:"30s"`
}

func (c serveCmd) Run(ctx context.Context, a *app) error {
	if c.IndexPoll <= 0 {
		return fmt.Errorf("--index-poll must be positive")
	}
	if err := a.openModels(true); err != nil {
		return err
	}
	if err := a.openStore(ctx, a.cfg.Schema, c.AutoMigrate); err != nil {
		return err
	}
	if err := a.openIndex(ctx, a.cfg.indexDir(), false); err != nil {
		return err
	}
	go a.followChanges(ctx, c.IndexPoll)

	srv := server.New(server.Deps{Store: a.store, Index: a.index, Logger: a.logger})
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", a.cfg.Listen, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	a.logger.Info("ragd serving", slog.String("addr", ln.Addr().String()), slog.String("version", version()))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
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

// followChanges keeps the BM25 index caught up with writes from any process: the store's
// change notifications wake it, a poll backs them up.
func (a *app) followChanges(ctx context.Context, poll time.Duration) {
	wake := make(chan struct{}, 1)
	go func() {
		for ctx.Err() == nil {
			err := a.store.ListenChanges(ctx, func() {
				select {
				case wake <- struct{}{}:
				default: // a catch-up is already pending
				}
			})
			if ctx.Err() == nil {
				a.logger.Warn("listening for changes failed; retrying", slog.String("error", err.Error()))
				time.Sleep(time.Second)
			}
		}
	}()
	a.index.Follow(ctx, a.store, wake, poll)
}
