// Package ask is the turn pipeline: it wires the stages of one /v1/ask turn over small
// interfaces and times each stage. The stages themselves are plain functions in their own
// packages (fuse, dedupe, citations, ...); this is the one place that calls them in order.
package ask

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/dedupe"
	"github.com/ragd/ragd/fuse"
	"github.com/ragd/ragd/ingest"
)

// Method is a retrieval configuration. /v1/ask uses the best one available; eval compares them.
type Method string

const (
	BM25         Method = "bm25"          // bleve BM25 alone
	Vector       Method = "vector"        // pgvector k-NN alone
	Hybrid       Method = "hybrid"        // both, fused by RRF
	HybridRerank Method = "hybrid+rerank" // hybrid, then the cross-encoder reorders the top candidates
)

// Config holds the pipeline's numbers; each is a product default, not a literal in code.
type Config struct {
	// FreshK is how many chunks each fresh retriever returns every turn.
	FreshK int
	// RRFK is the reciprocal rank fusion constant (ranks counted from 1).
	RRFK int
	// Weights of each list in fusion.
	BM25Weight   float64
	VectorWeight float64
	// RerankTop is how many fused candidates the cross-encoder scores.
	RerankTop int
	// KeepMin and KeepMax bound the sources a turn returns: KeepMin always (when found), and up
	// to KeepMax while the next candidate's score ties the KeepMin-th within TieMargin.
	KeepMin   int
	KeepMax   int
	TieMargin float64
	// FactsPerSource is how many key sentences the fact sheet gives each source.
	FactsPerSource int
	// MaxMessageBytes is the longest user message accepted.
	MaxMessageBytes int
}

// WithDefaults fills the zero fields with the product spec's numbers.
func (c Config) WithDefaults() Config {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&c.FreshK, 40)
	set(&c.RRFK, fuse.DefaultK)
	set(&c.RerankTop, 40)
	set(&c.KeepMin, 8)
	set(&c.KeepMax, 10)
	set(&c.FactsPerSource, 2)
	set(&c.MaxMessageBytes, 8192)
	if c.BM25Weight == 0 {
		c.BM25Weight = 1
	}
	if c.VectorWeight == 0 {
		c.VectorWeight = 1
	}
	if c.TieMargin == 0 {
		c.TieMargin = 0.01
	}
	return c
}

// Validate checks the numbers.
func (c Config) Validate() error {
	switch {
	case c.FreshK < 1 || c.FreshK > 1000:
		return fmt.Errorf("fresh k %d out of range 1..1000", c.FreshK)
	case c.RRFK < 1:
		return fmt.Errorf("rrf k %d must be positive", c.RRFK)
	case c.BM25Weight < 0 || c.VectorWeight < 0:
		return errors.New("fusion weights must not be negative")
	case c.RerankTop < 1:
		return fmt.Errorf("rerank top %d must be positive", c.RerankTop)
	case c.KeepMin < 1 || c.KeepMax < c.KeepMin:
		return fmt.Errorf("keep %d..%d: need 1 <= min <= max", c.KeepMin, c.KeepMax)
	case c.FactsPerSource < 1 || c.FactsPerSource > 10:
		return fmt.Errorf("facts per source %d out of range 1..10", c.FactsPerSource)
	case c.MaxMessageBytes < 1:
		return fmt.Errorf("max message bytes %d must be positive", c.MaxMessageBytes)
	}
	return nil
}

// TextIndex is the BM25 index.
type TextIndex interface {
	Search(ctx context.Context, text string, n int) ([]ragd.Hit, error)
}

// Store is what ranking reads from the system of record.
type Store interface {
	SearchVector(ctx context.Context, q []float32, k int, docs []uuid.UUID) ([]ragd.Hit, error)
	Chunks(ctx context.Context, ids []int64) ([]ragd.Chunk, error)
}

// Embedder embeds the query for vector search.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Reranker scores passages against a query with a cross-encoder.
type Reranker interface {
	Score(ctx context.Context, query string, passages []string) ([]float32, error)
}

// ErrNoVectors means a method needs vector search but no embedding model is configured.
var ErrNoVectors = fmt.Errorf("%w: no embedding model is configured, vector search is off", ragd.ErrUnavailable)

// ErrNoReranker means a method needs the cross-encoder but none is configured.
var ErrNoReranker = fmt.Errorf("%w: no cross-encoder is configured, reranking is off", ragd.ErrUnavailable)

// Timing is how long one stage of a turn took.
type Timing struct {
	Stage    string
	Duration time.Duration
}

// Timings are a turn's stage timings in the order the stages ran.
type Timings []Timing

func (ts *Timings) add(stage string, d time.Duration) { *ts = append(*ts, Timing{stage, d}) }

// Candidate is a passage on its way through the pipeline: the strongest chunk of a dedupe group.
type Candidate struct {
	Chunk ragd.Chunk
	// Members are the chunk ids dedupe joined into this candidate, Chunk's first.
	Members []int64
	// PageStart and PageEnd cover every member's pages.
	PageStart, PageEnd int
	// Fused is the RRF score; Ranks the 1-based rank in each list that found the passage.
	Fused float64
	Ranks map[string]int
	// Rerank is the cross-encoder's score, when it ran.
	Rerank   float64
	Reranked bool
}

// Score is the candidate's final score: the cross-encoder's when it ran, else the fused one.
func (c Candidate) Score() float64 {
	if c.Reranked {
		return c.Rerank
	}
	return c.Fused
}

// Ranking is the result of retrieval, dedupe, fusion and reranking for one query, best first.
type Ranking struct {
	Candidates []Candidate
	Timings    Timings
	// Lists says which retrievers ran; Reranked whether the cross-encoder did.
	Lists    []string
	Reranked bool
}

// Deps are the pipeline's collaborators. Index and Store are required. Embedder, Reranker and
// Answerer may be nil: vector search, reranking or answer generation is then skipped, and
// responses say so. Turns may be nil for a pipeline that only ranks (eval).
type Deps struct {
	Index    TextIndex
	Store    Store
	Embedder Embedder
	Reranker Reranker
	Turns    TurnStore
	Answerer Answerer
}

// Pipeline runs turns.
type Pipeline struct {
	cfg Config
	Deps
}

// New returns a pipeline.
func New(cfg Config, d Deps) (*Pipeline, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	if d.Index == nil || d.Store == nil {
		return nil, errors.New("ask: an index and a store are required")
	}
	return &Pipeline{cfg: cfg, Deps: d}, nil
}

// rankOptions say which stages a ranking runs; extra lists (carried sources, graph neighbours)
// join fusion beside the fresh ones.
type rankOptions struct {
	bm25, vector, rerank bool
	extra                []fuse.List
}

// Rank runs the stages a method names, for evaluation and for tools that rank without a
// conversation.
func (p *Pipeline) Rank(ctx context.Context, query string, m Method) (*Ranking, error) {
	o := rankOptions{bm25: m == BM25 || m == Hybrid || m == HybridRerank,
		vector: m == Vector || m == Hybrid || m == HybridRerank, rerank: m == HybridRerank}
	if o.vector && p.Embedder == nil {
		return nil, ErrNoVectors
	}
	if o.rerank && p.Reranker == nil {
		return nil, ErrNoReranker
	}
	return p.rank(ctx, query, o)
}

func (p *Pipeline) rank(ctx context.Context, query string, o rankOptions) (*Ranking, error) {
	var r Ranking
	lists, err := p.retrieve(ctx, query, o, &r.Timings)
	if err != nil {
		return nil, err
	}
	lists = append(lists, o.extra...)
	for _, l := range lists {
		r.Lists = append(r.Lists, l.Name)
	}

	t := time.Now()
	chunks, err := p.Store.Chunks(ctx, unionIDs(lists))
	if err != nil {
		return nil, fmt.Errorf("ask: loading candidates: %w", err)
	}
	r.Timings.add("load", time.Since(t))

	t = time.Now()
	groups, lists := dedupeLists(chunks, lists)
	r.Timings.add("dedupe", time.Since(t))

	t = time.Now()
	fused := fuse.RRF(lists, p.cfg.RRFK)
	byID := make(map[int64]ragd.Chunk, len(chunks))
	for _, c := range chunks {
		byID[c.ID] = c
	}
	for _, f := range fused {
		g := groups[f.ID]
		r.Candidates = append(r.Candidates, Candidate{Chunk: byID[f.ID], Members: g.Members,
			PageStart: g.PageStart, PageEnd: g.PageEnd, Fused: f.Score, Ranks: f.Ranks})
	}
	r.Timings.add("fuse", time.Since(t))

	if o.rerank && len(r.Candidates) > 0 {
		t = time.Now()
		if err := p.rerankTop(ctx, query, r.Candidates); err != nil {
			return nil, err
		}
		r.Reranked = true
		r.Timings.add("rerank", time.Since(t))
	}
	return &r, nil
}

// retrieve runs BM25 and vector search concurrently: bleve works in this process while the
// query is embedded and PostgreSQL answers the k-NN.
func (p *Pipeline) retrieve(ctx context.Context, query string, o rankOptions, ts *Timings) ([]fuse.List, error) {
	var bm25, vec fuse.List
	var tBM25, tEmbed, tVec time.Duration
	g, gctx := errgroup.WithContext(ctx)
	if o.bm25 {
		g.Go(func() error {
			t := time.Now()
			hits, err := p.Index.Search(gctx, query, p.cfg.FreshK)
			tBM25 = time.Since(t)
			if err != nil {
				return fmt.Errorf("ask: bm25: %w", err)
			}
			bm25 = hitList("bm25", p.cfg.BM25Weight, hits)
			return nil
		})
	}
	if o.vector {
		g.Go(func() error {
			t := time.Now()
			q, err := p.Embedder.Embed(gctx, []string{query})
			tEmbed = time.Since(t)
			if err != nil {
				return fmt.Errorf("ask: embedding query: %w", err)
			}
			t = time.Now()
			hits, err := p.Store.SearchVector(gctx, q[0], p.cfg.FreshK, nil)
			tVec = time.Since(t)
			if err != nil {
				return fmt.Errorf("ask: vector: %w", err)
			}
			vec = hitList("vector", p.cfg.VectorWeight, hits)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var lists []fuse.List
	if o.bm25 {
		ts.add("bm25", tBM25)
		lists = append(lists, bm25)
	}
	if o.vector {
		ts.add("embed_query", tEmbed)
		ts.add("vector", tVec)
		lists = append(lists, vec)
	}
	return lists, nil
}

func hitList(name string, w float64, hits []ragd.Hit) fuse.List {
	l := fuse.List{Name: name, Weight: w, IDs: make([]int64, len(hits))}
	for i, h := range hits {
		l.IDs[i] = h.ChunkID
	}
	return l
}

func unionIDs(lists []fuse.List) []int64 {
	seen := map[int64]bool{}
	var ids []int64
	for _, l := range lists {
		for _, id := range l.IDs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// dedupeLists groups the chunks that are one passage and rewrites every list in terms of each
// group's kept chunk, so fusion counts a passage once per list. A chunk's strength is its best
// reciprocal rank in any list. Chunks that left search since retrieval are dropped here, so
// nothing inactive is ever cited.
func dedupeLists(chunks []ragd.Chunk, lists []fuse.List) (map[int64]dedupe.Group, []fuse.List) {
	best := map[int64]float64{}
	for _, l := range lists {
		for i, id := range l.IDs {
			best[id] = max(best[id], 1/float64(i+1))
		}
	}
	items := make([]dedupe.Item, 0, len(chunks))
	for _, c := range chunks {
		if !c.Active {
			continue
		}
		items = append(items, dedupe.Item{ChunkID: c.ID, DocID: c.DocID, Version: c.Version, Ordinal: c.Ordinal,
			PageStart: c.PageStart, PageEnd: c.PageEnd, CharStart: c.CharStart, CharEnd: c.CharEnd,
			Text: c.Text, Strength: best[c.ID]})
	}
	rep := map[int64]int64{}
	groups := map[int64]dedupe.Group{}
	for _, g := range dedupe.Groups(items) {
		groups[g.Keep] = g
		for _, m := range g.Members {
			rep[m] = g.Keep
		}
	}
	out := make([]fuse.List, len(lists))
	for i, l := range lists {
		out[i] = fuse.List{Name: l.Name, Weight: l.Weight}
		for _, id := range l.IDs {
			if k, ok := rep[id]; ok {
				out[i].IDs = append(out[i].IDs, k) // fuse counts a repeat at its first rank only
			}
		}
	}
	return groups, out
}

// rerankTop scores the first RerankTop candidates with the cross-encoder and moves them, in
// score order, ahead of the rest (which keep their fused order).
func (p *Pipeline) rerankTop(ctx context.Context, query string, cs []Candidate) error {
	top := cs[:min(len(cs), p.cfg.RerankTop)]
	passages := make([]string, len(top))
	for i, c := range top {
		passages[i] = ingest.EmbeddingText(c.Chunk.Title, c.Chunk.Heading, c.Chunk.Text)
	}
	scores, err := p.Reranker.Score(ctx, query, passages)
	if err != nil {
		return fmt.Errorf("ask: rerank: %w", err)
	}
	for i := range top {
		top[i].Rerank, top[i].Reranked = float64(scores[i]), true
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].Rerank > top[j].Rerank })
	return nil
}

// keep cuts the ranking to the sources a turn returns: KeepMin, then more up to KeepMax while
// their score ties the KeepMin-th within TieMargin, since dropping one of two equally good
// passages would be arbitrary.
func keep(cs []Candidate, cfg Config) []Candidate {
	if len(cs) <= cfg.KeepMin {
		return cs
	}
	n := cfg.KeepMin
	floor := cs[n-1].Score() - cfg.TieMargin
	for n < len(cs) && n < cfg.KeepMax && cs[n].Score() >= floor {
		n++
	}
	return cs[:n]
}
