package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/store"
)

type evalIngestCmd struct {
	Paths []string `arg:"" help:"What to ingest (files, directories, JSONL corpora), e.g. ../shared/data/scifact/corpus.jsonl." name:"path"`
}

// Run measures ingest against the embedding model alone: first the model embeds exactly the
// texts ingest would, batch by batch as ingest forms them, with nothing else running; then the
// same sources are ingested from scratch into their own schema and BM25 index, end to end. The
// ratio of the two throughputs says how close ingest runs to the model's own speed.
func (c evalIngestCmd) Run(ctx context.Context, a *app) error {
	if a.cfg.EmbedModel == "" {
		return errors.New("eval ingest measures against the embedding model: set --embed-model")
	}
	if err := a.openModels(false); err != nil {
		return err
	}
	in, err := ingest.New(a.cfg.ingestConfig(a.logger), nil, a.embedder)
	if err != nil {
		return err
	}
	batches, err := in.EmbeddingTexts(ctx, in.Walk(ctx, c.Paths))
	if err != nil {
		return err
	}
	var chunks int
	t := time.Now()
	for _, texts := range batches {
		if _, err := a.embedder.Embed(ctx, texts); err != nil {
			return err
		}
		chunks += len(texts)
	}
	embedOnly := time.Since(t)

	const schema = "eval_ingest"
	url, owner, err := a.databaseURLs(ctx)
	if err != nil {
		return err
	}
	if err := store.DropSchema(ctx, cmp.Or(owner, url), schema); err != nil {
		return err
	}
	if err := a.openStore(ctx, schema, true); err != nil {
		return err
	}
	indexDir := filepath.Join(a.cfg.DataDir, "eval", "ingest", "bm25")
	if err := os.RemoveAll(indexDir); err != nil {
		return err
	}
	if err := a.openIndex(ctx, indexDir, false); err != nil {
		return err
	}
	t = time.Now()
	st, err := runIngest(ctx, a, c.Paths, os.Stderr)
	if err != nil {
		return err
	}
	if _, err := a.index.CatchUp(ctx, a.store); err != nil {
		return err
	}
	total := time.Since(t)
	printIngestStats(os.Stdout, st, total-st.Elapsed)
	model := float64(chunks) / embedOnly.Seconds()
	full := float64(st.Chunks) / total.Seconds()
	fmt.Printf("embedding alone, the same %d chunks in the same batches: %.1f chunks/s\n", chunks, model)
	fmt.Printf("ingest end to end (extract, chunk, embed, PostgreSQL, BM25 index): %.1f chunks/s\n", full)
	fmt.Printf("ingest / embedding alone = %.3f\n", full/model)
	return nil
}
