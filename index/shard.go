package index

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/google/uuid"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/ragd/ragd"
)

// schemaVersion changes whenever the mapping changes, so an index built with an older mapping is
// rebuilt instead of silently scoring differently.
const schemaVersion = "2"

var (
	seqKey     = []byte("ragd.seq")
	versionKey = []byte("ragd.schema")
)

// shard is one tenant's bleve index: its chunks and nobody else's, so every BM25 statistic read
// from it (document count, document frequencies, field lengths) is the tenant's own.
type shard struct {
	bleve  bleve.Index
	seq    atomic.Int64 // the last change applied to it; only CatchUp (under Index.mu) moves it
	tenant uuid.UUID
	refs   int           // reads and updates using it (under Index.smu); it is closed only at 0
	elem   *list.Element // its place in Index.lru
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

	// The tenant is a keyword every search's hits are checked against, a second wall behind the
	// index being the tenant's own; it is not text, so it stays out of _all and of BM25's
	// statistics.
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

// openShard opens the bleve index in dir, creating an empty one when dir does not exist.
func openShard(dir string) (*shard, error) {
	var b bleve.Index
	_, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		b, err = bleve.New(dir, newMapping())
		if err == nil {
			err = b.SetInternal(versionKey, []byte(schemaVersion))
		}
	case err == nil:
		// bolt locks the index file; give up quickly rather than hang behind another process.
		b, err = bleve.OpenUsing(dir, map[string]any{"bolt_timeout": "2s"})
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("index %s: %w", dir, ErrLocked)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("index: opening %s: %w", dir, err)
	}
	s, err := shardOf(b)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("index %s: %w", dir, err)
	}
	return s, nil
}

// emptyShard is an index without chunks, in memory: what a tenant that has none reads.
func emptyShard() (*shard, error) {
	b, err := bleve.NewUsing("", newMapping(), scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	return &shard{bleve: b}, nil
}

func shardOf(b bleve.Index) (*shard, error) {
	v, err := b.GetInternal(versionKey)
	if err != nil {
		return nil, fmt.Errorf("reading the mapping version: %w", err)
	}
	if string(v) != schemaVersion {
		return nil, fmt.Errorf("mapping version %q, this ragd writes %q: run `ragd reindex`", v, schemaVersion)
	}
	raw, err := b.GetInternal(seqKey)
	if err != nil {
		return nil, fmt.Errorf("reading the sequence: %w", err)
	}
	s := &shard{bleve: b}
	if len(raw) > 0 {
		seq, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("corrupt sequence %q: %w", raw, err)
		}
		s.seq.Store(seq)
	}
	return s, nil
}

type chunkDoc struct {
	Title   string `json:"title"`
	Heading string `json:"heading"`
	Text    string `json:"text"`
	Tenant  string `json:"tenant"`
}

// apply indexes one tenant's changes, in seq order, and records the last sequence in the same
// batch, so a crash between the two cannot make the shard skip or repeat changes. Changes the
// shard already has (a catch-up repeated after a crash) are left out.
func (s *shard) apply(tenant uuid.UUID, changes []ragd.ChunkChange) error {
	b := s.bleve.NewBatch()
	applied := s.seq.Load()
	last := applied
	for _, c := range changes {
		if c.Seq <= applied {
			continue
		}
		id := strconv.FormatInt(c.ID, 10)
		if c.Active {
			if err := b.Index(id, chunkDoc{Title: c.Title, Heading: c.Heading, Text: c.Text, Tenant: tenant.String()}); err != nil {
				return fmt.Errorf("index: chunk %d: %w", c.ID, err)
			}
		} else {
			b.Delete(id)
		}
		last = c.Seq
	}
	if last == applied {
		return nil
	}
	b.SetInternal(seqKey, []byte(strconv.FormatInt(last, 10)))
	// A disk index's Batch returns once the batch is persisted, so the caller may record the
	// changes as applied.
	if err := s.bleve.Batch(b); err != nil {
		return fmt.Errorf("index: applying changes up to %d: %w", last, err)
	}
	s.seq.Store(last)
	return nil
}

// present returns which of the chunks ids are in the shard, as tenant's when tenant is not "".
// It computes no scores.
func (s *shard) present(ctx context.Context, ids []string, tenant string) (map[string]bool, error) {
	var q query.Query = bleve.NewDocIDQuery(ids)
	if tenant != "" {
		t := query.NewTermQuery(tenant)
		t.SetField("tenant")
		q = bleve.NewConjunctionQuery(q, t)
	}
	req := bleve.NewSearchRequestOptions(q, len(ids), 0, false)
	req.Score = bleve.ScoreNone
	res, err := s.bleve.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("index: checking the tenant of hits: %w", err)
	}
	out := make(map[string]bool, len(res.Hits))
	for _, h := range res.Hits {
		out[h.ID] = true
	}
	return out, nil
}

// docFreq returns how many chunks have each term in field.
func (s *shard) docFreq(field string, terms []string) (map[string]int, error) {
	_, dfs, err := s.termCounts(field, terms)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(dfs))
	for term, df := range dfs {
		out[term] = int(df)
	}
	return out, nil
}

// idf returns BM25's inverse document frequency of each term in the composite field, and the
// document frequency it came from.
func (s *shard) idf(terms map[string]bool) (map[string]float64, map[string]uint64, error) {
	n, dfs, err := s.termCounts("_all", slices.Collect(maps.Keys(terms)))
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string]float64, len(dfs))
	for term, df := range dfs {
		out[term] = bm25IDF(n, df)
	}
	return out, dfs, nil
}

// bm25IDF is BM25's inverse document frequency of a term that df of n documents have.
func bm25IDF(n, df uint64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// termCounts returns the shard's document count and how many of its chunks have each term in
// field, read through one index reader.
func (s *shard) termCounts(field string, terms []string) (uint64, map[string]uint64, error) {
	adv, err := s.bleve.Advanced()
	if err != nil {
		return 0, nil, fmt.Errorf("index: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return 0, nil, fmt.Errorf("index: %w", err)
	}
	defer r.Close()
	n, err := r.DocCount()
	if err != nil {
		return 0, nil, fmt.Errorf("index: %w", err)
	}
	dfs := make(map[string]uint64, len(terms))
	for _, term := range terms {
		tfr, err := r.TermFieldReader(context.Background(), []byte(term), field, false, false, false)
		if err != nil {
			return 0, nil, fmt.Errorf("index: term %q: %w", term, err)
		}
		dfs[term] = tfr.Count()
		tfr.Close()
	}
	return n, dfs, nil
}

func (s *shard) scorch() (*scorch.Scorch, error) {
	adv, err := s.bleve.Advanced()
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	sc, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil, fmt.Errorf("index: %T is not a scorch index", adv)
	}
	return sc, nil
}
