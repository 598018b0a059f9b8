package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ragd/ragd"

	"github.com/ragd/ragd/index"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/kg"
	"github.com/ragd/ragd/store"
)

type migrateCmd struct{}

func (migrateCmd) Run(ctx context.Context, a *app) error {
	if err := a.openEmbedder(); err != nil {
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
	Graph      bool `help:"Also build the knowledge graph (for --kg) of the active chunks that have no entities recorded."`
}

func (c reindexCmd) Run(ctx context.Context, a *app) error {
	ctx = ragd.AllTenants(ctx) // maintenance: every tenant's chunks
	if err := a.openEmbedder(); err != nil {
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
	if c.Graph {
		n, err := backfillGraph(ctx, a.store, a.logger)
		if err != nil {
			return err
		}
		fmt.Printf("read %d chunks that had no entities into the knowledge graph\n", n)
	}
	start := time.Now()
	ix, err := index.Rebuild(ctx, a.cfg.indexDir(), a.store, a.logger, a.cfg.indexOptions())
	if errors.Is(err, index.ErrLocked) && (c.Embeddings || c.Graph) {
		// Vectors and entities live in PostgreSQL, not in the BM25 index, and the server that
		// holds the index follows the database: what was asked is done.
		fmt.Printf("did not rebuild the BM25 index in %s: it is open in another process (a running server?), which catches up by itself\n", a.cfg.indexDir())
		return nil
	}
	if err != nil {
		return withLockAdvice(err)
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
			texts[i] = ragd.PassageText(c.Title, c.Heading, c.Text)
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

// backfillGraph records the entities of every active chunk that has none, as ingesting with
// --kg would have, so a corpus ingested without the graph can be served with it. Documents'
// links are not stored, so a graph built afterwards lacks the entities only links name. It
// returns how many chunks it read; running it again reads only the chunks that name nothing.
// It works tenant by tenant: each tenant's chunks name entities of that tenant's graph.
func backfillGraph(ctx context.Context, st *store.Store, logger *slog.Logger) (int, error) {
	tenants, err := st.TenantIDs(ctx)
	if err != nil {
		return 0, err
	}
	done := 0
	for _, t := range tenants {
		n, err := backfillTenantGraph(ragd.WithPrincipal(ctx, ragd.Principal{Tenant: t}), st, logger)
		done += n
		if err != nil {
			return done, fmt.Errorf("tenant %s: %w", t, err)
		}
	}
	return done, nil
}

// backfillTenantGraph is backfillGraph for ctx's tenant.
func backfillTenantGraph(ctx context.Context, st *store.Store, logger *slog.Logger) (int, error) {
	const page = 512
	var after int64
	done := 0
	for {
		chunks, err := st.ChunksWithoutEntities(ctx, after, page)
		if err != nil || len(chunks) == 0 {
			return done, err
		}
		ids := make([]int64, 0, len(chunks))
		entities := make([][]kg.Entity, 0, len(chunks))
		for _, c := range chunks {
			if es := ingest.ChunkEntities(c.Title, c.Text, nil); len(es) > 0 {
				ids, entities = append(ids, c.ID), append(entities, es)
			}
		}
		if err := st.SaveGraph(ctx, ids, entities, store.GraphMaxPerChunk); err != nil {
			return done, err
		}
		done += len(chunks)
		after = chunks[len(chunks)-1].ID
		logger.InfoContext(ctx, "building the graph", slog.Int("chunks", done))
	}
}
