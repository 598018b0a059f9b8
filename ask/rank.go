package ask

// Ranking: a plan's searches run, their lists deduped and fused with the plan's other lists,
// the top reranked; then the cut to the sources a turn returns, and their details.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/dedupe"
	"github.com/ragd/ragd/fuse"
)

// Method is a retrieval configuration. /v1/ask uses the best one available; eval compares them.
type Method string

const (
	BM25         Method = "bm25"          // bleve BM25 alone
	Vector       Method = "vector"        // pgvector k-NN alone
	Hybrid       Method = "hybrid"        // both, fused by RRF
	HybridRerank Method = "hybrid+rerank" // hybrid, then the cross-encoder reorders the top candidates
)

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
	// Queries holds the text of each search, by list name.
	Queries map[string]string
}

// reused is what a turn computed before ranking that ranking would otherwise compute again:
// question embeddings by text, and cross-encoder scores by chunk (re-scoring carried sources
// makes both).
type reused struct {
	vectors map[string][]float32
	scores  map[int64]float64
}

// Rank runs the stages a method names, for evaluation and for tools that rank without a
// conversation.
func (p *Pipeline) Rank(ctx context.Context, query string, m Method) (*Ranking, error) {
	vector := m == Vector || m == Hybrid || m == HybridRerank
	rerank := m == HybridRerank
	if vector && p.Embedder == nil {
		return nil, ErrNoVectors
	}
	if rerank && p.Reranker == nil {
		return nil, ErrNoReranker
	}
	searches := freshSearches(p.cfg, query, vector, 1)
	if m == Vector {
		searches = searches[1:]
	}
	return p.rank(ctx, query, turnPlan{searches: searches}, rerank, reused{}, newChunkCache(p.Store))
}

// rank runs a plan: its searches, then dedupe and fusion of their lists with its extra ones, then,
// when rerank, the cross-encoder over the top.
func (p *Pipeline) rank(ctx context.Context, query string, pl turnPlan, rerank bool, prior reused, cache *chunkCache) (*Ranking, error) {
	// A weight of 0 is a list turned off: it is not searched, and fuse would count it as 1.
	searches := slices.DeleteFunc(slices.Clone(pl.searches), func(s search) bool { return s.weight <= 0 })
	extra := slices.DeleteFunc(slices.Clone(pl.extra), func(l fuse.List) bool { return l.Weight <= 0 })
	var r Ranking
	lists, timings, err := p.retrieve(ctx, searches, prior.vectors)
	if err != nil {
		return nil, err
	}
	r.Timings = timings
	lists = append(lists, extra...)
	for _, l := range lists {
		r.Lists = append(r.Lists, l.Name)
	}
	r.Queries = map[string]string{}
	for _, s := range searches {
		r.Queries[s.name] = s.text
		if s.title != "" {
			r.Queries[s.name] += " [title: " + s.title + "]"
		}
	}

	t := time.Now()
	chunks, err := cache.get(ctx, unionIDs(lists))
	if err != nil {
		return nil, err
	}
	r.Timings.add("load", time.Since(t))

	t = time.Now()
	groups, lists := dedupeLists(chunks, lists, p.cfg.RRFK)
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

	if rerank && len(r.Candidates) > 0 {
		t = time.Now()
		if err := p.rerankTop(ctx, query, r.Candidates, prior.scores); err != nil {
			return nil, err
		}
		r.Reranked = true
		r.Timings.add("rerank", time.Since(t))
	}
	return &r, nil
}

// retrieve runs the searches concurrently (bleve works in this process while PostgreSQL answers
// the k-NN), after embedding, in one batch, the texts the vector searches need.
func (p *Pipeline) retrieve(ctx context.Context, searches []search, known map[string][]float32) ([]fuse.List, Timings, error) {
	vectors := maps.Clone(known)
	if vectors == nil {
		vectors = map[string][]float32{}
	}
	var ts Timings
	var texts []string
	for _, s := range searches {
		if _, ok := vectors[s.text]; s.vector && !ok && !slices.Contains(texts, s.text) {
			texts = append(texts, s.text)
		}
	}
	if len(texts) > 0 {
		t := time.Now()
		vecs, err := p.Embedder.Embed(ctx, texts)
		if err != nil {
			return nil, nil, fmt.Errorf("ask: embedding the question: %w", err)
		}
		for i, text := range texts {
			vectors[text] = vecs[i]
		}
		ts.add("embed_query", time.Since(t))
	}
	lists := make([]fuse.List, len(searches))
	took := make([]time.Duration, len(searches))
	g, gctx := errgroup.WithContext(ctx)
	for i, s := range searches {
		g.Go(func() error {
			t := time.Now()
			var hits []ragd.Hit
			var err error
			switch {
			case s.vector:
				hits, err = p.Store.SearchVector(gctx, vectors[s.text], p.cfg.FreshK, s.docs)
			case s.chunks != nil:
				hits, err = p.Index.SearchIn(gctx, s.text, p.cfg.FreshK, s.chunks)
			case s.title != "":
				hits, err = p.Index.SearchTitle(gctx, s.text, s.title, p.cfg.FreshK)
			default:
				hits, err = p.Index.Search(gctx, s.text, p.cfg.FreshK)
			}
			took[i] = time.Since(t)
			if err != nil {
				return fmt.Errorf("ask: %s search: %w", s.name, err)
			}
			lists[i] = hitList(s.name, s.weight, hits)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	for i, s := range searches {
		ts.add(s.name, took[i])
	}
	return lists, ts, nil
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
// group's kept chunk, so fusion counts a passage once per list. The kept chunk is the member with
// the largest fusion vote of its own (the RRF score it would have alone), so the chunk that most
// lists rank high represents the passage. Chunks that left search since retrieval are dropped
// here, so nothing inactive is ever cited.
func dedupeLists(chunks []ragd.Chunk, lists []fuse.List, k int) (map[int64]dedupe.Group, []fuse.List) {
	vote := map[int64]float64{}
	for _, f := range fuse.RRF(lists, k) {
		vote[f.ID] = f.Score
	}
	items := make([]dedupe.Item, 0, len(chunks))
	for _, c := range chunks {
		if !c.Active {
			continue
		}
		items = append(items, dedupe.Item{ChunkID: c.ID, DocID: c.DocID, Version: c.Version, Ordinal: c.Ordinal,
			PageStart: c.PageStart, PageEnd: c.PageEnd, CharStart: c.CharStart, CharEnd: c.CharEnd,
			Text: c.Text, Strength: vote[c.ID]})
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
// score order, ahead of the rest (which keep their fused order). Chunks in known were scored
// earlier in the turn and are not scored again.
func (p *Pipeline) rerankTop(ctx context.Context, query string, cs []Candidate, known map[int64]float64) error {
	top := cs[:min(len(cs), p.cfg.RerankTop)]
	var passages []string
	var todo []int
	for i, c := range top {
		if score, ok := known[c.Chunk.ID]; ok {
			top[i].Rerank, top[i].Reranked = score, true
			continue
		}
		passages = append(passages, passage(c.Chunk))
		todo = append(todo, i)
	}
	scores, err := p.Reranker.Score(ctx, query, passages)
	if err != nil {
		return fmt.Errorf("ask: rerank: %w", err)
	}
	for j, i := range todo {
		top[i].Rerank, top[i].Reranked = float64(scores[j]), true
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].Rerank > top[j].Rerank })
	return nil
}

// passage is what the cross-encoder reads of a chunk: the title and heading path give it the
// context its text alone may lack, as for the embedding.
func passage(c ragd.Chunk) string { return ragd.PassageText(c.Title, c.Heading, c.Text) }

// firstPerDocument keeps the best passage of each document, in order: a turn's sources have one
// source per document, so one letter names one source.
func firstPerDocument(cs []Candidate) []Candidate {
	seen := make(map[uuid.UUID]bool, len(cs))
	out := make([]Candidate, 0, len(cs))
	for _, c := range cs {
		if !seen[c.Chunk.DocID] {
			seen[c.Chunk.DocID] = true
			out = append(out, c)
		}
	}
	return out
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

// describe turns kept candidates into sources with their documents' details.
func (p *Pipeline) describe(ctx context.Context, kept []Candidate) ([]Source, error) {
	refs := make([]ragd.VersionRef, len(kept))
	for i, c := range kept {
		refs[i] = ragd.VersionRef{DocID: c.Chunk.DocID, Version: c.Chunk.Version}
	}
	info, err := p.Store.VersionInfo(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	sources := make([]Source, len(kept))
	for i, c := range kept {
		vi := info[refs[i]]
		s := Source{Rank: i + 1, DocID: c.Chunk.DocID, Version: c.Chunk.Version, ChunkID: c.Chunk.ID,
			Members: c.Members, Title: vi.Title, Heading: c.Chunk.Heading, URL: vi.URL, Path: vi.Path,
			PageStart: c.PageStart, PageEnd: c.PageEnd, Text: c.Chunk.Text, Score: c.Score(), Fused: c.Fused,
			Origins: origins(c.Ranks)}
		s.Date, s.DateKind = ragd.DocumentDate(vi.PublishedAt, vi.IngestedAt)
		if c.Reranked {
			r := c.Rerank
			s.Rerank = &r
		}
		sources[i] = s
	}
	return sources, nil
}

// origins names the kinds of lists that found a passage, in a fixed order: fresh BM25 and vector
// (per-entity compare searches count as fresh), carry (the carried list, searches within the
// carried sources, the context search), focus (the conversation focus's search), kg.
func origins(ranks map[string]int) []string {
	has := map[string]bool{}
	for name := range ranks {
		switch {
		case strings.HasPrefix(name, "focus"):
			has["focus"] = true
		case name == "carry" || strings.HasPrefix(name, "sources-") || strings.HasPrefix(name, "context-"):
			has["carry"] = true
		case strings.HasSuffix(name, "bm25"):
			has["bm25"] = true
		case strings.HasSuffix(name, "vector"):
			has["vector"] = true
		default:
			has[name] = true
		}
	}
	var out []string
	for _, name := range []string{"bm25", "vector", "carry", "focus", "kg"} {
		if has[name] {
			out = append(out, name)
		}
	}
	return out
}
