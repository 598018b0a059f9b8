package ask

// Carry-over: which of the conversation's sources enter a turn, re-scored against its question.

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/refer"
)

// CarryReport says how the conversation's sources were carried into a turn.
type CarryReport struct {
	// Method is how carried sources were re-scored: cross-encoder, embedding or lexical.
	Method     string
	Candidates int // carried and pinned sources considered
	Entered    int // those that entered fusion (re-score >= tau, or pinned)
}

// carried is what carry-over brings into a turn.
type carried struct {
	picks []carry.Pick
	// belowTau are the candidates that did not enter: carry.Update decays them.
	belowTau map[uuid.UUID]bool
	report   CarryReport
	// reused is what re-scoring computed that ranking needs too.
	reused reused
}

// carryOver re-scores the sources the conversation may carry into this turn (and the documents
// the turn pins) and returns those that enter, and those that did not make tau. The re-score is the cross-encoder's when one is
// configured (the most accurate judge, and its scores are reused by the rerank stage), else the
// cosine similarity of the chunk's embedding to the question's (already computed for vector
// search), else the share of the question's IDF mass the chunk contains (lexical, no model).
func (p *Pipeline) carryOver(ctx context.Context, message string, pins []uuid.UUID, st *ragd.ConversationState,
	in Intent, refs refer.Resolution, cache *chunkCache) (carried, error) {
	var out carried
	cands := withReferences(carry.Candidates(st.Sources, in.Label == NewTopic), st.Sources, refs)
	known := map[uuid.UUID]bool{}
	for _, c := range cands {
		known[c.DocID] = true
	}
	for _, id := range pins {
		if !known[id] {
			cands = append(cands, ragd.ConversationSource{DocID: id, Pinned: true, Carried: true, CarryScore: 1})
		}
	}
	out.report.Candidates = len(cands)
	if len(cands) == 0 {
		return out, nil
	}
	// A source is judged by the chunks it was cited for; a newly pinned document, never cited,
	// by its first chunks.
	var fresh []uuid.UUID
	for _, c := range cands {
		if len(c.CitedChunkIDs) == 0 {
			fresh = append(fresh, c.DocID)
		}
	}
	firsts, err := p.Store.ActiveChunkIDs(ctx, fresh, p.cfg.PinChunks)
	if err != nil {
		return out, fmt.Errorf("ask: carried sources: %w", err)
	}
	owner := map[int64]uuid.UUID{}
	var ids []int64
	for _, c := range cands {
		chunks := c.CitedChunkIDs
		if len(chunks) == 0 {
			chunks = firsts[c.DocID]
		}
		for _, id := range chunks {
			owner[id] = c.DocID
			ids = append(ids, id)
		}
	}
	scores, method, reuse, err := p.rescore(ctx, message, ids, cache)
	if err != nil {
		return out, err
	}
	out.report.Method, out.reused = method, reuse
	best := map[uuid.UUID]carry.ReScore{}
	for id, score := range scores {
		doc := owner[id]
		if b, ok := best[doc]; !ok || score > b.Score || (score == b.Score && id < b.ChunkID) {
			best[doc] = carry.ReScore{ChunkID: id, Score: score}
		}
	}
	cfg := p.cfg.Carry
	if referent(in, message) {
		cfg.Tau = 0
	}
	capped := cfg.Cap
	cfg.Cap = len(cands) // the sources the turn refers to pass the cap
	out.picks = referredPicks(carry.Select(cands, best, cfg), refs, capped)
	out.report.Entered = len(out.picks)
	entered := map[uuid.UUID]bool{}
	for _, pk := range out.picks {
		entered[pk.DocID] = true
	}
	out.belowTau = map[uuid.UUID]bool{}
	for _, c := range cands {
		if !entered[c.DocID] {
			out.belowTau[c.DocID] = true
		}
	}
	return out, nil
}

// rescore scores chunks against the question with the best judge available (see carryOver),
// and returns what it computed that ranking reuses: the question's embedding, or the
// cross-encoder's scores. Inactive chunks get no score.
func (p *Pipeline) rescore(ctx context.Context, query string, ids []int64, cache *chunkCache) (map[int64]float64, string, reused, error) {
	out := map[int64]float64{}
	if p.Reranker == nil && p.Embedder != nil {
		vecs, err := p.Embedder.Embed(ctx, []string{query})
		if err != nil {
			return nil, "", reused{}, fmt.Errorf("ask: embedding the question: %w", err)
		}
		sims, err := p.Store.Similarity(ctx, vecs[0], ids)
		if err != nil {
			return nil, "", reused{}, fmt.Errorf("ask: re-scoring carried sources: %w", err)
		}
		for id, s := range sims {
			out[id] = max(s, 0)
		}
		return out, "embedding", reused{vectors: map[string][]float32{query: vecs[0]}}, nil
	}
	chunks, err := cache.get(ctx, ids)
	if err != nil {
		return nil, "", reused{}, err
	}
	var passages []string
	var active []int64
	for _, c := range chunks {
		if c.Active {
			passages = append(passages, passage(c))
			active = append(active, c.ID)
		}
	}
	method := "lexical"
	var reuse reused
	var scores []float64
	if p.Reranker != nil {
		method = "cross-encoder"
		ce, err := p.Reranker.Score(ctx, query, passages)
		if err != nil {
			return nil, "", reused{}, fmt.Errorf("ask: re-scoring carried sources: %w", err)
		}
		reuse.scores = make(map[int64]float64, len(active))
		for i, id := range active {
			reuse.scores[id] = float64(ce[i])
			scores = append(scores, float64(ce[i]))
		}
	} else if scores, err = p.Index.Coverage(ctx, query, passages); err != nil {
		return nil, "", reused{}, fmt.Errorf("ask: re-scoring carried sources: %w", err)
	}
	for i, id := range active {
		out[id] = scores[i]
	}
	return out, method, reuse, nil
}
