package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/eval"
	"github.com/ragd/ragd/index"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/store"
)

type evalScaleCmd struct {
	Data       string `arg:"" optional:"" help:"Evaluation data: passages come from scifact/, dstc11t5/ and mtrag/*/ corpus.jsonl files, questions from scifact/queries.jsonl (test split)." default:"../shared/data" type:"existingdir"`
	Sizes      []int  `help:"Corpus sizes, in chunks." default:"10000,100000,1000000"`
	Questions  int    `help:"Questions asked per size (as two-turn conversations, after 10 warm-up turns)." default:"200"`
	RecallK    int    `help:"Questions whose vector search is checked against an exact scan (recall@fresh-k) and timed when repeated at once (warm); 0 skips." default:"10" name:"recall-queries"`
	Seed       uint64 `help:"Seed of the recombined corpus." default:"1"`
	Reload     bool   `help:"Load every size again even when an earlier run left it loaded."`
	BatchDocs  int    `help:"Documents per write transaction while loading." default:"1000"`
	BuildMem   string `help:"PostgreSQL maintenance_work_mem for building the vector index." default:"4GB" name:"build-mem"`
	JSON       string `help:"Also write the report as JSON to this file ('-' for stdout, the table then goes to stderr)." name:"json"`
	ChunkToken int    `help:"Tokens of each generated document (one chunk at the default --chunk-tokens)." default:"200" name:"doc-tokens"`
	BM25Merge  bool   `help:"Merge the BM25 index into one segment after loading." default:"true" negatable:"" name:"bm25-merge"`
	CPUProfile string `help:"Write a CPU profile of the whole run (go tool pprof) to this file." name:"cpu-profile"`
	Prewarm    bool   `help:"Read the vector (HNSW) index into PostgreSQL's shared buffers (pg_prewarm, a contrib extension; needs a superuser) before the questions. It helps only when shared_buffers holds the whole index."`
}

// Run loads corpora of each size (recombined real passages, vectors from eval.HashEmbedder)
// through ingest and the store, each in its own schema and BM25 index, then asks the same
// questions through the /v1/ask pipeline over each, reranking off.
func (c evalScaleCmd) Run(ctx context.Context, a *app) error {
	if c.Questions < 1 || c.BatchDocs < 1 || c.ChunkToken < 1 || c.RecallK < 0 {
		return errors.New("--questions, --batch-docs and --doc-tokens must be at least 1, --recall-queries not negative")
	}
	for _, n := range c.Sizes {
		if n < 1 {
			return fmt.Errorf("--sizes: %d is not a corpus size", n)
		}
	}
	stop, err := cpuProfile(c.CPUProfile)
	if err != nil {
		return err
	}
	defer stop()
	out := os.Stdout
	if c.JSON == "-" {
		out = os.Stderr
	}
	corpora, err := filepath.Glob(filepath.Join(c.Data, "mtrag", "*", "corpus.jsonl"))
	if err != nil {
		return err
	}
	corpora = append([]string{filepath.Join(c.Data, "scifact", "corpus.jsonl"), filepath.Join(c.Data, "dstc11t5", "corpus.jsonl")}, corpora...)
	passages, err := eval.LoadPassages(ctx, corpora)
	if err != nil {
		return err
	}
	ds, err := eval.LoadBEIR(filepath.Join(c.Data, "scifact"), "test")
	if err != nil {
		return err
	}
	qs := ds.Queries[:min(len(ds.Queries), c.Questions+scaleWarmup)]
	url, owner, err := a.databaseURLs(ctx)
	if err != nil {
		return err
	}
	emb := eval.HashEmbedder{Dimension: 384}
	report := eval.ScaleReport{Notes: []string{
		fmt.Sprintf("%d passages recombined into documents of at most %d tokens (seed %d); vectors from a hash of their words, no model",
			len(passages), c.ChunkToken, c.Seed),
		fmt.Sprintf("%d questions from SciFact test as two-turn conversations through the /v1/ask pipeline, no reranker, after %d warm-up turns", len(qs)-scaleWarmup, scaleWarmup),
	}}
	for _, n := range c.Sizes {
		corpus := eval.ScaleCorpus{Passages: passages, Seed: c.Seed, Tokens: c.ChunkToken, Prefix: fmt.Sprintf("scale-%d", c.Seed)}
		size, err := c.runSize(ctx, a, url, owner, n, corpus, emb, qs)
		if err != nil {
			return fmt.Errorf("%d chunks: %w", n, err)
		}
		report.Sizes = append(report.Sizes, *size)
		if err := report.WriteTable(out); err != nil {
			return err
		}
		fmt.Fprintln(out)
	}
	if c.JSON == "" {
		return nil
	}
	return writeJSON(&report, c.JSON)
}

// scaleWarmup turns are asked before measuring, for caches and connections.
const scaleWarmup = 10

func (c evalScaleCmd) runSize(ctx context.Context, a *app, url, owner string, n int, corpus eval.ScaleCorpus, emb eval.HashEmbedder, qs []eval.Query) (*eval.ScaleSize, error) {
	name := fmt.Sprintf("scale_%d", n)
	dir := filepath.Join(a.cfg.DataDir, "eval", name)
	schema := "eval_" + name
	size := &eval.ScaleSize{Chunks: n, Documents: n}
	loadFile := filepath.Join(dir, "load.json")
	var saved scaleLoad
	if b, err := os.ReadFile(loadFile); err == nil && !c.Reload {
		_ = json.Unmarshal(b, &saved)
	}
	want := scaleLoad{Chunks: n, Seed: c.Seed, Tokens: c.ChunkToken}
	if saved.Chunks != want.Chunks || saved.Seed != want.Seed || saved.Tokens != want.Tokens {
		if err := store.DropSchema(ctx, cmp.Or(owner, url), schema); err != nil {
			return nil, err
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
	}
	// The load drops and rebuilds the vector index, which only the tables' owner may do: this
	// offline loader logs in as the owner (store.LoadThenIndex acts as it only for that; the
	// turns still run as ragd_app, under row-level security).
	if owner != "" {
		url, owner = owner, ""
	}
	st, err := store.Open(ctx, store.Config{URL: url, OwnerURL: owner, Schema: schema, EmbeddingDim: emb.Dim(), Migrate: true, MaxConns: int32(a.cfg.DBMaxConns), EfSearch: a.cfg.EfSearch, Logger: a.logger})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	bm25Dir := filepath.Join(dir, "bm25")
	if saved.Chunks != want.Chunks || saved.Seed != want.Seed || saved.Tokens != want.Tokens {
		saved = want
		if saved.Load, err = c.load(ctx, a, st, bm25Dir, n, corpus, emb); err != nil {
			return nil, err
		}
		size.Loaded = true
		b, _ := json.Marshal(saved)
		if err := os.WriteFile(loadFile, b, 0o644); err != nil {
			return nil, err
		}
	}
	size.Load = saved.Load
	got, err := st.CountChunks(ctx)
	if err != nil {
		return nil, err
	}
	size.Chunks = got
	ix, err := index.OpenWith(bm25Dir, a.logger, a.cfg.indexOptions())
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	if _, err := ix.CatchUp(ctx, st); err != nil {
		return nil, err
	}
	if segs, err := ix.Segments(); err != nil {
		return nil, err
	} else if segs > 1 && c.BM25Merge {
		t := time.Now()
		if err := ix.Compact(ctx); err != nil {
			return nil, err
		}
		saved.Load["7_bm25_merge"] = time.Since(t).Seconds()
		b, _ := json.Marshal(saved)
		if err := os.WriteFile(loadFile, b, 0o644); err != nil {
			return nil, err
		}
	}
	if size.BM25Segments, err = ix.Segments(); err != nil {
		return nil, err
	}

	if size.SharedBuffers, err = st.SharedBuffers(ctx); err != nil {
		return nil, err
	}
	if c.Prewarm {
		t := time.Now()
		if size.PrewarmedBlocks, err = st.Prewarm(ctx, eval.HNSWIndex); err != nil {
			return nil, fmt.Errorf("--prewarm: %w", err)
		}
		size.PrewarmS = time.Since(t).Seconds()
	}
	if err := c.ask(ctx, a, st, ix, emb, qs, size); err != nil {
		return nil, err
	}
	if c.RecallK > 0 {
		if err := vectorChecks(ctx, st, emb, qs[scaleWarmup:], c.RecallK, a.cfg.FreshK, size); err != nil {
			return nil, err
		}
	}
	sizes, err := st.StorageSizes(ctx)
	if err != nil {
		return nil, err
	}
	size.Disk = map[string]int64{"chunks_table": sizes.ChunksTable}
	for k, v := range sizes.Indexes {
		size.Disk[k] = v
	}
	if size.Disk["bm25"], err = eval.DirSize(bm25Dir); err != nil {
		return nil, err
	}
	if m, err := eval.ProcessMemory(os.Getpid()); err == nil {
		size.Ragd = &m
	}
	if dataDir, err := st.DataDirectory(ctx); err == nil && dataDir != "" {
		if pid, err := eval.PostmasterPID(dataDir); err == nil {
			if m, err := eval.TreeMemory(pid); err == nil {
				size.Postgres = &m
			}
		}
	}
	return size, nil
}

// scaleLoad records a loaded corpus in its directory, so a later run can skip loading it.
type scaleLoad struct {
	Chunks int                `json:"chunks"`
	Seed   uint64             `json:"seed"`
	Tokens int                `json:"tokens"`
	Load   map[string]float64 `json:"load_s"`
}

// load writes n documents through ingest with the vector index dropped and built at the end,
// then builds the BM25 index from the store.
func (c evalScaleCmd) load(ctx context.Context, a *app, st *store.Store, bm25Dir string, n int, corpus eval.ScaleCorpus, emb eval.HashEmbedder) (map[string]float64, error) {
	icfg := a.cfg.ingestConfig(a.logger)
	icfg.BatchDocs = c.BatchDocs
	var stats ingest.Stats
	start := time.Now()
	ls, err := st.LoadThenIndex(ctx, store.BulkConfig{MaintenanceWorkMem: c.BuildMem}, func(ctx context.Context, tx *store.Store) error {
		in, err := ingest.New(icfg, tx, emb)
		if err != nil {
			return err
		}
		var done int
		stats, err = in.Ingest(ctx, corpus.Sources(ctx, 0, n), func(ingest.Result) {
			if done++; done%100000 == 0 {
				a.logger.InfoContext(ctx, "loading", slog.Int("documents", done), slog.Duration("elapsed", time.Since(start)))
			}
		})
		if err == nil && stats.Failed > 0 {
			err = fmt.Errorf("%d generated documents failed to ingest", stats.Failed)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	total := time.Since(start)
	t := time.Now()
	ix, err := index.Open(bm25Dir, a.logger)
	if err != nil {
		return nil, err
	}
	if _, err := ix.CatchUp(ctx, st); err != nil {
		ix.Close()
		return nil, err
	}
	if err := ix.Close(); err != nil {
		return nil, err
	}
	bm25 := time.Since(t)
	// Ingest's stages overlap (a pipeline): 1_ingest is its wall time, 2-4 the time each stage
	// was busy within it.
	return map[string]float64{
		"1_ingest":         stats.Elapsed.Seconds(),
		"2_extract_chunk":  stats.Extract.Seconds(),
		"3_embed":          stats.Embed.Seconds(),
		"4_copy":           stats.Store.Seconds(),
		"5_vector_index":   ls.BuildIndex.Seconds(),
		"5_analyze":        ls.Analyze.Seconds(),
		"6_bm25_index":     bm25.Seconds(),
		"total":            (total + bm25).Seconds(),
		"chunks_per_s_all": float64(stats.Chunks) / (total + bm25).Seconds(),
	}, nil
}

// ask runs the questions as two-turn conversations through the pipeline /v1/ask serves,
// without a reranker, and summarizes the stage timings.
func (c evalScaleCmd) ask(ctx context.Context, a *app, st *store.Store, ix *index.Index, emb eval.HashEmbedder, qs []eval.Query, size *eval.ScaleSize) error {
	p, err := a.pipelineWith(ask.Deps{Index: ix, Store: st, Embedder: emb})
	if err != nil {
		return err
	}
	var times eval.TurnTimes
	var conv uuid.UUID
	for i, q := range qs {
		if i%2 == 0 {
			conv = uuid.Nil
		}
		turn, err := p.Ask(ctx, ask.Request{ConversationID: conv, Message: q.Text})
		if err != nil {
			return fmt.Errorf("question %s: %w", q.ID, err)
		}
		conv = turn.ConversationID
		if i < scaleWarmup {
			continue
		}
		times.Add(turn.Timings)
	}
	size.Questions = len(times.AllButRerank)
	size.Order = times.Order
	size.Stages = times.Summaries()
	size.AllButRerank = eval.Summarize(times.AllButRerank)
	size.P50ms = float64(size.AllButRerank.P50) / float64(time.Millisecond)
	size.P95ms = float64(size.AllButRerank.P95) / float64(time.Millisecond)
	return nil
}

// vectorChecks measures, over the first n questions, the share of the exact k nearest chunks
// the HNSW search returns, and how long the search takes when repeated at once: the pages it
// reads are then in PostgreSQL's shared buffers, so that is its latency when the index is warm.
func vectorChecks(ctx context.Context, st *store.Store, emb eval.HashEmbedder, qs []eval.Query, n, k int, size *eval.ScaleSize) error {
	var sum float64
	var warm []time.Duration
	n = min(n, len(qs))
	for _, q := range qs[:n] {
		v, _ := emb.Embed(ctx, []string{q.Text})
		hits, err := st.SearchVector(ctx, v[0], k, nil)
		if err != nil {
			return err
		}
		t := time.Now()
		if _, err := st.SearchVector(ctx, v[0], k, nil); err != nil {
			return err
		}
		warm = append(warm, time.Since(t))
		exact, err := st.SearchVectorExact(ctx, v[0], k)
		if err != nil {
			return err
		}
		got := map[int64]bool{}
		for _, h := range hits {
			got[h.ChunkID] = true
		}
		found := 0
		for _, id := range exact {
			if got[id] {
				found++
			}
		}
		if len(exact) > 0 {
			sum += float64(found) / float64(len(exact))
		}
	}
	size.VectorRecall = sum / float64(n)
	size.VectorRepeated = eval.Summarize(warm)
	return nil
}
