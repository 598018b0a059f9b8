package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/extract"
)

// Source is one document before extraction: bytes with what is known about them, or a record
// that is already text.
type Source struct {
	// Key is the document's identity across re-ingests. Empty means content-addressed: the
	// sha256 of Data, so the same upload twice is one document.
	Key string
	// Name is a file name or address, used to detect the format and in messages.
	Name        string
	ContentType string
	Data        []byte
	URL         string // canonical address, for web sources and records that carry one
	Path        string // absolute path, for local files; an upload's file name
	Title       string // when set, replaces the title extraction finds
	// Doc, when set, is the already extracted text of a corpus record; Data is then unused.
	Doc *extract.Doc
}

// corpusExt marks JSONL corpora: each line a document {"_id", "title", "text"}, as in BEIR and
// MTRAG.
const corpusExt = ".jsonl"

// walkExts are the files a directory walk picks up; a file named on the command line is tried
// whatever its extension, so an unknown format gets a clear error instead of being skipped.
var walkExts = map[string]bool{".md": true, ".markdown": true, ".txt": true, ".text": true,
	".html": true, ".htm": true, ".pdf": true, corpusExt: true}

// Extensions lists the extensions a directory walk reads, sorted.
func Extensions() []string { return slices.Sorted(maps.Keys(walkExts)) }

// ErrSkipped is what a directory walk yields for a file whose extension is not among walkExts:
// not read, and no failure (named alone, the file is tried), but the caller can say what it left.
var ErrSkipped = errors.New("skipped: not a format a directory walk reads")

// Walk yields the sources found at each path: a file, every supported file under a directory
// (hidden entries skipped; other files yield ErrSkipped), the records of a JSONL corpus, or an
// http(s) address fetched with client. A path that cannot be read yields an error for that path
// and the walk goes on.
func Walk(ctx context.Context, paths []string, client *http.Client, maxBytes int64) iter.Seq2[Source, error] {
	return func(yield func(Source, error) bool) {
		for _, p := range paths {
			if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
				src, err := Fetch(ctx, client, p, maxBytes)
				if !yield(src, err) {
					return
				}
				continue
			}
			if !walkPath(p, maxBytes, yield) {
				return
			}
		}
	}
}

func walkPath(root string, maxBytes int64, yield func(Source, error) bool) bool {
	fi, err := os.Stat(root)
	if err != nil {
		return yield(Source{Name: root}, fmt.Errorf("%w: %w", ragd.ErrInvalid, err))
	}
	if !fi.IsDir() {
		return yieldFile(root, maxBytes, yield)
	}
	cont := true
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			cont = yield(Source{Name: p}, fmt.Errorf("%w: %w", ragd.ErrInvalid, err))
			return nil
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !walkExts[strings.ToLower(filepath.Ext(p))] {
			cont = yield(Source{Name: p}, ErrSkipped)
		} else {
			cont = yieldFile(p, maxBytes, yield)
		}
		if !cont {
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil && cont {
		return yield(Source{Name: root}, err)
	}
	return cont
}

func yieldFile(path string, maxBytes int64, yield func(Source, error) bool) bool {
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return yield(Source{Name: path}, fmt.Errorf("%w: %w", ragd.ErrInvalid, err))
	}
	if strings.EqualFold(filepath.Ext(abs), corpusExt) {
		return readCorpus(abs, yield)
	}
	data, err := readFile(abs, maxBytes)
	if err != nil {
		return yield(Source{Name: path}, err)
	}
	return yield(Source{Key: "file:" + abs, Name: path, Data: data, Path: abs}, nil)
}

func readFile(path string, maxBytes int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ragd.ErrInvalid, err)
	}
	defer f.Close()
	return readLimited(f, maxBytes)
}

// readLimited reads all of r, refusing more than max bytes rather than truncating silently.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	if int64(len(data)) > max {
		return nil, ragd.Invalidf("size", "larger than the %d-byte limit", max)
	}
	return data, nil
}

// CorpusName names the records of a JSONL corpus: the directory for BEIR's corpus.jsonl
// (".../scifact/corpus.jsonl" is "scifact"), else the file's name without extension.
func CorpusName(path string) string {
	base := filepath.Base(path)
	if strings.EqualFold(base, "corpus"+corpusExt) {
		return filepath.Base(filepath.Dir(path))
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// corpusRecord is one line of a JSONL corpus. url and date are read when a corpus has them.
type corpusRecord struct {
	ID       string         `json:"_id"`
	Title    string         `json:"title"`
	Text     string         `json:"text"`
	URL      string         `json:"url"`
	Metadata map[string]any `json:"metadata"`
}

// readCorpus yields one source per line of a JSONL corpus, keyed "corpus:<name>/<_id>". A bad
// line is an error for that record only; so is an _id an earlier line has, which would
// otherwise replace that record (as its next version) without a word.
func readCorpus(path string, yield func(Source, error) bool) bool {
	f, err := os.Open(path)
	if err != nil {
		return yield(Source{Name: path}, fmt.Errorf("%w: %w", ragd.ErrInvalid, err))
	}
	defer f.Close()
	name := CorpusName(path)
	seen := map[string]int{} // line of each _id
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		where := fmt.Sprintf("%s:%d", path, n)
		var r corpusRecord
		if err := json.Unmarshal(line, &r); err != nil {
			if !yield(Source{Name: where}, ragd.Invalidf("json", "%v", err)) {
				return false
			}
			continue
		}
		if r.ID == "" {
			if !yield(Source{Name: where}, ragd.Invalidf("_id", "missing")) {
				return false
			}
			continue
		}
		if first, ok := seen[r.ID]; ok {
			if !yield(Source{Name: where}, ragd.Invalidf("_id", "%q is line %d's already: one record per _id", r.ID, first)) {
				return false
			}
			continue
		}
		seen[r.ID] = n
		if !yield(recordSource(name, where, r)) {
			return false
		}
	}
	if err := sc.Err(); err != nil {
		return yield(Source{Name: path}, fmt.Errorf("reading %s: %w", path, err))
	}
	return true
}

func recordSource(corpus, where string, r corpusRecord) (Source, error) {
	doc, err := extract.Extract(context.Background(), extract.Text, []byte(r.Text), "")
	if err != nil {
		return Source{Name: where}, err
	}
	doc.Title = strings.TrimSpace(r.Title)
	src := Source{Key: "corpus:" + corpus + "/" + r.ID, Name: where, Doc: doc}
	if u, ok := r.Metadata["url"].(string); ok && r.URL == "" {
		r.URL = u
	}
	if r.URL != "" {
		if c, err := CanonicalURL(r.URL); err == nil {
			src.URL = c
		}
	}
	return src, nil
}

// Count estimates how many sources Walk will yield for paths, for a progress bar: files a walk
// picks up, lines of JSONL corpora, one per address. It reads no file but corpora.
func Count(paths []string) int {
	n := 0
	for _, p := range paths {
		if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
			n++
			continue
		}
		_ = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				n++ // reported as one failure
			case path != p && strings.HasPrefix(d.Name(), "."):
				if d.IsDir() {
					return filepath.SkipDir
				}
			case d.IsDir():
			case strings.EqualFold(filepath.Ext(path), corpusExt):
				n += countLines(path)
			case path == p || walkExts[strings.ToLower(filepath.Ext(path))]:
				n++
			}
			return nil
		})
	}
	return n
}

func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 1
	}
	defer f.Close()
	n := 0
	buf := make([]byte, 1<<20)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err != nil {
			return n
		}
	}
}
