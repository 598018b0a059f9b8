// Package index is ragd's BM25 index: a bleve index over the active chunks in the store. It is
// derived data. It remembers the last chunk change sequence it applied and catches up from the
// store by sequence; losing it costs a rebuild, never a citation.
package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/google/uuid"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/ragd/ragd"
)

// ErrLocked means another process (usually a running server) has the index open.
var ErrLocked = errors.New("index is open in another process")

// ErrClosed means the index has been closed.
var ErrClosed = errors.New("index is closed")

// schemaVersion changes whenever the mapping changes, so an index built with an older mapping is
// rebuilt instead of silently scoring differently.
const schemaVersion = "2"

var (
	seqKey     = []byte("ragd.seq")
	versionKey = []byte("ragd.schema")
)

// Index is a bleve BM25 index of chunks. It is safe for concurrent use.
type Index struct {
	dir    string
	bleve  bleve.Index
	logger *slog.Logger

	mu  sync.Mutex // serializes CatchUp so two catch-ups never apply the same changes twice
	seq int64

	// life guards closing against DocFreq's direct reads of bleve's segments, which a closed
	// index answers with a crash rather than an error (a background reader may outlive it).
	life   sync.RWMutex
	closed bool
}

// newMapping indexes title, heading and text with bleve's English analyzer (possessives,
// lower case, stop words, Porter stemming) and scores with BM25. Queries run against the
// composite _all field: one BM25 over title and text together. On SciFact that scored nDCG@10
// 0.679, where a disjunction over separate fields scored 0.624 (bleve multiplies a disjunction
// by the share of clauses that matched, which punishes a term found only in the text).
func newMapping() mapping.IndexMapping {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = false
	text.IncludeInAll = true
	text.IncludeTermVectors = false

	// The tenant is a keyword every search filters by; it is not text, so it stays out of _all
	// and of BM25's statistics.
	tenant := bleve.NewKeywordFieldMapping()
	tenant.Store = false
	tenant.IncludeInAll = false

	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("tenant", tenant)
	doc.AddFieldMappingsAt("title", text)
	doc.AddFieldMappingsAt("heading", text)
	doc.AddFieldMappingsAt("text", text)

	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = en.AnalyzerName
	m.ScoringModel = "bm25"
	m.StoreDynamic = false
	m.IndexDynamic = false
	return m
}

// Open opens the index in dir, creating an empty one when dir does not exist. An index written
// by an older mapping is reported as such: run Rebuild.
func Open(dir string, logger *slog.Logger) (*Index, error) {
	if logger == nil {
		logger = slog.Default()
	}
	var b bleve.Index
	_, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		b, err = bleve.New(dir, newMapping())
		if err == nil {
			err = b.SetInternal(versionKey, []byte(schemaVersion))
		}
	case err == nil:
		// bolt locks the index file; give up quickly rather than hang behind a running server.
		b, err = bleve.OpenUsing(dir, map[string]any{"bolt_timeout": "2s"})
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("index %s: %w", dir, ErrLocked)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("index: opening %s: %w", dir, err)
	}
	ix := &Index{dir: dir, bleve: b, logger: logger}
	v, err := b.GetInternal(versionKey)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("index: reading %s: %w", dir, err)
	}
	if string(v) != schemaVersion {
		b.Close()
		return nil, fmt.Errorf("index %s has mapping version %q, this ragd writes %q: run `ragd reindex`", dir, v, schemaVersion)
	}
	if ix.seq, err = ix.readSeq(); err != nil {
		b.Close()
		return nil, err
	}
	return ix, nil
}

func (ix *Index) readSeq() (int64, error) {
	b, err := ix.bleve.GetInternal(seqKey)
	if err != nil {
		return 0, fmt.Errorf("index: reading sequence: %w", err)
	}
	if len(b) == 0 {
		return 0, nil
	}
	seq, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("index: corrupt sequence %q: %w", b, err)
	}
	return seq, nil
}

// Close closes the index.
func (ix *Index) Close() error {
	ix.life.Lock()
	defer ix.life.Unlock()
	ix.closed = true
	return ix.bleve.Close()
}

// Seq returns the last chunk change sequence applied.
func (ix *Index) Seq() int64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.seq
}

// DocCount returns the number of chunks in the index.
func (ix *Index) DocCount() (uint64, error) { return ix.bleve.DocCount() }

// Search returns the n chunks that score highest by BM25 for text. The text is analyzed as
// words and never parsed as query syntax, so "+foo -bar title:x" is just five words.
func (ix *Index) Search(ctx context.Context, text string, n int) ([]ragd.Hit, error) {
	return ix.SearchIn(ctx, text, n, nil)
}

// SearchIn is Search among the given chunks only; nil means every chunk.
//
// Hits of equal score come in chunk id order. bleve orders ties by its internal document
// numbers, which depend on how its segments happened to merge: the same corpus ingested afresh
// would rank tied chunks differently, and evaluation figures would move with it.
func (ix *Index) SearchIn(ctx context.Context, text string, n int, chunks []int64) ([]ragd.Hit, error) {
	if n < 1 {
		return nil, ragd.Invalidf("n", "must be at least 1, got %d", n)
	}
	q := tenantMatch(ctx, text)
	if chunks != nil {
		ids := make([]string, len(chunks))
		for i, id := range chunks {
			ids[i] = strconv.FormatInt(id, 10)
		}
		q.AddQuery(bleve.NewDocIDQuery(ids))
	}
	return ix.top(ctx, q, n)
}

// SearchTitle is Search among the chunks whose title has every word of title ("Hobsons House"
// matches HOBSONS HOUSE; word positions are not indexed, so it is not a phrase match): the
// chunks of the documents a conversation is about, ranked by text. The title clause adds the same
// score to every chunk of one title, so their order is the text's BM25 order.
func (ix *Index) SearchTitle(ctx context.Context, text, title string, n int) ([]ragd.Hit, error) {
	if n < 1 {
		return nil, ragd.Invalidf("n", "must be at least 1, got %d", n)
	}
	in := query.NewMatchQuery(title)
	in.SetField("title")
	in.SetOperator(query.MatchQueryOperatorAnd)
	q := tenantMatch(ctx, text)
	q.AddQuery(in)
	return ix.top(ctx, q, n)
}

// tenantMatch matches text among the chunks of the request's tenant only. The filter clause adds
// the same constant to every hit: the BM25 order is unchanged.
func tenantMatch(ctx context.Context, text string) *query.ConjunctionQuery {
	match := query.NewMatchQuery(text)
	match.SetField("_all")
	tenant := query.NewTermQuery(ragd.PrincipalOf(ctx).Tenant.String())
	tenant.SetField("tenant")
	return bleve.NewConjunctionQuery(match, tenant)
}

// DocFreq returns how many chunks have each term (as Terms writes it) in field: "title",
// "heading", "text", or "_all" for any of them. The counts are the whole index's, every tenant's,
// as BM25's own term statistics are: they weigh words, they return no chunk.
func (ix *Index) DocFreq(field string, terms []string) (map[string]int, error) {
	ix.life.RLock()
	defer ix.life.RUnlock()
	if ix.closed {
		return nil, fmt.Errorf("index: %w", ErrClosed)
	}
	adv, err := ix.bleve.Advanced()
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	defer r.Close()
	out := make(map[string]int, len(terms))
	for _, term := range terms {
		tfr, err := r.TermFieldReader(context.Background(), []byte(term), field, false, false, false)
		if err != nil {
			return nil, fmt.Errorf("index: term %q: %w", term, err)
		}
		out[term] = int(tfr.Count())
		tfr.Close()
	}
	return out, nil
}

// tieMargin is how many hits past n a search reads first, so that a tie at the n-th score is
// usually complete in one read.
const tieMargin = 8

// top runs q and returns its n best hits, ties in chunk id order. It reads hits past n until the
// last one read scores below the n-th (or there are no more), so every chunk tied with a returned
// one has been read and sorting them by id is exact. Scores count as tied within 1e-9: bleve
// sums a match's clause scores in an order that depends on its segments, so equal scores can
// differ in their last bits.
func (ix *Index) top(ctx context.Context, q query.Query, n int) ([]ragd.Hit, error) {
	var hits []ragd.Hit
	for size := n + tieMargin; ; size *= 4 {
		res, err := ix.bleve.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, size, 0, false))
		if err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
		if hits, err = hitsOf(res.Hits); err != nil {
			return nil, err
		}
		if len(hits) < size || tied(hits[len(hits)-1].Score) < tied(hits[n-1].Score) {
			break
		}
	}
	slices.SortStableFunc(hits, func(a, b ragd.Hit) int {
		return cmp.Or(cmp.Compare(tied(b.Score), tied(a.Score)), cmp.Compare(a.ChunkID, b.ChunkID))
	})
	hits = hits[:min(n, len(hits))]
	for i := range hits {
		hits[i].Rank = i + 1
	}
	return hits, nil
}

// tied is a score as ties are judged: to 1e-9.
func tied(score float64) float64 { return math.Round(score * 1e9) }

func hitsOf(matches []*search.DocumentMatch) ([]ragd.Hit, error) {
	hits := make([]ragd.Hit, 0, len(matches))
	for _, h := range matches {
		id, err := strconv.ParseInt(h.ID, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("index: chunk id %q: %w", h.ID, err)
		}
		hits = append(hits, ragd.Hit{ChunkID: id, Score: h.Score})
	}
	return hits, nil
}

// Coverage scores texts against query by the share of the query's information they contain:
// the summed IDF of the query's distinct terms found in a text over the summed IDF of all of
// them, with the index's analyzer and term statistics, so it matches what BM25 matches. It is in
// [0, 1] whatever the query's length, which makes one threshold meaningful across questions
// (carried sources are kept or dropped by it when no model is configured).
func (ix *Index) Coverage(query string, texts []string) ([]float64, error) {
	analyzer := ix.bleve.Mapping().AnalyzerNamed(en.AnalyzerName)
	terms := analyzedTerms(analyzer, query)
	idf, _, err := ix.idf(terms)
	if err != nil {
		return nil, err
	}
	var total float64
	for _, w := range idf {
		total += w
	}
	out := make([]float64, len(texts))
	if total == 0 {
		return out, nil
	}
	for i, t := range texts {
		have := analyzedTerms(analyzer, t)
		var got float64
		for term, w := range idf {
			if have[term] {
				got += w
			}
		}
		out[i] = got / total
	}
	return out, nil
}

// Keywords returns up to n words of text that say the most, by the IDF of their analyzed term in
// the index, leaving out words whose term is in exclude's (stop words have no term). Words come
// back as written, so they can be searched again; each term once, rarest first.
func (ix *Index) Keywords(text, exclude string, n int) ([]string, error) {
	analyzer := ix.bleve.Mapping().AnalyzerNamed(en.AnalyzerName)
	skip := analyzedTerms(analyzer, exclude)
	surface := map[string]string{}
	var order []string
	for _, word := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		for term := range analyzedTerms(analyzer, word) {
			if _, ok := surface[term]; !ok && !skip[term] {
				surface[term] = word
				order = append(order, term)
			}
		}
	}
	terms := map[string]bool{}
	for _, t := range order {
		terms[t] = true
	}
	idf, df, err := ix.idf(terms)
	if err != nil {
		return nil, err
	}
	// A term the index has never seen would only make the search miss: leave it out.
	order = slices.DeleteFunc(order, func(t string) bool { return df[t] == 0 })
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(idf[b], idf[a]) })
	out := make([]string, 0, min(n, len(order)))
	for _, t := range order[:min(n, len(order))] {
		out = append(out, surface[t])
	}
	return out, nil
}

func analyzedTerms(a analysis.Analyzer, text string) map[string]bool {
	terms := map[string]bool{}
	for _, tok := range a.Analyze([]byte(text)) {
		terms[string(tok.Term)] = true
	}
	return terms
}

// idf returns BM25's inverse document frequency of each term in the composite field, and the
// document frequency it came from.
func (ix *Index) idf(terms map[string]bool) (map[string]float64, map[string]uint64, error) {
	adv, err := ix.bleve.Advanced()
	if err != nil {
		return nil, nil, fmt.Errorf("index: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, nil, fmt.Errorf("index: %w", err)
	}
	defer r.Close()
	n, err := r.DocCount()
	if err != nil {
		return nil, nil, fmt.Errorf("index: %w", err)
	}
	out := make(map[string]float64, len(terms))
	dfs := make(map[string]uint64, len(terms))
	for term := range terms {
		tfr, err := r.TermFieldReader(context.Background(), []byte(term), "_all", false, false, false)
		if err != nil {
			return nil, nil, fmt.Errorf("index: term %q: %w", term, err)
		}
		dfs[term] = tfr.Count()
		tfr.Close()
		df := float64(dfs[term])
		out[term] = math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
	}
	return out, dfs, nil
}

type chunkDoc struct {
	Title   string `json:"title"`
	Heading string `json:"heading"`
	Text    string `json:"text"`
	Tenant  string `json:"tenant"`
}

// apply indexes one page of changes and records the sequence in the same batch, so a crash
// between the two cannot make the index skip or repeat changes.
func (ix *Index) apply(changes []ragd.ChunkChange) error {
	b := ix.bleve.NewBatch()
	for _, c := range changes {
		id := strconv.FormatInt(c.ID, 10)
		if c.Active {
			if err := b.Index(id, chunkDoc{Title: c.Title, Heading: c.Heading, Text: c.Text, Tenant: tenantOf(c)}); err != nil {
				return fmt.Errorf("index: chunk %d: %w", c.ID, err)
			}
		} else {
			b.Delete(id)
		}
	}
	last := changes[len(changes)-1].Seq
	b.SetInternal(seqKey, []byte(strconv.FormatInt(last, 10)))
	if err := ix.bleve.Batch(b); err != nil {
		return fmt.Errorf("index: applying changes up to %d: %w", last, err)
	}
	ix.seq = last
	return nil
}

// tenantOf is the tenant a change is indexed under; none is the default tenant's.
func tenantOf(c ragd.ChunkChange) string {
	if c.Tenant == uuid.Nil {
		return ragd.DefaultTenant.String()
	}
	return c.Tenant.String()
}

// pageSize is how many changes one bleve batch applies.
const pageSize = 2000

// CatchUp applies every change the store has past the index's sequence and returns how many.
func (ix *Index) CatchUp(ctx context.Context, src ragd.Store) (int, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	start := time.Now()
	n := 0
	for {
		changes, err := src.ChunkChanges(ctx, ix.seq, pageSize)
		if err != nil {
			return n, fmt.Errorf("index: catching up: %w", err)
		}
		if len(changes) == 0 {
			break
		}
		if err := ix.apply(changes); err != nil {
			return n, err
		}
		n += len(changes)
	}
	if n > 0 {
		ix.logger.InfoContext(ctx, "index caught up", slog.Int("changes", n), slog.Int64("seq", ix.seq),
			slog.Duration("took", time.Since(start)))
	}
	return n, nil
}

// Rebuild replaces the index in dir by one built from scratch from the store. The new index is
// built beside the old one and swapped in only when complete.
func Rebuild(ctx context.Context, dir string, src ragd.Store, logger *slog.Logger) (*Index, error) {
	tmp := dir + ".rebuild"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("index: clearing %s: %w", tmp, err)
	}
	ix, err := Open(tmp, logger)
	if err != nil {
		return nil, err
	}
	if _, err := ix.CatchUp(ctx, src); err != nil {
		ix.Close()
		return nil, err
	}
	if err := ix.Close(); err != nil {
		return nil, fmt.Errorf("index: closing %s: %w", tmp, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("index: removing %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("index: moving %s into place: %w", tmp, err)
	}
	return Open(dir, logger)
}

// Follow keeps ix caught up with src until ctx ends: at once when wake fires (the store's change
// notifications), and every poll interval regardless, in case a notification was missed while
// the listening connection was down.
func (ix *Index) Follow(ctx context.Context, src ragd.Store, wake <-chan struct{}, poll time.Duration) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-t.C:
		}
		if _, err := ix.CatchUp(ctx, src); err != nil && ctx.Err() == nil {
			ix.logger.ErrorContext(ctx, "index catch-up failed; retrying on the next change or poll", slog.String("error", err.Error()))
		}
	}
}

// Ping checks that the index answers, for readiness probes.
func (ix *Index) Ping(context.Context) error {
	if _, err := ix.bleve.DocCount(); err != nil {
		return fmt.Errorf("index: %w: %w", ragd.ErrUnavailable, err)
	}
	return nil
}

// english is the analyzer of every field, for reading text as BM25 does without opening an index.
var english = sync.OnceValue(func() analysis.Analyzer { return newMapping().AnalyzerNamed(en.AnalyzerName) })

// Terms is the package's Terms, for callers that hold an index.
func (ix *Index) Terms(text string) []string { return Terms(text) }

// Terms returns the terms BM25 sees in text, in order: lower-cased, possessives and stop words
// removed, Porter-stemmed.
func Terms(text string) []string {
	toks := english().Analyze([]byte(text))
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = string(t.Term)
	}
	return out
}

// Segments is how many segments the index is made of: each query visits every one.
func (ix *Index) Segments() (int, error) {
	sc, err := ix.scorch()
	if err != nil {
		return 0, err
	}
	v, _ := sc.StatsMap()["TotFileSegmentsAtRoot"].(uint64)
	return int(v), nil
}

// Compact merges every segment into one and waits until it is done. After a bulk load the
// background merger leaves tiers of segments behind; one segment reads each term's postings
// once. Later changes add small segments again, which the merger handles as usual.
func (ix *Index) Compact(ctx context.Context) error {
	sc, err := ix.scorch()
	if err != nil {
		return err
	}
	if err := sc.ForceMerge(ctx, nil); err != nil {
		return fmt.Errorf("index: compacting: %w", err)
	}
	return nil
}

func (ix *Index) scorch() (*scorch.Scorch, error) {
	adv, err := ix.bleve.Advanced()
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	sc, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil, fmt.Errorf("index: %T is not a scorch index", adv)
	}
	return sc, nil
}
