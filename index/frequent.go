package index

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/ragd/ragd"
)

// The bounded search: what Search runs when a question has frequent words. bleve scores every
// posting of every word of a question, and it has no way to skip within a posting list that it
// reads frequencies from (zap walks the list to the document asked for), so at a million chunks
// a question's few frequent words are nearly all of its work (SciFact's questions read 460k
// postings there, 98% of them in words found in more than 10k chunks) whether they are scored
// or only used to rescore candidates. The bounded search reads the rare words' postings in full,
// and of each frequent word only whether the best candidates have it, which a posting list
// answers by skipping (no frequencies read).
//
// It scores as bleve's match query does (BM25 with bleve's k1, b and query norm, times the share
// of the question's words a chunk has), except that a frequent word counts as found once in a
// chunk that has it. A frequent word weighs little (its IDF is low, and the query norm squares
// IDF), so the chunks it finds by that estimate are mostly the ones the exact search ranks first;
// a chunk that has none of the rare words is not found. Chunks are checked for the frequent words
// in the order of the most they could score with all of them, until the next one could not beat
// the n-th best found (or candidates are checked).

// word is one distinct analyzed word of a question: times is how many of the question's words
// it is (bleve's match query makes a clause of each), df how many chunks have it.
type word struct {
	term  string
	times int
	df    uint64
	idf   float64
	rare  bool
}

// tally is what the bounded search knows of one chunk.
type tally struct {
	doc     uint64  // bleve's internal document number
	sum     float64 // summed clause scores
	matched int     // clauses it matches
	norm    float64 // its _all field's length norm, as bleve stores it
}

// boundedSearch returns the n best chunks for terms (a question's analyzed words) by the bounded
// search, and true; or false when the question has no frequent word (the exact search costs no
// more). frequent says whether a word found in df of the index's docs chunks is frequent.
// candidates is the most chunks checked for the frequent words.
func (s *shard) boundedSearch(ctx context.Context, terms []string, n, candidates int, frequent func(df, docs uint64) bool) ([]ragd.Hit, bool, error) {
	adv, err := s.bleve.Advanced()
	if err != nil {
		return nil, false, fmt.Errorf("index: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, false, fmt.Errorf("index: %w", err)
	}
	defer r.Close()
	docs, err := r.DocCount()
	if err != nil {
		return nil, false, fmt.Errorf("index: %w", err)
	}
	if !frequent(docs, docs) {
		return nil, false, nil // no word can be frequent in so few chunks: no need to count
	}
	var words []*word
	byTerm := map[string]*word{}
	for _, t := range terms {
		if w := byTerm[t]; w != nil {
			w.times++
			continue
		}
		w := &word{term: t, times: 1}
		byTerm[t] = w
		words = append(words, w)
	}
	// Presence readers: no frequencies, so Advance skips instead of walking.
	present := make([]index.TermFieldReader, len(words))
	defer func() {
		for _, tr := range present {
			if tr != nil {
				tr.Close()
			}
		}
	}()
	anyFrequent, allFrequent := false, true
	rarest := 0
	var sumSq float64
	for i, w := range words {
		if present[i], err = r.TermFieldReader(ctx, []byte(w.term), "_all", false, false, false); err != nil {
			return nil, false, fmt.Errorf("index: term %q: %w", w.term, err)
		}
		w.df = present[i].Count()
		w.idf = bm25IDF(docs, w.df)
		w.rare = !frequent(w.df, docs)
		anyFrequent = anyFrequent || !w.rare
		allFrequent = allFrequent && !w.rare
		if w.df < words[rarest].df {
			rarest = i
		}
		sumSq += float64(w.times) * w.idf * w.idf
	}
	if !anyFrequent || sumSq == 0 {
		return nil, false, nil
	}
	if allFrequent {
		// The rarest word finds the candidates: a bound on the work, whatever the question.
		words[rarest].rare = true
	}
	br, ok := r.(index.BM25Reader)
	if !ok {
		return nil, false, fmt.Errorf("index: %T has no BM25 field statistics", r)
	}
	card, err := br.FieldCardinality("_all")
	if err != nil {
		return nil, false, fmt.Errorf("index: %w", err)
	}
	avgLen := math.Ceil(float64(card) / float64(docs))
	queryNorm := 1 / math.Sqrt(sumSq)
	// score is one clause's BM25 score as bleve's TermQueryScorer computes it.
	score := func(w *word, freq uint64, norm float64) float64 {
		tf := math.Sqrt(float64(freq))
		length := 1 / (norm * norm)
		s := w.idf * (tf * search.BM25_k1) / (tf + search.BM25_k1*(1-search.BM25_b+search.BM25_b*length/avgLen))
		return s * w.idf * queryNorm * float64(w.times)
	}

	var postings uint64
	for _, w := range words {
		if w.rare {
			postings += w.df
		}
	}
	at := make(map[uint64]int32, postings)
	tallies := make([]tally, 0, postings)
	var tfd index.TermFieldDoc
	for _, w := range words {
		if !w.rare {
			continue
		}
		tr, err := r.TermFieldReader(ctx, []byte(w.term), "_all", true, true, false)
		if err != nil {
			return nil, false, fmt.Errorf("index: term %q: %w", w.term, err)
		}
		for {
			d, err := tr.Next(&tfd)
			if err != nil {
				tr.Close()
				return nil, false, fmt.Errorf("index: term %q: %w", w.term, err)
			}
			if d == nil {
				break
			}
			doc := d.ID.Value()
			i, ok := at[doc]
			if !ok {
				i = int32(len(tallies))
				at[doc] = i
				tallies = append(tallies, tally{doc: doc, norm: d.Norm})
			}
			tallies[i].sum += score(w, d.Freq, d.Norm)
			tallies[i].matched += w.times
		}
		tr.Close()
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
	}
	clauses := 0
	var common []*word // the frequent words, checked for presence only
	for _, w := range words {
		clauses += w.times
		if !w.rare {
			common = append(common, w)
		}
	}
	// A chunk's score is at most what it would score with every frequent word: check chunks
	// in that order, a batch at a time, until the next one cannot beat the n-th best found.
	bound := func(t *tally) float64 {
		sum, matched := t.sum, t.matched
		for _, w := range common {
			sum += score(w, 1, t.norm)
			matched += w.times
		}
		return sum * float64(matched) / float64(clauses)
	}
	bounds := make([]float64, len(tallies))
	h := &maxFirst{s: make([]int, len(tallies)), less: func(a, b int) bool {
		return bounds[a] > bounds[b] || (bounds[a] == bounds[b] && tallies[a].doc < tallies[b].doc)
	}}
	for i := range tallies {
		h.s[i] = i
		bounds[i] = bound(&tallies[i])
	}
	heap.Init(h)
	keep := n + tieMargin
	var best []ragd.Hit // the keep best found, as internal numbers and scores
	id := make(index.IndexInternalID, 8)
	checked := 0
	for start := 0; h.Len() > 0 && checked < max(candidates, keep); start++ {
		// The batch: the next highest bounds, checked in document order since presence readers
		// only move forward.
		if len(best) >= keep && bounds[h.s[0]] < best[keep-1].Score {
			break
		}
		var batch []int
		for h.Len() > 0 && len(batch) < batchSize && checked < max(candidates, keep) {
			batch = append(batch, heap.Pop(h).(int))
			checked++
		}
		slices.SortFunc(batch, func(a, b int) int { return cmp.Compare(tallies[a].doc, tallies[b].doc) })
		for i, w := range words {
			if w.rare {
				continue
			}
			tr := present[i]
			if start > 0 {
				// A fresh reader: the last batch left this one past chunks this batch asks for.
				if tr, err = r.TermFieldReader(ctx, []byte(w.term), "_all", false, false, false); err != nil {
					return nil, false, fmt.Errorf("index: term %q: %w", w.term, err)
				}
			}
			var next uint64 // the reader's chunk: the first at or after the last one asked for
			done := false
			for j, k := range batch {
				t := &tallies[k]
				if !done && (j == 0 || next < t.doc) {
					id.SetValue(t.doc)
					d, err := tr.Advance(id, &tfd)
					if err != nil {
						return nil, false, fmt.Errorf("index: term %q: %w", w.term, err)
					}
					if d == nil {
						done = true
					} else {
						next = d.ID.Value()
					}
				}
				if !done && next == t.doc {
					t.sum += score(w, 1, t.norm)
					t.matched += w.times
				}
			}
			if start > 0 {
				tr.Close()
			}
		}
		for _, k := range batch {
			t := tallies[k]
			best = append(best, ragd.Hit{ChunkID: int64(t.doc), Score: t.sum * float64(t.matched) / float64(clauses)})
		}
		slices.SortFunc(best, func(a, b ragd.Hit) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ChunkID, b.ChunkID))
		})
		best = best[:min(len(best), keep)]
	}
	hits := best
	for i := range hits {
		id.SetValue(uint64(hits[i].ChunkID))
		ext, err := r.ExternalID(id)
		if err != nil {
			return nil, false, fmt.Errorf("index: %w", err)
		}
		if hits[i].ChunkID, err = strconv.ParseInt(ext, 10, 64); err != nil {
			return nil, false, fmt.Errorf("index: chunk id %q: %w", ext, err)
		}
	}
	return hits, true, nil
}

// batchSize is how many chunks the bounded search checks for its frequent words at a time.
const batchSize = 100

type maxFirst struct {
	s    []int
	less func(a, b int) bool
}

func (h *maxFirst) Len() int           { return len(h.s) }
func (h *maxFirst) Less(i, j int) bool { return h.less(h.s[i], h.s[j]) }
func (h *maxFirst) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *maxFirst) Push(x any)         { h.s = append(h.s, x.(int)) }
func (h *maxFirst) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}
