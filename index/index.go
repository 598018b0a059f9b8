// Package index is ragd's BM25 index: one bleve index per tenant over the tenant's active chunks
// in the store. Each tenant's index is its own, so the statistics BM25 weighs words by (how many
// chunks have a word, how many chunks there are, how long their fields are) are the tenant's
// alone: nothing another tenant ingests moves a score, a ranking, a keyword, a coverage or a
// document frequency a tenant reads. The index is derived data. It remembers the last chunk
// change sequence it applied and catches up from the store by sequence; losing it costs a
// rebuild, never a citation.
//
// On disk, dir holds layout.bolt (the sequence every tenant's index is caught up to, and the
// lock that keeps a second process out), layout.holder (who has the lock, for the error of a
// process that finds it taken) and tenants/<tenant id>/, one bleve index each, created
// when the tenant's first chunk arrives and opened when first read or written. Options.MaxOpen
// bounds how many tenants' indexes are open at once: each holds files (its segments and bolt
// file), memory and goroutines, which would otherwise grow with the number of tenants ever read.
package index

import (
	"cmp"
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/ragd/ragd"
)

// ErrLocked means another process (usually a running server) has the index open.
var ErrLocked = errors.New("index is open in another process")

// ErrClosed means the index has been closed.
var ErrClosed = errors.New("index is closed")

// layoutVersion changes whenever the layout of dir changes.
const layoutVersion = "2"

var (
	layoutBucket = []byte("ragd")
	layoutKey    = []byte("layout")
	schemaKey    = []byte("schema")
	globalSeqKey = []byte("seq")
)

// Index is ragd's BM25 index, one bleve index per tenant. Every read is routed to the index of
// the context's tenant. It is safe for concurrent use.
type Index struct {
	dir    string
	logger *slog.Logger
	opts   Options
	layout *bolt.DB
	empty  *shard // what a tenant without chunks reads

	mu  sync.Mutex // serializes CatchUp so two catch-ups never apply the same changes twice
	seq int64      // every change up to seq is applied to its tenant's index

	smu     sync.Mutex                  // guards shards, lru, pending and every shard's refs
	shards  map[uuid.UUID]*shard        // the open tenant indexes
	lru     list.List                   // of the open *shard, most recently used first
	pending map[uuid.UUID]chan struct{} // tenants whose index is being opened or closed; closed when done
	closing sync.WaitGroup              // the closes of evicted indexes under way
	evicted uint64                      // indexes closed to keep the bound, since Open

	// life guards closing against reads: a closed bleve index answers direct reads of its
	// segments with a crash rather than an error (a background reader may outlive it).
	life   sync.RWMutex
	closed bool
}

// Open opens the index in dir, creating an empty one when dir does not exist. An index of the
// old layout, one bleve index shared by every tenant, is cleared with a log line: the caller's
// CatchUp then rebuilds it per tenant from the store. An index written by an older mapping is
// reported as such: run Rebuild.
func Open(dir string, logger *slog.Logger) (*Index, error) {
	return open(dir, logger, Options{}, false)
}

// Options tune how the index searches. The zero value searches exactly.
type Options struct {
	// FrequentChunks, when above 0, bounds the work of a search whose question has words found
	// in more than this many of the tenant's chunks (frequent words) and others: see
	// boundedSearch. A corpus of at most this many chunks is searched exactly, whatever its
	// questions. 0 leaves it to FrequentShare.
	FrequentChunks int
	// FrequentShare, when above 0, also makes words found in more than this share of the
	// tenant's chunks frequent. 0 leaves it to FrequentChunks; both 0 search exactly.
	FrequentShare float64
	// Candidates is the most chunks a bounded search checks for the frequent words (at least
	// the n asked for, and a few more for ties).
	Candidates int
	// MaxOpen is the most tenants' indexes kept open at once. Past it the least recently used
	// index that no search or update is using is closed; it is reopened when next read or
	// written. An index in use is never closed under its user, so while more than MaxOpen are
	// in use at once, more are open until their uses end. 0 keeps every index open (no bound).
	MaxOpen int
}

// bounded reports whether searches may use the bounded search.
func (o Options) bounded() bool { return o.FrequentChunks > 0 || o.FrequentShare > 0 }

// frequent reports whether a word found in df of docs chunks is frequent.
func (o Options) frequent(df, docs uint64) bool {
	return (o.FrequentChunks > 0 && df > uint64(o.FrequentChunks)) ||
		(o.FrequentShare > 0 && float64(df) > o.FrequentShare*float64(docs))
}

// OpenWith is Open with search options.
func OpenWith(dir string, logger *slog.Logger, o Options) (*Index, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	return open(dir, logger, o, false)
}

func (o Options) validate() error {
	if o.FrequentShare < 0 || o.FrequentShare >= 1 || o.FrequentChunks < 0 || (o.bounded() && o.Candidates < 1) {
		return fmt.Errorf("index: frequent share %g must be in [0, 1), frequent chunks %d not negative and candidates %d at least 1",
			o.FrequentShare, o.FrequentChunks, o.Candidates)
	}
	if o.MaxOpen < 0 {
		return fmt.Errorf("index: the most open tenant indexes must not be negative (0 is no bound), got %d", o.MaxOpen)
	}
	return nil
}

// open opens the index in dir; fresh empties it first, whatever its layout or mapping.
func open(dir string, logger *slog.Logger, o Options, fresh bool) (*Index, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	// The layout file is the lock: give up quickly rather than hang behind a running server.
	db, err := openLayout(dir, logger)
	if err != nil {
		return nil, err
	}
	ix := &Index{dir: dir, logger: logger, opts: o, layout: db, shards: map[uuid.UUID]*shard{}, pending: map[uuid.UUID]chan struct{}{}}
	if err := ix.readLayout(fresh); err != nil {
		releaseHolder(dir)
		db.Close()
		return nil, err
	}
	if ix.empty, err = emptyShard(); err != nil {
		releaseHolder(dir)
		db.Close()
		return nil, err
	}
	return ix, nil
}

// readLayout reads the sequence dir is caught up to. A directory without a layout gets a new
// one, after an index of the old layout in it is cleared; fresh clears the layout there is.
func (ix *Index) readLayout(fresh bool) error {
	var layout, schema, seq []byte
	err := ix.layout.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(layoutBucket); b != nil {
			layout, schema, seq = b.Get(layoutKey), b.Get(schemaKey), b.Get(globalSeqKey)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: reading %s: %w", ix.dir, err)
	}
	if layout == nil || fresh {
		return ix.reset(layout != nil)
	}
	if string(layout) != layoutVersion || string(schema) != schemaVersion {
		return fmt.Errorf("index %s has layout %q and mapping version %q, this ragd writes %q and %q: run `ragd reindex`",
			ix.dir, layout, schema, layoutVersion, schemaVersion)
	}
	if ix.seq, err = strconv.ParseInt(string(seq), 10, 64); err != nil {
		return fmt.Errorf("index %s: corrupt sequence %q: %w", ix.dir, seq, err)
	}
	return nil
}

// reset empties dir to a new layout at sequence 0: the next CatchUp builds every tenant's index
// from the store. It removes only what ragd wrote there: a single bleve index (the layout before
// tenants had their own, index_meta.json and store/), and the tenants' indexes when ours had a
// layout.
func (ix *Index) reset(ours bool) error {
	var remove []string
	if _, err := os.Stat(filepath.Join(ix.dir, "index_meta.json")); err == nil {
		ix.logger.Warn("the BM25 index has the old layout, one index for every tenant, whose term statistics cross tenants; "+
			"rebuilding it per tenant from the database", slog.String("dir", ix.dir))
		remove = append(remove, "index_meta.json", "store")
	}
	if ours {
		remove = append(remove, "tenants")
	}
	for _, name := range remove {
		if err := os.RemoveAll(filepath.Join(ix.dir, name)); err != nil {
			return fmt.Errorf("index: clearing %s: %w", ix.dir, err)
		}
	}
	ix.seq = 0
	return ix.writeLayout(0)
}

// writeLayout records that every change up to seq is applied.
func (ix *Index) writeLayout(seq int64) error {
	err := ix.layout.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(layoutBucket)
		if err != nil {
			return err
		}
		return errors.Join(b.Put(layoutKey, []byte(layoutVersion)), b.Put(schemaKey, []byte(schemaVersion)),
			b.Put(globalSeqKey, []byte(strconv.FormatInt(seq, 10))))
	})
	if err != nil {
		return fmt.Errorf("index: recording sequence %d in %s: %w", seq, ix.dir, err)
	}
	return nil
}

func (ix *Index) tenantDir(tenant uuid.UUID) string {
	return filepath.Join(ix.dir, "tenants", tenant.String())
}

// acquire returns tenant's index for one read or update, opening it when it exists on disk;
// create makes it when it does not. Without create, a tenant that has no index gets nil. The
// caller must hold life's read lock, and must release the index when done with it: until then
// it is not closed to make room for others.
func (ix *Index) acquire(tenant uuid.UUID, create bool) (*shard, error) {
	for {
		ix.smu.Lock()
		if s := ix.shards[tenant]; s != nil {
			s.refs++
			ix.lru.MoveToFront(s.elem)
			ix.smu.Unlock()
			return s, nil
		}
		if wait := ix.pending[tenant]; wait != nil {
			// Being opened or closed by another caller: bolt locks the index's files, so a
			// second open of the same index would wait on its own process.
			ix.smu.Unlock()
			<-wait
			continue
		}
		done := make(chan struct{})
		ix.pending[tenant] = done
		ix.smu.Unlock()

		// Opened outside smu: the open indexes of other tenants stay readable meanwhile.
		s, err := ix.openTenant(tenant, create)

		ix.smu.Lock()
		delete(ix.pending, tenant)
		close(done)
		if err != nil || s == nil {
			ix.smu.Unlock()
			return nil, err
		}
		s.refs = 1
		s.elem = ix.lru.PushFront(s)
		ix.shards[tenant] = s
		idle := ix.evictable()
		ix.smu.Unlock()
		ix.closeEvicted(idle)
		return s, nil
	}
}

// openTenant opens tenant's index on disk, or makes it when create is set; nil when it has none.
func (ix *Index) openTenant(tenant uuid.UUID, create bool) (*shard, error) {
	dir := ix.tenantDir(tenant)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) && !create {
		return nil, nil
	}
	s, err := openShard(dir)
	if err != nil {
		return nil, err
	}
	s.tenant = tenant
	return s, nil
}

// release ends one use of s that acquire began, and closes the indexes past the bound that no
// one is using any longer (s, when it was the last use of an index left out of the bound).
func (ix *Index) release(s *shard) {
	ix.smu.Lock()
	s.refs--
	idle := ix.evictable()
	ix.smu.Unlock()
	ix.closeEvicted(idle)
}

// evictable takes out of the open set the least recently used indexes no one is using, as many
// as are past Options.MaxOpen, and marks them pending until closeEvicted has closed them. It
// runs under smu.
func (ix *Index) evictable() []*shard {
	if ix.opts.MaxOpen <= 0 {
		return nil
	}
	var out []*shard
	for e := ix.lru.Back(); e != nil && len(ix.shards) > ix.opts.MaxOpen; {
		s, prev := e.Value.(*shard), e.Prev()
		if s.refs == 0 {
			ix.lru.Remove(e)
			delete(ix.shards, s.tenant)
			ix.pending[s.tenant] = make(chan struct{})
			ix.evicted++
			out = append(out, s)
		}
		e = prev
	}
	return out
}

// closeEvicted closes the indexes evictable took out, in the background: closing one waits for
// bleve's background work (about 2 ms, where opening takes 0.5), which no search should wait
// for. A caller that needs one of them again waits for its close (pending); Close waits for all.
func (ix *Index) closeEvicted(evicted []*shard) {
	for _, s := range evicted {
		ix.closing.Go(func() {
			err := s.bleve.Close()
			ix.smu.Lock()
			close(ix.pending[s.tenant])
			delete(ix.pending, s.tenant)
			open := len(ix.shards)
			ix.smu.Unlock()
			if err != nil {
				ix.logger.Warn("closing a tenant's BM25 index failed", slog.String("tenant", s.tenant.String()), slog.String("error", err.Error()))
				return
			}
			ix.logger.Debug("closed the least recently used tenant's BM25 index: more were open than the bound",
				slog.String("tenant", s.tenant.String()), slog.Int("open", open), slog.Int("bound", ix.opts.MaxOpen))
		})
	}
}

// OpenStats reports how many tenants' indexes are open now, and how many have been closed to keep
// Options.MaxOpen since Open: the second growing as fast as searches come means the bound is
// below the tenants in use, and most searches pay to reopen their index.
func (ix *Index) OpenStats() (open int, evicted uint64) {
	ix.smu.Lock()
	defer ix.smu.Unlock()
	return len(ix.shards), ix.evicted
}

// reader returns the index ctx's tenant reads, and the function that ends the read. A tenant
// without chunks reads an empty index.
func (ix *Index) reader(ctx context.Context) (*shard, func(), error) {
	ix.life.RLock()
	if ix.closed {
		ix.life.RUnlock()
		return nil, nil, fmt.Errorf("index: %w", ErrClosed)
	}
	s, err := ix.acquire(ragd.PrincipalOf(ctx).Tenant, false)
	if err != nil {
		ix.life.RUnlock()
		return nil, nil, err
	}
	if s == nil {
		return ix.empty, ix.life.RUnlock, nil
	}
	return s, func() {
		ix.release(s)
		ix.life.RUnlock()
	}, nil
}

// Close closes the index.
func (ix *Index) Close() error {
	ix.life.Lock()
	defer ix.life.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	// Every read and update holds life's read lock, so none is using an index now and no open
	// is under way; evicted indexes may still be closing.
	ix.closing.Wait()
	ix.smu.Lock()
	defer ix.smu.Unlock()
	var errs []error
	for _, s := range ix.shards {
		errs = append(errs, s.bleve.Close())
	}
	clear(ix.shards)
	ix.lru.Init()
	releaseHolder(ix.dir)
	errs = append(errs, ix.empty.bleve.Close(), ix.layout.Close())
	return errors.Join(errs...)
}

// Seq returns the last chunk change sequence applied, of any tenant.
func (ix *Index) Seq() int64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.seq
}

// TenantSeq returns the sequence of the last change applied to the index of ctx's tenant: it
// moves only when the tenant's own chunks change (0 when it has none).
func (ix *Index) TenantSeq(ctx context.Context) int64 {
	s, done, err := ix.reader(ctx)
	if err != nil {
		return 0
	}
	defer done()
	return s.seq.Load()
}

// all opens every tenant's index on disk and calls fn with each, for what concerns the whole
// index (counts, compaction). Each is released after fn, so the bound on open indexes holds.
func (ix *Index) all(fn func(*shard) error) error {
	ix.life.RLock()
	defer ix.life.RUnlock()
	if ix.closed {
		return fmt.Errorf("index: %w", ErrClosed)
	}
	entries, err := os.ReadDir(filepath.Join(ix.dir, "tenants"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("index: %w", err)
	}
	for _, e := range entries {
		tenant, err := uuid.Parse(e.Name())
		if err != nil || !e.IsDir() {
			continue // not ragd's
		}
		s, err := ix.acquire(tenant, false)
		if err != nil {
			return err
		}
		if s == nil {
			continue // removed meanwhile
		}
		err = fn(s)
		ix.release(s)
		if err != nil {
			return err
		}
	}
	return nil
}

// DocCount returns the number of chunks in the index, of every tenant.
func (ix *Index) DocCount() (uint64, error) {
	var n uint64
	err := ix.all(func(s *shard) error {
		c, err := s.bleve.DocCount()
		n += c
		return err
	})
	return n, err
}

// Search returns the n chunks of ctx's tenant that score highest by BM25 for text. The text is
// analyzed as words and never parsed as query syntax, so "+foo -bar title:x" is just five words.
// With Options.FrequentChunks or FrequentShare, a question with frequent words is searched by
// the bounded search, whose work does not grow with those words' postings.
func (ix *Index) Search(ctx context.Context, text string, n int) ([]ragd.Hit, error) {
	if n >= 1 && ix.opts.bounded() {
		hits, ok, err := ix.bounded(ctx, text, n)
		if err != nil || ok {
			return hits, err
		}
	}
	return ix.SearchIn(ctx, text, n, nil)
}

// bounded is Search by the bounded search; false when the question has no frequent word.
func (ix *Index) bounded(ctx context.Context, text string, n int) ([]ragd.Hit, bool, error) {
	s, done, err := ix.reader(ctx)
	if err != nil {
		return nil, false, err
	}
	defer done()
	hits, ok, err := s.boundedSearch(ctx, Terms(text), n, ix.opts.Candidates, ix.opts.frequent)
	if err != nil || !ok {
		return nil, ok, err
	}
	if hits, err = ix.tenants(ctx, s, hits); err != nil {
		return nil, false, err
	}
	return ranked(hits, n), true, nil
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
	var q query.Query = textMatch(text)
	if chunks != nil {
		ids := make([]string, len(chunks))
		for i, id := range chunks {
			ids[i] = strconv.FormatInt(id, 10)
		}
		q = bleve.NewConjunctionQuery(q, bleve.NewDocIDQuery(ids))
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
	return ix.top(ctx, bleve.NewConjunctionQuery(textMatch(text), in), n)
}

// textMatch matches text's words in the composite field. The tenant is not a clause of the
// query: the search runs in the tenant's own index, and top checks the tenant of the hits it
// returns (the second wall).
func textMatch(text string) *query.MatchQuery {
	match := query.NewMatchQuery(text)
	match.SetField("_all")
	return match
}

// DocFreq returns how many of ctx's tenant's chunks have each term (as Terms writes it) in
// field: "title", "heading", "text", or "_all" for any of them.
func (ix *Index) DocFreq(ctx context.Context, field string, terms []string) (map[string]int, error) {
	s, done, err := ix.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.docFreq(field, terms)
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
	s, done, err := ix.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	var hits []ragd.Hit
	for size := n + tieMargin; ; size *= 4 {
		res, err := s.bleve.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, size, 0, false))
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
	if hits, err = ix.tenants(ctx, s, hits); err != nil {
		return nil, err
	}
	return ranked(hits, n), nil
}

// ranked orders hits by score, ties in chunk id order, and returns the first n, ranked.
func ranked(hits []ragd.Hit, n int) []ragd.Hit {
	slices.SortStableFunc(hits, func(a, b ragd.Hit) int {
		return cmp.Or(cmp.Compare(tied(b.Score), tied(a.Score)), cmp.Compare(a.ChunkID, b.ChunkID))
	})
	hits = hits[:min(n, len(hits))]
	for i := range hits {
		hits[i].Rank = i + 1
	}
	return hits
}

// tenants keeps the hits the index marks as chunks of ctx's tenant: a second wall behind the
// search running in the tenant's own index, so that nothing of another tenant is returned even
// if a tenant's index held it. It looks up the few hits returned instead of adding the tenant
// as a clause of the search, which intersected every posting of every query word with the
// tenant's and, matching every chunk of the tenant's own index, cost more than half of each
// search's CPU. A hit it cannot confirm is left out (fail closed); one that is in the index as
// another tenant's is logged as the corruption it is. A chunk deleted between the search and
// the check is left out silently: it is no longer active.
func (ix *Index) tenants(ctx context.Context, s *shard, hits []ragd.Hit) ([]ragd.Hit, error) {
	if len(hits) == 0 {
		return hits, nil
	}
	tenant := ragd.PrincipalOf(ctx).Tenant
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = strconv.FormatInt(h.ChunkID, 10)
	}
	own, err := s.present(ctx, ids, tenant.String())
	if err != nil {
		return nil, err
	}
	if len(own) == len(hits) {
		return hits, nil
	}
	var missing []string
	for _, id := range ids {
		if !own[id] {
			missing = append(missing, id)
		}
	}
	foreign, err := s.present(ctx, missing, "")
	if err != nil {
		return nil, err
	}
	if len(foreign) > 0 {
		ix.logger.ErrorContext(ctx, "the BM25 index of a tenant holds chunks not marked as the tenant's; they are left out of its results: run `ragd reindex`",
			slog.String("tenant", tenant.String()), slog.Any("chunks", slices.Sorted(maps.Keys(foreign))))
	}
	return slices.DeleteFunc(hits, func(h ragd.Hit) bool { return !own[strconv.FormatInt(h.ChunkID, 10)] }), nil
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
// them, with the index's analyzer and ctx's tenant's term statistics, so it matches what BM25
// matches. It is in [0, 1] whatever the query's length, which makes one threshold meaningful
// across questions (carried sources are kept or dropped by it when no model is configured).
// Weights are summed in term order, so equal statistics give equal scores to the last bit.
func (ix *Index) Coverage(ctx context.Context, query string, texts []string) ([]float64, error) {
	s, done, err := ix.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	analyzer := english()
	terms := analyzedTerms(analyzer, query)
	idf, _, err := s.idf(terms)
	if err != nil {
		return nil, err
	}
	order := slices.Sorted(maps.Keys(idf))
	var total float64
	for _, term := range order {
		total += idf[term]
	}
	out := make([]float64, len(texts))
	if total == 0 {
		return out, nil
	}
	for i, t := range texts {
		have := analyzedTerms(analyzer, t)
		var got float64
		for _, term := range order {
			if have[term] {
				got += idf[term]
			}
		}
		out[i] = got / total
	}
	return out, nil
}

// Information says how much text says by itself, in words: the summed IDF of its distinct
// terms, each over the IDF of a term found in one chunk of ctx's tenant, so a word only one chunk
// has counts 1, a word every chunk has about 0, and a word no chunk has 0 (it cannot find
// anything). It is what a question alone can retrieve with, whatever the corpus's size.
func (ix *Index) Information(ctx context.Context, text string) (float64, error) {
	s, done, err := ix.reader(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	terms := analyzedTerms(english(), text)
	n, dfs, err := s.termCounts("_all", slices.Sorted(maps.Keys(terms)))
	if err != nil {
		return 0, err
	}
	unique := bm25IDF(n, 1)
	var sum float64
	for _, term := range slices.Sorted(maps.Keys(dfs)) {
		if df := dfs[term]; df > 0 && unique > 0 {
			sum += bm25IDF(n, df) / unique
		}
	}
	return sum, nil
}

// Keywords returns up to n words of text that say the most, by the IDF of their analyzed term
// among ctx's tenant's chunks, leaving out words whose term is in exclude's (stop words have no
// term). Words come back as written, so they can be searched again; each term once, rarest first.
func (ix *Index) Keywords(ctx context.Context, text, exclude string, n int) ([]string, error) {
	s, done, err := ix.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	analyzer := english()
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
	idf, df, err := s.idf(terms)
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

// apply indexes one page of changes, each in its tenant's index (made when the tenant's first
// chunk arrives), then records the page as applied. Each tenant's index records its own sequence
// in the batch that applies its changes, so a crash before the page is recorded repeats the page
// without applying a change twice.
func (ix *Index) apply(changes []ragd.ChunkChange) error {
	var tenants []uuid.UUID
	byTenant := map[uuid.UUID][]ragd.ChunkChange{}
	for _, c := range changes {
		t := c.Tenant
		if t == uuid.Nil {
			t = ragd.DefaultTenant
		}
		if _, ok := byTenant[t]; !ok {
			tenants = append(tenants, t)
		}
		byTenant[t] = append(byTenant[t], c)
	}
	for _, t := range tenants {
		s, err := ix.acquire(t, true)
		if err != nil {
			return err
		}
		// Held until its batch is persisted: an index is never closed under an update.
		err = s.apply(t, byTenant[t])
		ix.release(s)
		if err != nil {
			return err
		}
	}
	last := changes[len(changes)-1].Seq
	if err := ix.writeLayout(last); err != nil {
		return err
	}
	ix.seq = last
	return nil
}

// pageSize is how many changes one catch-up step reads and applies.
const pageSize = 2000

// CatchUp applies every change the store has past the index's sequence, of every tenant, and
// returns how many.
func (ix *Index) CatchUp(ctx context.Context, src ragd.Store) (int, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.life.RLock()
	defer ix.life.RUnlock()
	if ix.closed {
		return 0, fmt.Errorf("index: %w", ErrClosed)
	}
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

// Rebuild replaces the index in dir by one built from scratch from the store, every tenant's.
// It needs the index to itself (ErrLocked while a server has it open). A rebuild that stops
// half-way leaves an index caught up as far as it got, which the next catch-up completes. o is
// as for OpenWith (its MaxOpen bounds the indexes the rebuild holds open).
func Rebuild(ctx context.Context, dir string, src ragd.Store, logger *slog.Logger, o Options) (*Index, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	ix, err := open(dir, logger, o, true)
	if err != nil {
		return nil, err
	}
	if _, err := ix.CatchUp(ctx, src); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
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
	ix.life.RLock()
	defer ix.life.RUnlock()
	if ix.closed {
		return fmt.Errorf("index: %w: %w", ragd.ErrUnavailable, ErrClosed)
	}
	if err := ix.layout.View(func(*bolt.Tx) error { return nil }); err != nil {
		return fmt.Errorf("index: %w: %w", ragd.ErrUnavailable, err)
	}
	if _, err := os.Stat(filepath.Join(ix.dir, "layout.bolt")); err != nil {
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

// Segments is how many segments the index is made of, summed over tenants: each query visits
// every segment of its tenant's index.
func (ix *Index) Segments() (int, error) {
	n := 0
	err := ix.all(func(s *shard) error {
		sc, err := s.scorch()
		if err != nil {
			return err
		}
		v, _ := sc.StatsMap()["TotFileSegmentsAtRoot"].(uint64)
		n += int(v)
		return nil
	})
	return n, err
}

// Compact merges every segment of each tenant's index into one and waits until it is done.
// After a bulk load the background merger leaves tiers of segments behind; one segment reads
// each term's postings once. Later changes add small segments again, which the merger handles
// as usual.
func (ix *Index) Compact(ctx context.Context) error {
	return ix.all(func(s *shard) error {
		sc, err := s.scorch()
		if err != nil {
			return err
		}
		if err := sc.ForceMerge(ctx, nil); err != nil {
			return fmt.Errorf("index: compacting: %w", err)
		}
		return nil
	})
}
