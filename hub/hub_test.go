package hub

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeHub answers like the Hugging Face Hub: resolve URLs of Git LFS files redirect to a
// storage server on another host with the LFS sha256 in X-Linked-Etag; small files are served
// directly with their Git blob id as ETag. The storage server honours byte ranges and can be
// told to corrupt or cut a file.
type fakeHub struct {
	hub, cdn *httptest.Server
	repo     string
	commit   string
	files    map[string][]byte // repository path -> content
	lfs      map[string]bool

	mu       sync.Mutex
	corrupt  map[string]bool  // repository path -> serve altered bytes
	cutAfter map[string]int   // repository path -> abort the next download after this many bytes
	requests []string         // "METHOD host path [Range]"
	auth     map[string][]int // "hub" or "cdn" -> requests with and without Authorization
}

func newFakeHub(t *testing.T) *fakeHub {
	t.Helper()
	model := bytes.Repeat([]byte("onnx graph and weights "), 40_000) // ~900 kB
	h := &fakeHub{
		repo:   "sentence-transformers/all-MiniLM-L6-v2",
		commit: "0123456789abcdef0123456789abcdef01234567",
		files: map[string][]byte{
			"onnx/model.onnx": model,
			"tokenizer.json":  []byte(`{"version":"1.0","model":{"type":"WordPiece"}}`),
			"config.json":     []byte(`{"architectures":["BertModel"],"hidden_size":384,"max_position_embeddings":512}`),
		},
		lfs:      map[string]bool{"onnx/model.onnx": true},
		corrupt:  map[string]bool{},
		cutAfter: map[string]int{},
		auth:     map[string][]int{"hub": {0, 0}, "cdn": {0, 0}},
	}
	h.cdn = httptest.NewServer(http.HandlerFunc(h.serveCDN))
	t.Cleanup(h.cdn.Close)
	h.hub = httptest.NewServer(http.HandlerFunc(h.serveHub))
	t.Cleanup(h.hub.Close)
	return h
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func gitBlobID(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func (h *fakeHub) record(server string, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	line := r.Method + " " + server + " " + r.URL.Path
	if rg := r.Header.Get("Range"); rg != "" {
		line += " " + rg
	}
	h.requests = append(h.requests, line)
	if r.Header.Get("Authorization") != "" {
		h.auth[server][0]++
	} else {
		h.auth[server][1]++
	}
}

func (h *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	h.record("hub", r)
	prefix := "/" + h.repo + "/resolve/"
	rest, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok {
		http.Error(w, "Repository not found", http.StatusNotFound)
		return
	}
	rev, file, _ := strings.Cut(rest, "/")
	content, ok := h.files[file]
	if (rev != "main" && rev != h.commit) || !ok {
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	w.Header().Set("X-Repo-Commit", h.commit)
	if h.lfs[file] {
		sum := sha256Hex(content)
		w.Header().Set("X-Linked-Etag", `"`+sum+`"`)
		w.Header().Set("X-Linked-Size", fmt.Sprint(len(content)))
		// Storage on another host name, as the hub's CDN is.
		cdn := strings.Replace(h.cdn.URL, "127.0.0.1", "localhost", 1)
		http.Redirect(w, r, cdn+"/lfs/"+file+"?sig=x", http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+gitBlobID(content)+`"`)
	http.ServeContent(w, r, file, time.Time{}, bytes.NewReader(content))
}

func (h *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	h.record("cdn", r)
	file := strings.TrimPrefix(r.URL.Path, "/lfs/")
	content := h.files[file]
	h.mu.Lock()
	if h.corrupt[file] {
		content = bytes.Clone(content)
		content[len(content)/2] ^= 0xff
	}
	cut, cutting := h.cutAfter[file]
	delete(h.cutAfter, file)
	h.mu.Unlock()
	if cutting {
		// The connection drops mid-file.
		w.Header().Set("Content-Length", fmt.Sprint(len(content)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(content[:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	http.ServeContent(w, r, file, time.Time{}, bytes.NewReader(content))
}

func (h *fakeHub) cdnRequests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.requests {
		if strings.HasPrefix(r, "GET cdn") {
			out = append(out, r)
		}
	}
	return out
}

func (h *fakeHub) config(t *testing.T) Config {
	return Config{Endpoint: h.hub.URL, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
}

func requireModelDir(t *testing.T, h *fakeHub, dir string) {
	t.Helper()
	for path, content := range h.files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.Base(path)))
		require.NoError(t, err)
		require.True(t, bytes.Equal(content, got), "%s differs", path)
	}
	leftovers, err := filepath.Glob(filepath.Join(dir, ".*"))
	require.NoError(t, err)
	require.Empty(t, leftovers, "no partial or temporary files remain")
}

func TestPull(t *testing.T) {
	h := newFakeHub(t)
	dir := filepath.Join(t.TempDir(), "all-MiniLM-L6-v2")
	cfg := h.config(t)
	cfg.Token = "hf_secret"
	var progressed int64
	cfg.Progress = func(name string, have, size int64) io.WriteCloser {
		return &countingWriter{n: &progressed}
	}
	m, err := Resolve("all-MiniLM-L6-v2")
	require.NoError(t, err)

	res, err := Pull(t.Context(), cfg, m, dir)
	require.NoError(t, err)
	requireModelDir(t, h, dir)
	require.Equal(t, h.commit, res.Commit)
	require.Len(t, res.Files, 3, "the optional external-data files are absent from this repository")
	total := 0
	for _, f := range res.Files {
		require.True(t, f.Downloaded)
		require.Equal(t, sha256Hex(h.files[f.Path]), f.SHA256)
		total += len(h.files[f.Path])
	}
	require.EqualValues(t, total, progressed, "progress saw every byte")

	// The manifest says where each file came from.
	var manifest Result
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &manifest))
	require.Equal(t, h.commit, manifest.Commit)
	require.Equal(t, h.repo, manifest.Repo)
	require.Equal(t, sha256Hex(h.files["onnx/model.onnx"]), manifest.Files[0].SHA256)

	// After the first answer, every request names the commit, not the branch.
	for _, r := range h.requests[1:] {
		if strings.HasPrefix(r, "HEAD hub") {
			require.Contains(t, r, "/resolve/"+h.commit+"/")
		}
	}
	// The token went to the hub only, never to the storage it redirects to.
	require.Positive(t, h.auth["hub"][0])
	require.Zero(t, h.auth["hub"][1])
	require.Zero(t, h.auth["cdn"][0])

	// Pulling again downloads nothing: the files are there with the right digests.
	before := len(h.cdnRequests())
	res, err = Pull(t.Context(), cfg, m, dir)
	require.NoError(t, err)
	for _, f := range res.Files {
		require.False(t, f.Downloaded, f.Path)
	}
	require.Len(t, h.cdnRequests(), before)
}

type countingWriter struct{ n *int64 }

func (w *countingWriter) Write(p []byte) (int, error) { *w.n += int64(len(p)); return len(p), nil }
func (w *countingWriter) Close() error                { return nil }

// A file whose bytes do not match the digest the hub publishes is refused and removed, and the
// next pull fetches it afresh.
func TestPullRefusesCorruptFile(t *testing.T) {
	h := newFakeHub(t)
	dir := t.TempDir()
	m := Model{Repo: h.repo}
	h.corrupt["onnx/model.onnx"] = true

	_, err := Pull(t.Context(), h.config(t), m, dir)
	require.ErrorIs(t, err, ErrDigest)
	require.ErrorContains(t, err, "the hub publishes "+sha256Hex(h.files["onnx/model.onnx"]))
	t.Log(err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing unverified is left in the directory")

	h.corrupt["onnx/model.onnx"] = false
	_, err = Pull(t.Context(), h.config(t), m, dir)
	require.NoError(t, err)
	requireModelDir(t, h, dir)
	require.NotContains(t, strings.Join(h.cdnRequests(), "\n"), "bytes=", "a refused download is not resumed")
}

// A small file is checked against its Git blob id.
func TestPullRefusesCorruptSmallFile(t *testing.T) {
	h := newFakeHub(t)
	dir := t.TempDir()
	good := h.files["config.json"]
	// The hub announces the blob id of the good file but serves other bytes of the same size.
	h.hub.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/config.json") && r.Method == http.MethodGet {
			w.Header().Set("ETag", `"`+gitBlobID(good)+`"`)
			w.Header().Set("X-Repo-Commit", h.commit)
			_, _ = w.Write(bytes.ToUpper(good))
			return
		}
		h.serveHub(w, r)
	})
	_, err := Pull(t.Context(), h.config(t), Model{Repo: h.repo}, dir)
	require.ErrorIs(t, err, ErrDigest)
	require.NoFileExists(t, filepath.Join(dir, "config.json"))
}

// A download cut off midway resumes from where it stopped with a Range request.
func TestPullResumes(t *testing.T) {
	h := newFakeHub(t)
	dir := t.TempDir()
	m := Model{Repo: h.repo}
	size := len(h.files["onnx/model.onnx"])
	h.cutAfter["onnx/model.onnx"] = size / 3

	_, err := Pull(t.Context(), h.config(t), m, dir)
	require.ErrorIs(t, err, ErrOffline)
	require.ErrorContains(t, err, "run the same pull again to resume")
	parts, err := filepath.Glob(filepath.Join(dir, ".model.onnx.*.part"))
	require.NoError(t, err)
	require.Len(t, parts, 1)
	fi, err := os.Stat(parts[0])
	require.NoError(t, err)
	have := fi.Size()
	require.Positive(t, have)
	require.Less(t, have, int64(size))

	_, err = Pull(t.Context(), h.config(t), m, dir)
	require.NoError(t, err)
	requireModelDir(t, h, dir)
	gets := h.cdnRequests()
	require.Len(t, gets, 2)
	require.True(t, strings.HasSuffix(gets[1], fmt.Sprintf(" bytes=%d-", have)), gets[1])
}

// A pinned digest the hub does not publish is refused before anything is downloaded.
func TestPullPinned(t *testing.T) {
	h := newFakeHub(t)
	m := Model{Repo: h.repo, Pins: map[string]string{"onnx/model.onnx": strings.Repeat("ab", 32)}}
	_, err := Pull(t.Context(), h.config(t), m, t.TempDir())
	require.ErrorIs(t, err, ErrDigest)
	require.ErrorContains(t, err, "ragd pins "+strings.Repeat("ab", 32))
	require.Empty(t, h.cdnRequests())

	m.Pins = map[string]string{"onnx/model.onnx": sha256Hex(h.files["onnx/model.onnx"]),
		"config.json": sha256Hex(h.files["config.json"])}
	dir := t.TempDir()
	_, err = Pull(t.Context(), h.config(t), m, dir)
	require.NoError(t, err)
	requireModelDir(t, h, dir)

	// A pin on a small file is checked against its bytes.
	m.Pins = map[string]string{"config.json": strings.Repeat("cd", 32)}
	_, err = Pull(t.Context(), h.config(t), m, t.TempDir())
	require.ErrorIs(t, err, ErrDigest)
}

func TestPullErrors(t *testing.T) {
	h := newFakeHub(t)

	_, err := Pull(t.Context(), h.config(t), Model{Repo: "someone/missing"}, t.TempDir())
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, "someone/missing has no onnx/model.onnx")

	_, err = Pull(t.Context(), h.config(t), Model{Repo: h.repo, Revision: "v9"}, t.TempDir())
	require.ErrorIs(t, err, ErrNotFound)

	// Offline: nothing listens at the endpoint.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	endpoint := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = Pull(t.Context(), Config{Endpoint: endpoint}, Model{Repo: h.repo}, t.TempDir())
	require.ErrorIs(t, err, ErrOffline)
	require.ErrorContains(t, err, "cannot reach the model hub at "+endpoint)
	require.ErrorContains(t, err, "HF_ENDPOINT")

	_, err = Pull(t.Context(), Config{Endpoint: "ftp://example.com"}, Model{Repo: h.repo}, t.TempDir())
	require.ErrorContains(t, err, "not an http(s) URL")
}

func TestResolve(t *testing.T) {
	for name, want := range map[string]Model{
		"all-MiniLM-L6-v2":                             {Repo: "sentence-transformers/all-MiniLM-L6-v2", Role: "embed"},
		"ms-marco-MiniLM-L-6-v2@abc":                   {Repo: "cross-encoder/ms-marco-MiniLM-L-6-v2", Role: "rerank", Revision: "abc"},
		"cross-encoder/ms-marco-MiniLM-L-6-v2":         {Repo: "cross-encoder/ms-marco-MiniLM-L-6-v2", Role: "rerank"},
		"BAAI/bge-small-en-v1.5@main":                  {Repo: "BAAI/bge-small-en-v1.5", Revision: "main"},
		"sentence-transformers/all-mpnet-base-v2@v1.0": {Repo: "sentence-transformers/all-mpnet-base-v2", Revision: "v1.0"},
	} {
		got, err := Resolve(name)
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
	}
	for _, bad := range []string{"minilm", "a/b/c", "../x", "owner/", "a b/c"} {
		_, err := Resolve(bad)
		require.ErrorContains(t, err, "neither a known model", bad)
	}
}
