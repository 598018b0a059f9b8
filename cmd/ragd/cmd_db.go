package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ragd/ragd/index"
	"github.com/ragd/ragd/ingest"
)

type migrateCmd struct{}

func (migrateCmd) Run(ctx context.Context, a *app) error {
	if err := a.openModels(false); err != nil {
		return err
	}
	if err := a.openStore(ctx, a.cfg.Schema, true); err != nil {
		return err
	}
	fmt.Println("database schema is up to date")
	return nil
}

type reindexCmd struct {
	Embeddings bool `help:"Also embed the active chunks that have no vector (after configuring --embed-model)."`
}

func (c reindexCmd) Run(ctx context.Context, a *app) error {
	if err := a.openModels(false); err != nil {
		return err
	}
	if err := a.openStore(ctx, a.cfg.Schema, false); err != nil {
		return err
	}
	if c.Embeddings {
		if a.embedder == nil {
			return fmt.Errorf("--embeddings needs --embed-model")
		}
		n, err := backfillEmbeddings(ctx, a)
		if err != nil {
			return err
		}
		fmt.Printf("embedded %d chunks that had no vector\n", n)
	}
	start := time.Now()
	ix, err := index.Rebuild(ctx, a.cfg.indexDir(), a.store, a.logger)
	if err != nil {
		return err
	}
	defer ix.Close()
	n, err := ix.DocCount()
	if err != nil {
		return err
	}
	fmt.Printf("rebuilt the BM25 index in %s: %d chunks, up to sequence %d (%s)\n", a.cfg.indexDir(), n, ix.Seq(),
		time.Since(start).Round(time.Millisecond))
	return nil
}

// backfillEmbeddings embeds, page by page, the active chunks stored without a vector.
func backfillEmbeddings(ctx context.Context, a *app) (int, error) {
	total := 0
	for {
		chunks, err := a.store.ChunksWithoutEmbedding(ctx, 256)
		if err != nil || len(chunks) == 0 {
			return total, err
		}
		texts := make([]string, len(chunks))
		ids := make([]int64, len(chunks))
		for i, c := range chunks {
			texts[i] = ingest.EmbeddingText(c.Title, c.Heading, c.Text)
			ids[i] = c.ID
		}
		vecs, err := a.embedder.Embed(ctx, texts)
		if err != nil {
			return total, err
		}
		if err := a.store.SetEmbeddings(ctx, ids, vecs); err != nil {
			return total, err
		}
		total += len(chunks)
		a.logger.InfoContext(ctx, "embedded chunks", slog.Int("done", total))
	}
}
