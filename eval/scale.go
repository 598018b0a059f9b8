package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/ragd/ragd/citations"
	"github.com/ragd/ragd/extract"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/token"
)

// Passage is a real text cut into sentences, the material scale corpora are recombined from.
type Passage struct {
	Title     string
	Sentences []string
	Tokens    []int // cl100k_base tokens of each sentence
}

// LoadPassages reads the records of JSONL corpora (BEIR and MTRAG layout) into sentences.
func LoadPassages(ctx context.Context, corpora []string) ([]Passage, error) {
	var out []Passage
	for src, err := range ingest.Walk(ctx, corpora, nil, 1<<30) {
		if errors.Is(err, ingest.ErrSkipped) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("eval: reading passages: %w", err)
		}
		if src.Doc == nil {
			return nil, fmt.Errorf("eval: %s is not a JSONL corpus", src.Name)
		}
		var p Passage
		p.Title = src.Doc.Title
		for _, s := range citations.Sentences(src.Doc.Text) {
			p.Sentences = append(p.Sentences, s.Text)
			p.Tokens = append(p.Tokens, token.Count(s.Text))
		}
		if len(p.Sentences) > 0 {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("eval: no passages in %s", strings.Join(corpora, ", "))
	}
	return out, nil
}

// ScaleCorpus makes documents of about Tokens tokens each (one chunk apiece at ragd's default
// chunk size) by recombining the sentences of real passages: a document takes the title of one
// passage and runs of consecutive sentences from several, so words keep their natural
// frequencies and neighbours while no two documents are alike. Document i is the same on every
// run with the same seed.
type ScaleCorpus struct {
	Passages []Passage
	Seed     uint64
	// Tokens is the most cl100k_base tokens of a document's text.
	Tokens int
	// Prefix starts every source key, so corpora of different sizes or seeds never collide.
	Prefix string
}

// Document returns the title and text of document i.
func (c ScaleCorpus) Document(i int) (title, text string) {
	r := rand.New(rand.NewPCG(c.Seed, uint64(i)))
	var b strings.Builder
	budget := c.Tokens
	for tries := 0; budget > 0 && tries < 64; tries++ {
		p := c.Passages[r.IntN(len(c.Passages))]
		if title == "" {
			title = p.Title
		}
		// A run of up to four consecutive sentences that fits.
		start := r.IntN(len(p.Sentences))
		for j := start; j < len(p.Sentences) && j < start+4 && p.Tokens[j] < budget; j++ {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(p.Sentences[j])
			budget -= p.Tokens[j] + 1
		}
		if budget < c.Tokens/8 {
			break
		}
	}
	return title, b.String()
}

// Sources yields documents [from, to) as ingest sources.
func (c ScaleCorpus) Sources(ctx context.Context, from, to int) iter.Seq2[ingest.Source, error] {
	return func(yield func(ingest.Source, error) bool) {
		for i := from; i < to; i++ {
			title, text := c.Document(i)
			key := fmt.Sprintf("%s/%d", c.Prefix, i)
			doc, err := extract.Extract(ctx, extract.Text, []byte(text), "")
			if err == nil {
				doc.Title = title
			}
			if !yield(ingest.Source{Key: key, Name: key, Doc: doc}, err) {
				return
			}
		}
	}
}

// HashEmbedder gives every text a deterministic unit vector without a model: each word adds
// ±1 at a few coordinates picked by its hash (a sparse random projection of the bag of words),
// so texts that share words lie close together. Vector search over such vectors costs what it
// costs over model embeddings (clustered, not uniform, points); the neighbours it finds mean
// nothing beyond shared words.
type HashEmbedder struct {
	Dimension int
}

// hashesPerWord is how many coordinates one word touches.
const hashesPerWord = 8

// Dim is the vectors' length.
func (h HashEmbedder) Dim() int { return h.Dimension }

// Embed returns one unit vector per text.
func (h HashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.vector(t)
	}
	return out, nil
}

func (h HashEmbedder) vector(text string) []float32 {
	v := make([]float32, h.Dimension)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) < 3 || scaleStopWords[w] {
			continue
		}
		f := fnv.New64a()
		f.Write([]byte(w))
		x := f.Sum64()
		for range hashesPerWord {
			// xorshift: a new pseudo-random 64 bits from the last, deterministic per word.
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			if x&1 == 0 {
				v[(x>>1)%uint64(h.Dimension)]++
			} else {
				v[(x>>1)%uint64(h.Dimension)]--
			}
		}
	}
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		v[0] = 1 // a text without words still gets a unit vector
		return v
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// scaleStopWords are words too common to place a text; longer than two letters, since shorter
// ones are skipped anyway.
var scaleStopWords = map[string]bool{"the": true, "and": true, "for": true, "are": true, "was": true, "were": true,
	"with": true, "that": true, "this": true, "from": true, "not": true, "but": true, "have": true, "has": true,
	"had": true, "been": true, "its": true, "which": true, "their": true, "they": true, "these": true, "than": true,
	"also": true, "all": true, "can": true, "may": true, "our": true, "there": true, "into": true, "such": true}

// ScaleReport is what `ragd eval scale` measured, one entry per corpus size.
type ScaleReport struct {
	Sizes []ScaleSize `json:"sizes"`
	Notes []string    `json:"notes"`
}

// ScaleSize is one corpus size: how long loading it took, what it occupies, and the latency of
// the /v1/ask turn over it.
type ScaleSize struct {
	Chunks    int `json:"chunks"`
	Documents int `json:"documents"`
	Questions int `json:"questions"`
	// Load is seconds per loading stage, in the order they ran; Loaded says whether this run
	// loaded the corpus or found it loaded by an earlier run (whose load times are repeated).
	Load   map[string]float64 `json:"load_s"`
	Loaded bool               `json:"loaded_now"`
	// Disk is bytes on disk: the chunks table, each index of it, and the BM25 index.
	Disk map[string]int64 `json:"disk_bytes"`
	// BM25Segments is how many segments the BM25 index has while the questions run.
	BM25Segments int `json:"bm25_segments"`
	// Memory of ragd (this process) and of the PostgreSQL server (postmaster and backends),
	// after the questions.
	Ragd     *Memory `json:"ragd_memory,omitempty"`
	Postgres *Memory `json:"postgres_memory,omitempty"`
	// Stages are the turn's stage latencies; AllButRerank is the turn's total less reranking
	// (which the scale run leaves off: it costs the same at every corpus size).
	Stages       map[string]LatencySummary `json:"stages"`
	AllButRerank LatencySummary            `json:"all_but_rerank"`
	P50ms        float64                   `json:"all_but_rerank_p50_ms"`
	P95ms        float64                   `json:"all_but_rerank_p95_ms"`
	// VectorRecall is the share of the exact 40 nearest chunks that the HNSW search returned,
	// over a sample of the questions (0 when not measured).
	VectorRecall float64 `json:"vector_recall_at_k,omitempty"`
	// VectorRepeated is the vector search's latency when the same search is repeated at once,
	// over the same sample: its index pages are then in PostgreSQL's shared buffers (warm).
	// The vector stage of the questions is the search as it ran, warm or not.
	VectorRepeated LatencySummary `json:"vector_repeated"`
	// SharedBuffers is PostgreSQL's shared_buffers in bytes: the vector search is warm only
	// while the HNSW index fits there (its size is in Disk).
	SharedBuffers int64 `json:"shared_buffers_bytes"`
	// PrewarmedBlocks is how many pages of the HNSW index --prewarm read into the shared
	// buffers before the questions, in PrewarmS seconds (0 without --prewarm).
	PrewarmedBlocks int64    `json:"prewarmed_blocks,omitempty"`
	PrewarmS        float64  `json:"prewarm_s,omitempty"`
	Order           []string `json:"-"`
}

// WriteJSON writes the report as indented JSON.
func (r *ScaleReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report as aligned text: one column per size.
func (r *ScaleReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "\t"
	for _, s := range r.Sizes {
		head += fmt.Sprintf("%d chunks\t", s.Chunks)
	}
	fmt.Fprintln(tw, head)
	row := func(name string, f func(ScaleSize) string) {
		line := name + "\t"
		for _, s := range r.Sizes {
			line += f(s) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	var loads, stages, disks []string
	for _, s := range r.Sizes {
		for k := range s.Load {
			if !slices.Contains(loads, k) {
				loads = append(loads, k)
			}
		}
		for _, k := range s.Order {
			if !slices.Contains(stages, k) && k != "total" {
				stages = append(stages, k)
			}
		}
		for k := range s.Disk {
			if !slices.Contains(disks, k) {
				disks = append(disks, k)
			}
		}
	}
	slices.Sort(loads)
	slices.Sort(disks)
	for _, k := range loads {
		row("load "+k+" s", func(s ScaleSize) string { return fmt.Sprintf("%.1f", s.Load[k]) })
	}
	for _, k := range disks {
		row("disk "+k+" MB", func(s ScaleSize) string { return fmt.Sprintf("%.0f", float64(s.Disk[k])/(1<<20)) })
	}
	mem := func(m *Memory, pss bool) string {
		switch {
		case m == nil:
			return "-"
		case pss:
			return fmt.Sprintf("%.0f", float64(m.PSS)/(1<<20))
		}
		return fmt.Sprintf("%.0f", float64(m.Peak)/(1<<20))
	}
	row("bm25 segments", func(s ScaleSize) string { return fmt.Sprint(s.BM25Segments) })
	row("ragd peak RSS MB", func(s ScaleSize) string { return mem(s.Ragd, false) })
	row("postgres PSS MB", func(s ScaleSize) string { return mem(s.Postgres, true) })
	for _, k := range stages {
		row(k+" p50/p95 ms", func(s ScaleSize) string {
			l := s.Stages[k]
			return fmt.Sprintf("%.2f / %.2f", millis(l.P50), millis(l.P95))
		})
	}
	row("all but rerank p50/p95 ms", func(s ScaleSize) string { return fmt.Sprintf("%.2f / %.2f", s.P50ms, s.P95ms) })
	row("vector recall@40", func(s ScaleSize) string {
		if s.VectorRecall == 0 {
			return "-"
		}
		return fmt.Sprintf("%.3f", s.VectorRecall)
	})
	row("vector repeated (warm) p50/p95 ms", func(s ScaleSize) string {
		if s.VectorRepeated.P50 == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f / %.2f", millis(s.VectorRepeated.P50), millis(s.VectorRepeated.P95))
	})
	row("postgres shared_buffers MB", func(s ScaleSize) string { return fmt.Sprintf("%.0f", float64(s.SharedBuffers)/(1<<20)) })
	row("prewarmed HNSW pages", func(s ScaleSize) string {
		if s.PrewarmedBlocks == 0 {
			return "-"
		}
		return fmt.Sprintf("%d (%.1f s)", s.PrewarmedBlocks, s.PrewarmS)
	})
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	for _, s := range r.Sizes {
		if hnsw := s.Disk[HNSWIndex]; s.SharedBuffers > 0 && hnsw > s.SharedBuffers {
			fmt.Fprintf(w, "note: at %d chunks the HNSW index (%.0f MB) is larger than PostgreSQL's shared_buffers (%.0f MB): "+
				"searches read index pages from outside PostgreSQL's cache (the OS page cache or disk), so the vector stage of the "+
				"questions is slower than the repeated (warm) search; give shared_buffers more than the index to serve it warm\n",
				s.Chunks, float64(hnsw)/(1<<20), float64(s.SharedBuffers)/(1<<20))
		}
	}
	return nil
}

// HNSWIndex is the chunks' vector index, as the migrations name it.
const HNSWIndex = "chunks_embedding_idx"
