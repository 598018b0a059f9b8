// Package ask is the turn pipeline: it wires the stages of one /v1/ask turn (fresh retrieval,
// fusion, and the stages later issues add) over small interfaces, and times each stage. The
// stages themselves are plain functions in their own packages; this is the one place that calls
// them in order.
package ask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/fuse"
)

// Method is a retrieval configuration. /v1/ask uses the best one available; eval compares them.
type Method string

const (
	BM25   Method = "bm25"   // bleve BM25 alone
	Vector Method = "vector" // pgvector k-NN alone
	Hybrid Method = "hybrid" // both, fused by RRF
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
}

// WithDefaults fills the zero fields with the product spec's numbers.
func (c Config) WithDefaults() Config {
	if c.FreshK == 0 {
		c.FreshK = 40
	}
	if c.RRFK == 0 {
		c.RRFK = fuse.DefaultK
	}
	if c.BM25Weight == 0 {
		c.BM25Weight = 1
	}
	if c.VectorWeight == 0 {
		c.VectorWeight = 1
	}
	return c
}

// Validate checks the numbers.
func (c Config) Validate() error {
	if c.FreshK < 1 || c.FreshK > 1000 {
		return fmt.Errorf("fresh k %d out of range 1..1000", c.FreshK)
	}
	if c.RRFK < 1 {
		return fmt.Errorf("rrf k %d must be positive", c.RRFK)
	}
	if c.BM25Weight < 0 || c.VectorWeight < 0 {
		return errors.New("fusion weights must not be negative")
	}
	return nil
}

// TextIndex is the BM25 index.
type TextIndex interface {
	Search(ctx context.Context, text string, n int) ([]ragd.Hit, error)
}

// Store is what the pipeline reads from the system of record.
type Store interface {
	SearchVector(ctx context.Context, q []float32, k int, docs []uuid.UUID) ([]ragd.Hit, error)
	Chunks(ctx context.Context, ids []int64) ([]ragd.Chunk, error)
}

// Embedder embeds the query for vector search.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Pipeline runs turns. Embedder may be nil: vector search is then skipped and said so.
type Pipeline struct {
	cfg      Config
	index    TextIndex
	store    Store
	embedder Embedder
}

// New returns a pipeline.
func New(cfg Config, ix TextIndex, st Store, emb Embedder) (*Pipeline, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	return &Pipeline{cfg: cfg, index: ix, store: st, embedder: emb}, nil
}

// ErrNoVectors means a method needs vector search but no embedding model is configured.
var ErrNoVectors = fmt.Errorf("%w: no embedding model is configured, vector search is off", ragd.ErrUnavailable)

// Timing is how long one stage of a turn took.
type Timing struct {
	Stage    string        `json:"stage"`
	Duration time.Duration `json:"-"`
}

// Timings are a turn's stage timings in the order the stages ran.
type Timings []Timing

func (ts *Timings) add(stage string, d time.Duration) { *ts = append(*ts, Timing{stage, d}) }

// Candidate is a chunk on its way through the pipeline.
type Candidate struct {
	Chunk ragd.Chunk
	// Fused is the RRF score; Ranks the 1-based rank in each list that found the chunk.
	Fused float64
	Ranks map[string]int
}

// Ranking is the result of retrieval and fusion for one query.
type Ranking struct {
	Candidates []Candidate
	Timings    Timings
}

// Rank runs the fresh retrievers the method asks for, fuses their lists and loads the chunks.
func (p *Pipeline) Rank(ctx context.Context, query string, m Method) (*Ranking, error) {
	if (m == Vector || m == Hybrid) && p.embedder == nil {
		return nil, ErrNoVectors
	}
	var r Ranking
	lists, err := p.retrieve(ctx, query, m, &r.Timings)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	fused := fuse.RRF(lists, p.cfg.RRFK)
	r.Timings.add("fuse", time.Since(t))

	t = time.Now()
	ids := make([]int64, len(fused))
	for i, f := range fused {
		ids[i] = f.ID
	}
	chunks, err := p.store.Chunks(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("ask: loading candidates: %w", err)
	}
	byID := make(map[int64]ragd.Chunk, len(chunks))
	for _, c := range chunks {
		byID[c.ID] = c
	}
	for _, f := range fused {
		// A chunk that left search between retrieval and loading is dropped, not cited.
		if c, ok := byID[f.ID]; ok && c.Active {
			r.Candidates = append(r.Candidates, Candidate{Chunk: c, Fused: f.Score, Ranks: f.Ranks})
		}
	}
	r.Timings.add("load", time.Since(t))
	return &r, nil
}

// retrieve runs BM25 and vector search concurrently: bleve works in this process while the
// query is embedded and PostgreSQL answers the k-NN.
func (p *Pipeline) retrieve(ctx context.Context, query string, m Method, ts *Timings) ([]fuse.List, error) {
	var bm25, vec fuse.List
	var tBM25, tEmbed, tVec time.Duration
	g, gctx := errgroup.WithContext(ctx)
	if m == BM25 || m == Hybrid {
		g.Go(func() error {
			t := time.Now()
			hits, err := p.index.Search(gctx, query, p.cfg.FreshK)
			tBM25 = time.Since(t)
			if err != nil {
				return fmt.Errorf("ask: bm25: %w", err)
			}
			bm25 = list("bm25", p.cfg.BM25Weight, hits)
			return nil
		})
	}
	if m == Vector || m == Hybrid {
		g.Go(func() error {
			t := time.Now()
			q, err := p.embedder.Embed(gctx, []string{query})
			tEmbed = time.Since(t)
			if err != nil {
				return fmt.Errorf("ask: embedding query: %w", err)
			}
			t = time.Now()
			hits, err := p.store.SearchVector(gctx, q[0], p.cfg.FreshK, nil)
			tVec = time.Since(t)
			if err != nil {
				return fmt.Errorf("ask: vector: %w", err)
			}
			vec = list("vector", p.cfg.VectorWeight, hits)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var lists []fuse.List
	if m == BM25 || m == Hybrid {
		ts.add("bm25", tBM25)
		lists = append(lists, bm25)
	}
	if m == Vector || m == Hybrid {
		ts.add("embed_query", tEmbed)
		ts.add("vector", tVec)
		lists = append(lists, vec)
	}
	return lists, nil
}

func list(name string, w float64, hits []ragd.Hit) fuse.List {
	l := fuse.List{Name: name, Weight: w, IDs: make([]int64, len(hits))}
	for i, h := range hits {
		l.IDs[i] = h.ChunkID
	}
	return l
}
