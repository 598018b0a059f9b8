// Package ingest turns files, web pages and corpus records into versioned documents and chunks in
// the store: detect the format, extract text with its structure, chunk it into token windows,
// embed the chunks in batches, and write each batch of documents in one transaction. Re-ingesting
// unchanged content is a no-op, so an interrupted ingest is resumed by running it again.
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/chunk"
	"github.com/ragd/ragd/extract"
	"github.com/ragd/ragd/kg"
)

// Embedder computes one vector per text.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Config tunes ingestion.
type Config struct {
	Chunk chunk.Options
	// BatchDocs is how many documents are embedded and written together, in one transaction.
	BatchDocs int
	// MaxBytes is the largest file or download accepted.
	MaxBytes int64
	// Graph records each chunk's entities for the knowledge graph.
	Graph bool
	// Fetch says which addresses URL sources may be fetched from.
	Fetch  FetchConfig
	Logger *slog.Logger
}

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	c.Chunk = c.Chunk.WithDefaults()
	if c.BatchDocs == 0 {
		c.BatchDocs = 64
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = 64 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate checks the settings.
func (c Config) Validate() error {
	if err := c.Chunk.Validate(); err != nil {
		return err
	}
	if c.BatchDocs < 1 {
		return fmt.Errorf("batch of %d documents: must be at least 1", c.BatchDocs)
	}
	if c.MaxBytes < 1 {
		return fmt.Errorf("max bytes %d: must be positive", c.MaxBytes)
	}
	return nil
}

// Ingester writes sources into a store. Embedder may be nil: chunks are then stored without
// vectors and only BM25 finds them until a later `ragd reindex --embeddings`.
type Ingester struct {
	cfg      Config
	store    ragd.Store
	embedder Embedder
	// storeMu keeps the pipeline's stages to one store call at a time: the store may be a single
	// connection (a transaction), and the calls overlap embedding either way.
	storeMu sync.Mutex
}

// New returns an Ingester.
func New(cfg Config, st ragd.Store, emb Embedder) (*Ingester, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	return &Ingester{cfg: cfg, store: st, embedder: emb}, nil
}

// Result is what happened to one source.
type Result struct {
	Name    string
	DocID   string // empty when Err is set
	Version int
	Status  ragd.SaveStatus // empty when Err is set
	Chunks  int
	Err     error
}

// Stats sums up an ingest run. The durations split where the time went.
type Stats struct {
	Documents int // sources seen
	Created   int
	Updated   int
	Unchanged int
	Failed    int
	Chunks    int // chunks written
	Extract   time.Duration
	Embed     time.Duration
	Store     time.Duration
	Elapsed   time.Duration

	// Skipped counts the files directory walks left out (ErrSkipped); SkippedNames are the
	// first few of them.
	Skipped      int
	SkippedNames []string
}

func (s *Stats) count(r Result) {
	s.Documents++
	switch {
	case r.Err != nil:
		s.Failed++
	case r.Status == ragd.Created:
		s.Created++
	case r.Status == ragd.Updated:
		s.Updated++
	case r.Status == ragd.Unchanged:
		s.Unchanged++
	}
	if r.Status != ragd.Unchanged {
		s.Chunks += r.Chunks
	}
}

// prepared is a source ready to store: extracted, chunked, hashed.
type prepared struct {
	name string
	doc  *extract.Doc
	nv   ragd.NewVersion // without chunks until the document turns out to be new or changed
}

// Ingest reads every source and records it. A source that cannot be read, extracted or
// understood fails alone, reported through onResult (which may be nil) and counted in Stats;
// ingest goes on with the others. A store or embedding failure stops the run: the batch in
// flight is rolled back, and what was committed before stays (running again resumes).
//
// Ingest is a pipeline of four stages joined by queues of one batch, so that embedding (the
// slow stage, which uses every core) never waits for the others: reading and extracting, looking
// up and chunking, embedding, and writing. Batches are written in order, one transaction each.
// A document in two batches in a row may be embedded twice (its second lookup ran before its
// first write committed); the store still records it once, as SaveVersions compares content
// hashes under its lock.
func (in *Ingester) Ingest(ctx context.Context, sources iter.Seq2[Source, error], onResult func(Result)) (Stats, error) {
	start := time.Now()
	var (
		mu sync.Mutex
		st Stats
	)
	report := func(r Result) {
		mu.Lock()
		defer mu.Unlock()
		st.count(r)
		if r.Err != nil {
			in.cfg.Logger.WarnContext(ctx, "not ingested", slog.String("source", r.Name), slog.String("error", r.Err.Error()))
		}
		if onResult != nil {
			onResult(r)
		}
	}
	// Each stage adds the time it spends to its own Stats, summed at the end.
	var read, plan, emb, write Stats
	batches := make(chan []prepared, 1)
	planned := make(chan *work, 1)
	embedded := make(chan *work, 1)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(batches)
		return in.read(gctx, sources, report, batches, &read)
	})
	g.Go(func() error {
		defer close(planned)
		for b := range batches {
			// Store calls get ctx, not gctx: cancelling a query mid-way closes its connection,
			// and the store may be a single transaction that the caller still needs.
			w, err := in.plan(ctx, b, &plan)
			if err != nil {
				return err
			}
			if err := send(gctx, planned, w); err != nil {
				return err
			}
		}
		return nil
	})
	g.Go(func() error {
		defer close(embedded)
		for w := range planned {
			if err := in.embed(gctx, w.changed, &emb); err != nil {
				return err
			}
			if err := send(gctx, embedded, w); err != nil {
				return err
			}
		}
		return nil
	})
	g.Go(func() error {
		for w := range embedded {
			results, err := in.save(ctx, w, &write)
			if err != nil {
				return err
			}
			for _, r := range results {
				report(r)
			}
		}
		return nil
	})
	err := g.Wait()
	if err == nil {
		err = ctx.Err()
	}
	st.Extract = read.Extract + plan.Extract
	st.Embed = emb.Embed
	st.Store = plan.Store + write.Store
	st.Elapsed = time.Since(start)
	st.Skipped, st.SkippedNames = read.Skipped, read.SkippedNames
	if st.Skipped > 0 {
		in.cfg.Logger.InfoContext(ctx, "skipped files in directories: not of an extension ingest reads",
			slog.Int("files", st.Skipped), slog.String("first", strings.Join(st.SkippedNames, ", ")),
			slog.String("extensions", strings.Join(Extensions(), " ")))
	}
	return st, err
}

// skippedNames is how many skipped files Stats names.
const skippedNames = 3

// send queues v for the next stage, unless the run was stopped.
func send[T any](ctx context.Context, ch chan<- T, v T) error {
	select {
	case ch <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// read extracts the sources and cuts them into batches of BatchDocs. A document that comes back
// within one batch ends the batch: the later one must see the earlier written.
func (in *Ingester) read(ctx context.Context, sources iter.Seq2[Source, error], report func(Result), out chan<- []prepared, st *Stats) error {
	var batch []prepared
	keys := map[string]bool{}
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := send(ctx, out, batch)
		batch, keys = nil, map[string]bool{}
		return err
	}
	for src, err := range sources {
		if err := ctx.Err(); err != nil {
			return err
		}
		if errors.Is(err, ErrSkipped) {
			st.Skipped++
			if len(st.SkippedNames) < skippedNames {
				st.SkippedNames = append(st.SkippedNames, src.Name)
			}
			continue
		}
		if err != nil {
			report(Result{Name: src.Name, Err: err})
			continue
		}
		t := time.Now()
		p, err := in.prepare(ctx, src)
		st.Extract += time.Since(t)
		if err != nil {
			report(Result{Name: src.Name, Err: err})
			continue
		}
		if keys[p.nv.SourceKey] {
			if err := flush(); err != nil {
				return err
			}
		}
		batch = append(batch, p)
		keys[p.nv.SourceKey] = true
		if len(batch) >= in.cfg.BatchDocs {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// IngestOne records a single source and returns its result, or the reason it was refused.
func (in *Ingester) IngestOne(ctx context.Context, src Source) (Result, error) {
	var got Result
	_, err := in.Ingest(ctx, func(yield func(Source, error) bool) { yield(src, nil) }, func(r Result) { got = r })
	if err != nil {
		return Result{}, err
	}
	return got, got.Err
}

// prepare extracts one source and hashes its content. Nothing here touches the store, and
// chunking waits until the document turns out to be new or changed: re-ingesting an unchanged
// corpus should cost reading it, no more.
func (in *Ingester) prepare(ctx context.Context, src Source) (prepared, error) {
	doc := src.Doc
	if doc == nil {
		f, err := extract.Detect(src.Name, src.ContentType, src.Data)
		if err != nil {
			return prepared{}, err
		}
		if doc, err = extract.Extract(ctx, f, src.Data, src.URL); err != nil {
			return prepared{}, err
		}
	}
	if src.Title != "" {
		doc.Title = src.Title
	}
	doc.Title = ragd.ClipTitle(doc.Title)
	key := src.Key
	if key == "" {
		sum := sha256.Sum256(src.Data)
		key = "sha256:" + hex.EncodeToString(sum[:])
	}
	format := string(doc.Format)
	if src.Doc != nil {
		format = "jsonl-record"
	}
	nv := ragd.NewVersion{
		SourceKey:   key,
		Format:      format,
		Title:       doc.Title,
		URL:         src.URL,
		Path:        src.Path,
		PublishedAt: doc.Published,
		ContentHash: contentHash(doc),
		Bytes:       len(doc.Text),
	}
	return prepared{name: src.Name, doc: doc, nv: nv}, nil
}

// split chunks a new or changed document, and finds its chunks' entities when the graph is on.
func (in *Ingester) split(p *prepared) error {
	chunks := chunk.Split(p.doc, in.cfg.Chunk)
	if len(chunks) == 0 {
		return fmt.Errorf("%w: nothing to index after chunking", extract.ErrEmpty)
	}
	p.nv.Chunks = make([]ragd.Chunk, len(chunks))
	for i, c := range chunks {
		p.nv.Chunks[i] = ragd.Chunk{Heading: c.Heading, Text: c.Text, PageStart: c.PageStart, PageEnd: c.PageEnd,
			CharStart: c.CharStart, CharEnd: c.CharEnd, Tokens: c.Tokens}
	}
	if in.cfg.Graph {
		p.nv.Entities = make([][]kg.Entity, len(chunks))
		for i, c := range chunks {
			// A document's links cannot be placed in a chunk: they count for its first one.
			var links []string
			if i == 0 {
				links = p.doc.Links
			}
			p.nv.Entities[i] = ChunkEntities(p.doc.Title, c.Text, links)
		}
	}
	return nil
}

// contentHash identifies a version's content: what a reader would see, not the bytes of the
// file, so re-saving a file unchanged is not a new version.
func contentHash(doc *extract.Doc) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", doc.Format, doc.Title)
	h.Write([]byte(doc.Text))
	return hex.EncodeToString(h.Sum(nil))
}

// ChunkEntities are the knowledge-graph entities of one chunk: those of its text read with its
// document's title, and of the document's links (which count for its first chunk).
func ChunkEntities(title, text string, links []string) []kg.Entity {
	return kg.Extract(title+"\n"+text, links)
}

// work is one batch on its way through the pipeline.
type work struct {
	batch   []prepared
	byKey   map[string]ragd.SaveResult // unchanged documents, then the saved ones
	chunks  map[string]int
	failed  map[string]error
	changed []ragd.NewVersion
}

// plan looks a batch up in the store and chunks the documents that are new or changed. Documents
// whose content is unchanged are answered from their hashes without being chunked or embedded.
func (in *Ingester) plan(ctx context.Context, batch []prepared, st *Stats) (*work, error) {
	keys := make([]string, len(batch))
	for i, p := range batch {
		keys[i] = p.nv.SourceKey
	}
	t := time.Now()
	in.storeMu.Lock()
	current, err := in.store.Current(ctx, keys)
	in.storeMu.Unlock()
	st.Store += time.Since(t)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	w := &work{batch: batch, byKey: make(map[string]ragd.SaveResult, len(batch)), chunks: make(map[string]int, len(batch)),
		failed: map[string]error{}}
	t = time.Now()
	for _, p := range batch {
		if c, ok := current[p.nv.SourceKey]; ok && c.Hash == p.nv.ContentHash {
			w.byKey[p.nv.SourceKey] = ragd.SaveResult{DocID: c.DocID, Version: c.Version, Status: ragd.Unchanged}
			w.chunks[p.nv.SourceKey] = c.Chunks
			continue
		}
		if err := in.split(&p); err != nil {
			w.failed[p.nv.SourceKey] = err
			continue
		}
		w.changed = append(w.changed, p.nv)
		w.chunks[p.nv.SourceKey] = len(p.nv.Chunks)
	}
	st.Extract += time.Since(t)
	return w, nil
}

// save writes a planned and embedded batch in one transaction and returns its results in input
// order.
func (in *Ingester) save(ctx context.Context, w *work, st *Stats) ([]Result, error) {
	if len(w.changed) > 0 {
		t := time.Now()
		in.storeMu.Lock()
		saved, err := in.store.SaveVersions(ctx, w.changed)
		in.storeMu.Unlock()
		st.Store += time.Since(t)
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		for i, s := range saved {
			w.byKey[w.changed[i].SourceKey] = s
		}
	}
	results := make([]Result, len(w.batch))
	for i, p := range w.batch {
		if err := w.failed[p.nv.SourceKey]; err != nil {
			results[i] = Result{Name: p.name, Err: err}
			continue
		}
		s := w.byKey[p.nv.SourceKey]
		results[i] = Result{Name: p.name, DocID: s.DocID.String(), Version: s.Version, Status: s.Status, Chunks: w.chunks[p.nv.SourceKey]}
	}
	return results, nil
}

func (in *Ingester) embed(ctx context.Context, vs []ragd.NewVersion, st *Stats) error {
	if in.embedder == nil || len(vs) == 0 {
		return nil
	}
	var texts []string
	for _, v := range vs {
		for _, c := range v.Chunks {
			texts = append(texts, ragd.PassageText(v.Title, c.Heading, c.Text))
		}
	}
	t := time.Now()
	vecs, err := in.embedder.Embed(ctx, texts)
	st.Embed += time.Since(t)
	if err != nil {
		return fmt.Errorf("ingest: embedding %d chunks: %w", len(texts), err)
	}
	if len(vecs) != len(texts) {
		return errors.New("ingest: embedder returned the wrong number of vectors")
	}
	i := 0
	for _, v := range vs {
		for j := range v.Chunks {
			v.Chunks[j].Embedding = vecs[i]
			i++
		}
	}
	return nil
}

// Walk is the package's Walk with this ingester's size limit and fetch policy.
func (in *Ingester) Walk(ctx context.Context, paths []string) iter.Seq2[Source, error] {
	return Walk(ctx, paths, in.cfg.Fetch.Client(), in.cfg.MaxBytes)
}

// EmbeddingTexts returns what Ingest would embed for sources into an empty store, batch by batch
// as Ingest forms them: for measuring the embedding model alone on exactly that work.
func (in *Ingester) EmbeddingTexts(ctx context.Context, sources iter.Seq2[Source, error]) ([][]string, error) {
	batches := make(chan []prepared, 1)
	var st Stats
	errc := make(chan error, 1)
	go func() {
		defer close(batches)
		errc <- in.read(ctx, sources, func(Result) {}, batches, &st)
	}()
	var out [][]string
	for b := range batches {
		var texts []string
		for _, p := range b {
			if err := in.split(&p); err != nil {
				continue
			}
			for _, c := range p.nv.Chunks {
				texts = append(texts, ragd.PassageText(p.nv.Title, c.Heading, c.Text))
			}
		}
		out = append(out, texts)
	}
	return out, <-errc
}
