package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-pdf/fpdf"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/chunk"
	"github.com/ragd/ragd/embed"
	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/internal/modeltest"
	"github.com/ragd/ragd/store"
)

type testBundle struct {
	ctx   context.Context
	store *store.Store
	in    *ingest.Ingester
}

func setup(t *testing.T, emb ingest.Embedder) *testBundle {
	t.Helper()
	st := store.New(dbtest.TestTx(t))
	// The test's web pages are served on loopback, which ingest refuses unless allowed.
	in, err := ingest.New(ingest.Config{Chunk: chunk.Options{MaxTokens: 128}, BatchDocs: 2, MaxBytes: 1 << 20,
		Fetch: ingest.FetchConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}, st, emb)
	require.NoError(t, err)
	return &testBundle{ctx: context.Background(), store: st, in: in}
}

// run ingests paths and returns the stats and the results by source name.
func (b *testBundle) run(t *testing.T, paths ...string) (ingest.Stats, map[string]ingest.Result) {
	t.Helper()
	results := map[string]ingest.Result{}
	st, err := b.in.Ingest(b.ctx, b.in.Walk(b.ctx, paths), func(r ingest.Result) {
		results[r.Name] = r
	})
	require.NoError(t, err)
	return st, results
}

// copyCorpus copies testdata/corpus into a temporary directory the test may change.
func copyCorpus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir("../testdata/corpus")
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("../testdata/corpus", e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	return dir
}

func TestIngestDirectoryAndVersions(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	dir := copyCorpus(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".hidden.md"), []byte("# skipped"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "image.png"), []byte("\x89PNG"), 0o644))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes"), []byte("plain words, no extension"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	for _, name := range []string{"a.csv", "b.docx", "c.bin"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", name), []byte("x"), 0o644))
	}

	st, res := b.run(t, dir)
	require.Equal(t, 5, st.Documents, "hidden files and unsupported extensions are not picked up by a walk")
	require.Equal(t, 5, st.Created)
	require.Zero(t, st.Failed, "a file a walk does not read is no failure")
	require.Positive(t, st.Chunks)
	require.Equal(t, 5, st.Skipped, "but it is counted (hidden files are not)")
	require.Equal(t, []string{filepath.Join(dir, "image.png"), filepath.Join(dir, "notes"), filepath.Join(dir, "sub", "a.csv")},
		st.SkippedNames, "the first few are named, in walk order")

	quake := res[filepath.Join(dir, "earthquakes.md")]
	doc, err := b.store.Document(b.ctx, uuid.MustParse(quake.DocID))
	require.NoError(t, err)
	require.Equal(t, "Earthquake Safety", doc.Title)
	require.Equal(t, "markdown", doc.Format)
	require.True(t, strings.HasPrefix(doc.SourceKey, "file:/"), doc.SourceKey)
	vs, err := b.store.Versions(b.ctx, doc.ID)
	require.NoError(t, err)
	require.NotNil(t, vs[0].PublishedAt, "front matter date is kept")
	require.Equal(t, "2025-03-14", vs[0].PublishedAt.Format("2006-01-02"))

	v1, err := b.store.VersionChunks(b.ctx, doc.ID, 1)
	require.NoError(t, err)
	var headings []string
	for _, c := range v1 {
		headings = append(headings, c.Heading)
		require.LessOrEqual(t, c.Tokens, 128)
		require.Zero(t, c.PageStart, "markdown has no pages")
	}
	require.Contains(t, headings, "Earthquake Safety > During the shaking")

	// Unchanged content: a no-op that writes nothing.
	seq, err := b.store.MaxSeq(b.ctx)
	require.NoError(t, err)
	st, _ = b.run(t, dir)
	require.Equal(t, 5, st.Unchanged)
	require.Zero(t, st.Chunks)
	after, err := b.store.MaxSeq(b.ctx)
	require.NoError(t, err)
	require.Equal(t, seq, after)

	// Changed content: version 2 replaces version 1 in search; version 1 stays readable.
	path := filepath.Join(dir, "earthquakes.md")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(raw, []byte("\n## Tsunamis\n\nIf you are near the coast, move inland after strong shaking.\n")...), 0o644))
	st, res = b.run(t, dir)
	require.Equal(t, 1, st.Updated)
	require.Equal(t, 4, st.Unchanged)
	require.Equal(t, 2, res[path].Version)
	require.Equal(t, quake.DocID, res[path].DocID, "same document, new version")

	old, err := b.store.VersionChunks(b.ctx, doc.ID, 1)
	require.NoError(t, err)
	require.Equal(t, v1[0].Text, old[0].Text)
	require.False(t, old[0].Active)
	cur, err := b.store.VersionChunks(b.ctx, doc.ID, 2)
	require.NoError(t, err)
	require.True(t, cur[0].Active)
	require.Contains(t, cur[len(cur)-1].Text, "move inland")
}

func TestIngestRefusesBadInputs(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	good := write("good.md", []byte("# Good\n\nA fine document."))
	cases := map[string]struct {
		path string
		want string
	}{
		"missing file": {filepath.Join(dir, "missing.md"), "no such file"},
		"broken link": {func() string {
			p := filepath.Join(dir, "link.md")
			require.NoError(t, os.Symlink("nowhere", p))
			return p
		}(), "no such file"},
		"empty":         {write("empty.txt", []byte(" \n\t\n ")), "no text"},
		"invalid UTF-8": {write("latin1.txt", []byte("caf\xe9 au lait")), "invalid UTF-8"},
		"unknown":       {write("data.bin", []byte{0, 1, 2, 3}), "unknown format"},
		"corrupt PDF":   {write("broken.pdf", []byte("%PDF-1.4 garbage")), "pdf"},
		"too large":     {write("big.txt", bytes.Repeat([]byte("a "), 1<<20)), "limit"},
	}
	paths := []string{good}
	for _, c := range cases {
		paths = append(paths, c.path)
	}
	st, res := b.run(t, paths...)
	require.Equal(t, 1, st.Created)
	require.Equal(t, len(cases), st.Failed)
	for name, c := range cases {
		r, ok := res[c.path]
		require.True(t, ok, name)
		require.ErrorIs(t, r.Err, ragd.ErrInvalid, name)
		require.ErrorContains(t, r.Err, c.want, name)
	}
	n, err := b.store.CountDocuments(b.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the good document is stored")
}

func TestIngestCorpusRecords(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	path := filepath.Join(t.TempDir(), "tiny.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join([]string{
		`{"_id": "d1", "title": "Alpha", "text": "First record about alpha particles."}`,
		`{"_id": "d2", "title": "Beta", "text": "Second record about beta decay.", "metadata": {"url": "https://Example.com/beta?utm_source=x"}}`,
		`not json`,
		``,
		`{"title": "no id", "text": "x"}`,
		`{"_id": "d3", "title": "Gamma", "text": "Third record about gamma rays."}`,
		// A repeated _id replaced d1 as its version 2, without a word.
		`{"_id": "d1", "title": "Alpha again", "text": "Another record under the first one's id."}`,
	}, "\n")), 0o644))
	st, res := b.run(t, path)
	require.Equal(t, 3, st.Created)
	require.Zero(t, st.Updated)
	require.Equal(t, 3, st.Failed)
	require.ErrorContains(t, res[path+":3"].Err, "json")
	require.ErrorContains(t, res[path+":5"].Err, "_id")
	require.ErrorContains(t, res[path+":7"].Err, `_id: "d1" is line 1's already`)
	first, err := b.store.DocumentBySource(b.ctx, "corpus:tiny/d1")
	require.NoError(t, err)
	require.Equal(t, "Alpha", first.Title)
	require.Equal(t, 1, first.Version)

	d, err := b.store.DocumentBySource(b.ctx, "corpus:tiny/d2")
	require.NoError(t, err)
	require.Equal(t, "Beta", d.Title)
	require.Equal(t, "https://example.com/beta", d.URL)
	require.Equal(t, "jsonl-record", d.Format)
	require.Equal(t, "scifact", ingest.CorpusName("/data/scifact/corpus.jsonl"))
}

func TestIngestURLsByCanonicalAddress(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/guide", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Guide</title></head><body><article><h1>Guide</h1><p>Keep a go-bag by the door with water, a torch and copies of your documents.</p></article></body></html>`)
	})
	mux.Handle("/old-guide", http.RedirectHandler("/guide?utm_campaign=spring", http.StatusMovedPermanently))
	mux.HandleFunc("/gone", http.NotFound)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	st, res := b.run(t, srv.URL+"/guide?utm_source=newsletter#top")
	require.Equal(t, 1, st.Created)
	key := srv.URL + "/guide"
	d, err := b.store.DocumentBySource(b.ctx, key)
	require.NoError(t, err)
	require.Equal(t, key, d.URL)

	// The same page through a redirect with other tracking parameters is the same document.
	st, res = b.run(t, srv.URL+"/old-guide", srv.URL+"/gone")
	require.Equal(t, 1, st.Unchanged)
	require.Equal(t, d.ID.String(), res[key].DocID)
	require.ErrorContains(t, res[srv.URL+"/gone"].Err, "404")
}

func TestIngestUploadIsContentAddressed(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	src := ingest.Source{Name: "notes.md", Data: []byte("# Notes\n\nBring spare glasses and medication.")}
	first, err := b.in.IngestOne(b.ctx, src)
	require.NoError(t, err)
	require.Equal(t, ragd.Created, first.Status)
	second, err := b.in.IngestOne(b.ctx, src)
	require.NoError(t, err)
	require.Equal(t, ragd.Unchanged, second.Status)
	require.Equal(t, first.DocID, second.DocID)

	_, err = b.in.IngestOne(b.ctx, ingest.Source{Name: "empty.md", Data: []byte("\n\n")})
	require.ErrorIs(t, err, ragd.ErrInvalid)
}

// A PDF made for the test: three pages, each with its own text, long enough that chunks of
// 128 tokens must cross pages.
func writePDF(t *testing.T, path string) {
	t.Helper()
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetFont("Helvetica", "", 11)
	for page, topic := range []string{"evacuation routes", "water storage", "radio batteries"} {
		pdf.AddPage()
		for i := range 6 {
			pdf.MultiCell(0, 5, fmt.Sprintf("Page %d paragraph %d explains %s for households in plain words so that everyone can follow the plan.", page+1, i+1, topic), "", "", false)
			pdf.Ln(4)
		}
	}
	require.NoError(t, pdf.OutputFileAndClose(path))
}

func TestIngestPDFPageRanges(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	path := filepath.Join(t.TempDir(), "plan.pdf")
	writePDF(t, path)
	st, res := b.run(t, path)
	require.Equal(t, 1, st.Created, "%v", res)
	cs, err := b.store.VersionChunks(b.ctx, uuid.MustParse(res[path].DocID), 1)
	require.NoError(t, err)
	require.Greater(t, len(cs), 1)
	covered := map[int]bool{}
	for _, c := range cs {
		require.GreaterOrEqual(t, c.PageStart, 1)
		require.GreaterOrEqual(t, c.PageEnd, c.PageStart)
		require.LessOrEqual(t, c.PageEnd, 3)
		for p := c.PageStart; p <= c.PageEnd; p++ {
			covered[p] = true
		}
		if strings.Contains(c.Text, "water storage") && !strings.Contains(c.Text, "evacuation") && !strings.Contains(c.Text, "radio") {
			require.Equal(t, [2]int{2, 2}, [2]int{c.PageStart, c.PageEnd}, "a chunk of page 2 only says page 2")
		}
	}
	require.Equal(t, map[int]bool{1: true, 2: true, 3: true}, covered)
	require.Equal(t, 1, cs[0].PageStart)
	require.Equal(t, 3, cs[len(cs)-1].PageEnd)
}

type failingEmbedder struct{}

func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("model crashed")
}

func TestIngestWithEmbeddings(t *testing.T) {
	t.Parallel()
	emb, err := embed.Open(encoder.Config{Dir: modeltest.Dir(t, modeltest.Embedding), Runtime: encoder.ORT, ORTLibrary: modeltest.ORTLibrary()})
	require.NoError(t, err)
	defer emb.Close()
	b := setup(t, emb)
	st, _ := b.run(t, "../testdata/corpus/first-aid.md")
	require.Equal(t, 1, st.Created)
	require.Positive(t, st.Embed)

	missing, err := b.store.ChunksWithoutEmbedding(b.ctx, 10)
	require.NoError(t, err)
	require.Empty(t, missing, "every chunk got a vector")
	q, err := emb.Embed(b.ctx, []string{"First Aid Basics\nFirst Aid Basics > Burns\nCool a burn"})
	require.NoError(t, err)
	hits, err := b.store.SearchVector(b.ctx, q[0], 3, nil)
	require.NoError(t, err)
	require.NotEmpty(t, hits)

	// An embedding failure stops the run and writes nothing of the batch.
	failing := setup(t, failingEmbedder{})
	_, err = failing.in.Ingest(failing.ctx, ingest.Walk(failing.ctx, []string{"../testdata/corpus"}, nil, 1<<20), nil)
	require.ErrorContains(t, err, "model crashed")
	n, err := failing.store.CountDocuments(failing.ctx)
	require.NoError(t, err)
	require.Zero(t, n)
}
