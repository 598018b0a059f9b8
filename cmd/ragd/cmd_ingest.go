package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ingest"
)

type ingestCmd struct {
	Paths  []string `arg:"" help:"Files, directories, JSONL corpora ({\"_id\",\"title\",\"text\"} per line) or http(s) URLs." name:"path"`
	Tenant string   `help:"Tenant the documents belong to (created when new)." default:"default"`
}

func (c ingestCmd) Run(ctx context.Context, a *app) error {
	if err := a.openEmbedder(); err != nil {
		return err
	}
	if a.embedder == nil {
		// Not "vector search is off": the server that searches these chunks may have a model.
		a.logger.Warn("no embedding model configured (--embed-model): the chunks are stored without a vector, so only BM25 finds them; " +
			"ingest with the model the server uses (`ragd models pull all-MiniLM-L6-v2`, then --embed-model models/all-MiniLM-L6-v2), " +
			"or embed them later with `ragd reindex --embeddings --embed-model ...`")
	}
	if err := a.openStore(ctx, a.cfg.Schema, true); err != nil {
		return err
	}
	// The index catches up while ingest runs and once more at the end, or, when a server holds
	// it, in that server.
	if err := a.openIndex(ctx, a.cfg.indexDir(), true); err != nil {
		return err
	}
	tenant, err := a.store.EnsureTenant(ctx, c.Tenant)
	if err != nil {
		return fmt.Errorf("--tenant: %w", err)
	}
	ctx = ragd.WithPrincipal(ctx, ragd.Principal{Tenant: tenant, Role: ragd.RoleAdmin})
	st, err := runIngest(ctx, a, c.Paths, os.Stderr)
	if err != nil {
		return err
	}
	t := time.Now()
	if a.index != nil {
		if _, err := a.index.CatchUp(ctx, a.store); err != nil {
			return err
		}
	}
	printIngestStats(os.Stdout, st, time.Since(t))
	if a.embedder == nil && st.Chunks > 0 {
		a.warnMixedVectors(ctx)
	}
	if st.Failed > 0 {
		return fmt.Errorf("%d of %d sources were not ingested (see the warnings above)", st.Failed, st.Documents)
	}
	return nil
}

// warnMixedVectors warns, after an ingest without a model, when other chunks have vectors: a
// model serves this database, and its vector search cannot find what was just ingested.
func (a *app) warnMixedVectors(ctx context.Context) {
	active, with, err := a.store.VectorCoverage(ragd.AllTenants(ctx))
	switch {
	case err != nil:
		a.logger.Warn("could not count the chunks without a vector", slog.String("error", err.Error()))
	case with > 0:
		a.logger.Warn("other chunks of this database have vectors (an embedding model serves it), but these were stored without one: "+
			"its vector search cannot find them until `ragd reindex --embeddings --embed-model ...` (the server's model) embeds them",
			slog.Int64("chunks", active), slog.Int64("without_vector", active-with))
	}
}

// runIngest ingests paths with a progress bar on w when w is a terminal. When the app holds the
// BM25 index, it catches up in the background as batches commit, so indexing overlaps embedding.
func runIngest(ctx context.Context, a *app, paths []string, w *os.File) (ingest.Stats, error) {
	in, err := ingest.New(a.cfg.ingestConfig(a.logger), a.store, embedderOrNil(a))
	if err != nil {
		return ingest.Stats{}, err
	}
	return ingestSources(ctx, a, in, in.Walk(ctx, paths), ingest.Count(paths), w)
}

// ingestSources ingests, drawing a progress bar on a terminal and catching the BM25 index up as
// batches commit.
func ingestSources(ctx context.Context, a *app, in *ingest.Ingester, sources iter.Seq2[ingest.Source, error], count int, w *os.File) (ingest.Stats, error) {
	var onResults []func()
	if term.IsTerminal(int(w.Fd())) {
		bar := progressbar.NewOptions(count, progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("ingesting"), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("docs"),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		defer bar.Finish()
		onResults = append(onResults, func() { bar.Add(1) })
	}
	if a.index != nil {
		wake := make(chan struct{}, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range wake {
				if _, err := a.index.CatchUp(ctx, a.store); err != nil && ctx.Err() == nil {
					a.logger.WarnContext(ctx, "index catch-up during ingest failed; it catches up at the end", slog.String("error", err.Error()))
				}
			}
		}()
		defer func() { close(wake); <-done }()
		onResults = append(onResults, func() {
			select {
			case wake <- struct{}{}:
			default: // a catch-up is pending already
			}
		})
	}
	return in.Ingest(ctx, sources, func(ingest.Result) {
		for _, f := range onResults {
			f()
		}
	})
}

// embedderOrNil and rerankerOrNil keep a nil model from becoming a non-nil interface.
func embedderOrNil(a *app) interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
} {
	if a.embedder == nil {
		return nil
	}
	return a.embedder
}

func rerankerOrNil(a *app) interface {
	Score(ctx context.Context, query string, passages []string) ([]float32, error)
} {
	if a.scorer == nil {
		return nil
	}
	return a.scorer
}

func printIngestStats(w io.Writer, st ingest.Stats, index time.Duration) {
	total := st.Elapsed + index
	share := func(d time.Duration) string {
		if total == 0 {
			return "0%"
		}
		return fmt.Sprintf("%.0f%%", 100*d.Seconds()/total.Seconds())
	}
	fmt.Fprintf(w, "documents: %d created, %d updated, %d unchanged, %d failed\n", st.Created, st.Updated, st.Unchanged, st.Failed)
	if st.Skipped > 0 {
		more := ""
		if st.Skipped > len(st.SkippedNames) {
			more = ", ..."
		}
		fmt.Fprintf(w, "skipped: %d files in directories, not of an extension ingest reads (%s): %s%s\n",
			st.Skipped, strings.Join(ingest.Extensions(), " "), strings.Join(st.SkippedNames, ", "), more)
	}
	fmt.Fprintf(w, "chunks written: %d in %s (%.1f chunks/s)\n", st.Chunks, total.Round(time.Millisecond), float64(st.Chunks)/total.Seconds())
	// Ingest is a pipeline: the stages run at once, so each is its busy time against the wall
	// time, and the shares may sum past 100%. The BM25 index catches up batch by batch during
	// ingest (logged); what is printed is only its last catch-up, after the last batch.
	fmt.Fprintf(w, "busy time (stages overlap; share of the wall time): extract+chunk %s (%s), embed %s (%s), postgres %s (%s); bm25 index after the last batch %s (%s)\n",
		st.Extract.Round(time.Millisecond), share(st.Extract), st.Embed.Round(time.Millisecond), share(st.Embed),
		st.Store.Round(time.Millisecond), share(st.Store), index.Round(time.Millisecond), share(index))
	if st.Embed > 0 {
		fmt.Fprintf(w, "embed stage: %.1f chunks/s of its busy time\n", float64(st.Chunks)/st.Embed.Seconds())
	}
}
