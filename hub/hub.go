// Package hub downloads models from the Hugging Face Hub, or from any server speaking its
// protocol (a mirror, or the fake hub of the tests): the ONNX export, tokenizer and config of a
// repository laid out like sentence-transformers' exports, into a model directory ragd loads.
//
// Downloads resume where they stopped (HTTP Range), and every file is checked before it enters
// the directory: against the sha256 the hub publishes for files stored in Git LFS (the
// X-Linked-Etag header of its resolve URLs, which is the LFS object id), against the Git blob id
// it publishes for small files (the ETag), and against a digest pinned in Model.Pins where ragd
// knows one. All files come from one commit: the first answer fixes it.
//
// go-huggingface's hub package (already in the module graph, through hugot) was considered: it
// fills the Python library's cache layout rather than a model directory, neither resumes nor
// verifies digests, and prints its own progress to stdout.
package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultEndpoint is the Hugging Face Hub.
const DefaultEndpoint = "https://huggingface.co"

// ManifestName is the file Pull writes into the model directory: where each file came from and
// its digest.
const ManifestName = "ragd-model.json"

var (
	// ErrOffline means the hub could not be reached.
	ErrOffline = errors.New("cannot reach the model hub")
	// ErrDigest means a file's content does not match its published or pinned digest.
	ErrDigest = errors.New("digest mismatch")
	// ErrNotFound means the repository, revision or a required file does not exist (or is
	// private, to a caller without a token).
	ErrNotFound = errors.New("not found on the model hub")
)

// File is a file of a model repository.
type File struct {
	Path     string // in the repository, such as "onnx/model.onnx"
	Optional bool   // absent from many repositories: a 404 is not an error
}

// Name is the file's name in the model directory: its base name, so that an ONNX graph finds
// its external data file beside it, as in the repository.
func (f File) Name() string { return path.Base(f.Path) }

// Layout is what ragd loads from a repository laid out like sentence-transformers' ONNX
// exports (package encoder): the graph, its external weights when it has them, the tokenizer
// and the config.
var Layout = []File{
	{Path: "onnx/model.onnx"},
	{Path: "onnx/model.onnx_data", Optional: true},
	{Path: "onnx/model.onnx.data", Optional: true},
	{Path: "tokenizer.json"},
	{Path: "config.json"},
}

// Model is a repository to pull.
type Model struct {
	Repo     string // owner/name, such as sentence-transformers/all-MiniLM-L6-v2
	Revision string // branch, tag or commit; empty means main
	// Pins are sha256 digests (hex) that files must have, by repository path, on top of the
	// digests the hub publishes. A pin fixes the content whatever the revision.
	Pins map[string]string
	// Role says what ragd uses the model for: "embed" or "rerank"; empty when unknown.
	Role string
}

// Known are the models ragd is built for, by short name.
//
// Their Pins are empty: the hub cannot be reached from the machines this was written on, so no
// digest could be read off it, and a digest copied from elsewhere would be unverified. Every
// file is still checked against the digest the hub publishes for it, and Pull records the
// digests and the commit in ManifestName, from where they can be pinned here.
var Known = map[string]Model{
	"all-MiniLM-L6-v2":       {Repo: "sentence-transformers/all-MiniLM-L6-v2", Role: "embed"},
	"ms-marco-MiniLM-L-6-v2": {Repo: "cross-encoder/ms-marco-MiniLM-L-6-v2", Role: "rerank"},
}

// Resolve returns the model a name stands for: a short name from Known, or any repository as
// owner/name, either with an optional @revision.
func Resolve(name string) (Model, error) {
	name, rev, _ := strings.Cut(name, "@")
	if m, ok := Known[name]; ok {
		m.Revision = rev
		return m, nil
	}
	for _, m := range Known {
		if strings.EqualFold(m.Repo, name) {
			m.Revision = rev
			return m, nil
		}
	}
	owner, repo, ok := strings.Cut(name, "/")
	if !ok || !validRepoPart(owner) || !validRepoPart(repo) {
		return Model{}, fmt.Errorf("hub: %q is neither a known model (%s) nor a repository name like owner/name",
			name, strings.Join(slices.Sorted(maps.Keys(Known)), ", "))
	}
	return Model{Repo: name, Revision: rev}, nil
}

func validRepoPart(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 96 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Config configures Pull.
type Config struct {
	// Endpoint is the hub's base URL. Defaults to DefaultEndpoint.
	Endpoint string
	// Token authorizes access to gated and private repositories (Authorization: Bearer). It is
	// sent to the hub only, never to the storage it redirects downloads to.
	Token string
	// Client makes the requests. Defaults to a client with connection and header timeouts.
	Client *http.Client
	// Progress, when set, is told of each download and handed its bytes as they arrive; Pull
	// closes what it returns when the file ends, well or not.
	Progress func(name string, have, size int64) io.WriteCloser
	// Logger receives progress messages. Defaults to slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	c.Endpoint = strings.TrimRight(c.Endpoint, "/")
	if c.Client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = time.Minute
		c.Client = &http.Client{Transport: t}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("hub: endpoint %q is not an http(s) URL", c.Endpoint)
	}
	return nil
}

// Result is what Pull did.
type Result struct {
	Dir    string `json:"-"`
	Repo   string `json:"repo"`
	Commit string `json:"commit"`
	// Endpoint is the hub the files came from.
	Endpoint string       `json:"endpoint"`
	Files    []FileResult `json:"files"`
}

// FileResult describes one file of the model directory.
type FileResult struct {
	Path   string `json:"path"` // in the repository
	Name   string `json:"name"` // in the model directory
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Downloaded is false for a file that was present already, with the right digest.
	Downloaded bool `json:"-"`
}

// remote is what the hub says of a file before it is downloaded.
type remote struct {
	url    string // the resolve URL, at the commit
	commit string
	size   int64
	// digest is the published digest: the LFS sha256, or for small files the Git blob id.
	digest string
	lfs    bool
}

// Pull downloads the files of Layout from m into dir, resuming partial downloads left there
// by an earlier attempt, and writes ManifestName. A file already in dir with the right digest
// is kept. Nothing lands in dir under its final name before its digest is checked.
func Pull(ctx context.Context, cfg Config, m Model, dir string) (*Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if m.Revision == "" {
		m.Revision = "main"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	res := &Result{Dir: dir, Repo: m.Repo, Endpoint: cfg.Endpoint}
	rev := m.Revision
	for _, f := range Layout {
		r, err := cfg.head(ctx, m.Repo, rev, f.Path)
		if errors.Is(err, ErrNotFound) && f.Optional {
			continue
		}
		if err != nil {
			return nil, err
		}
		if res.Commit == "" && r.commit != "" {
			// The rest comes from the same commit, whatever the branch does meanwhile.
			res.Commit, rev = r.commit, r.commit
		}
		fr, err := cfg.fetch(ctx, m, f, r, dir)
		if err != nil {
			return nil, err
		}
		res.Files = append(res.Files, fr)
	}
	if err := writeManifest(dir, res); err != nil {
		return nil, err
	}
	return res, nil
}

// head asks the hub about a file without downloading it. The hub answers a resolve URL of a
// Git LFS file with a redirect to its storage, carrying the LFS digest and size in X-Linked-*
// headers; that redirect is not followed. Relative redirects (a renamed repository) are.
func (c Config) head(ctx context.Context, repo, rev, file string) (*remote, error) {
	u := c.Endpoint + "/" + repo + "/resolve/" + url.PathEscape(rev) + "/" + file
	client := *c.Client
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 || req.URL.Host != via[0].URL.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	c.authorize(req)
	req.Header.Set("Accept-Encoding", "identity") // the size and digest of the file itself
	resp, err := client.Do(req)
	if err != nil {
		return nil, c.offline(err)
	}
	resp.Body.Close()
	if err := c.status(resp, repo, rev, file); err != nil {
		return nil, err
	}
	r := &remote{url: u, commit: resp.Header.Get("X-Repo-Commit")}
	if etag := resp.Header.Get("X-Linked-Etag"); etag != "" {
		r.lfs, r.digest = true, unquoteETag(etag)
		r.size, err = strconv.ParseInt(resp.Header.Get("X-Linked-Size"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("hub: %s: bad X-Linked-Size %q", u, resp.Header.Get("X-Linked-Size"))
		}
	} else {
		r.digest, r.size = unquoteETag(resp.Header.Get("ETag")), resp.ContentLength
		if r.size < 0 {
			return nil, fmt.Errorf("hub: %s: the hub did not say the file's size", u)
		}
	}
	if r.commit != "" {
		r.url = c.Endpoint + "/" + repo + "/resolve/" + r.commit + "/" + file
	}
	if !validDigest(r.digest, r.lfs) {
		return nil, fmt.Errorf("hub: %s: the hub published no usable digest (ETag %q); refusing a file that cannot be checked", u, r.digest)
	}
	return r, nil
}

func validDigest(d string, lfs bool) bool {
	n := sha1.Size * 2
	if lfs {
		n = sha256.Size * 2
	}
	_, err := hex.DecodeString(d)
	return len(d) == n && err == nil
}

// unquoteETag strips the quotes and weak marker of an ETag.
func unquoteETag(s string) string {
	return strings.ToLower(strings.Trim(strings.TrimPrefix(strings.TrimSpace(s), "W/"), `"`))
}

func (c Config) authorize(req *http.Request) {
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
}

// status turns an unsuccessful answer into an error that says what to do.
func (c Config) status(resp *http.Response, repo, rev, file string) error {
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 400:
		return nil
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("hub: %w: %s has no %s at revision %s (is it laid out like sentence-transformers' ONNX exports: onnx/model.onnx, tokenizer.json, config.json?)",
			ErrNotFound, repo, file, rev)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		hint := "set HF_TOKEN to a token that may read it"
		if c.Token != "" {
			hint = "the token given cannot read it"
		}
		return fmt.Errorf("hub: %w: %s answered %s for %s (a gated or private repository, or a wrong name?): %s",
			ErrNotFound, c.Endpoint, resp.Status, repo, hint)
	default:
		return fmt.Errorf("hub: %s answered %s for %s/%s", c.Endpoint, resp.Status, repo, file)
	}
}

// offline wraps a transport error in ErrOffline, unless it is the caller's cancellation.
func (c Config) offline(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("hub: %w", err)
	}
	var netErr net.Error
	var dnsErr *net.DNSError
	if errors.As(err, &netErr) || errors.As(err, &dnsErr) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("hub: %w at %s: %w; check the network, set HF_ENDPOINT (--hub) to a mirror, or copy a model directory (model.onnx, tokenizer.json, config.json) by hand",
			ErrOffline, c.Endpoint, err)
	}
	return fmt.Errorf("hub: %w", err)
}

// fetch makes dir hold the file with the digests r and the pins announce.
func (c Config) fetch(ctx context.Context, m Model, f File, r *remote, dir string) (FileResult, error) {
	pin := strings.ToLower(m.Pins[f.Path])
	if pin != "" && r.lfs && pin != r.digest {
		return FileResult{}, fmt.Errorf("hub: %w: %s %s: the hub publishes sha256 %s, ragd pins %s; refusing it",
			ErrDigest, m.Repo, f.Path, r.digest, pin)
	}
	fr := FileResult{Path: f.Path, Name: f.Name(), Size: r.size}
	final := filepath.Join(dir, f.Name())
	if sum, ok := present(final, r); ok && (pin == "" || pin == sum) {
		fr.SHA256 = sum
		c.Logger.InfoContext(ctx, "hub: already present", "file", final)
		return fr, nil
	}

	part := filepath.Join(dir, "."+f.Name()+"."+r.digest[:16]+".part")
	sums, err := c.download(ctx, r, part, f.Name())
	if err != nil {
		return FileResult{}, err
	}
	published := sums.sha256
	if !r.lfs {
		published = sums.gitSHA1
	}
	var mismatch string
	switch {
	case published != r.digest:
		mismatch = fmt.Sprintf("its digest is %s, the hub publishes %s", published, r.digest)
	case pin != "" && sums.sha256 != pin:
		mismatch = fmt.Sprintf("its sha256 is %s, ragd pins %s", sums.sha256, pin)
	}
	if mismatch != "" {
		// A corrupt partial file must not be resumed: the next pull starts afresh.
		_ = os.Remove(part)
		return FileResult{}, fmt.Errorf("hub: %w: %s %s: %s; the download is corrupt or was altered, and was removed",
			ErrDigest, m.Repo, f.Path, mismatch)
	}
	if err := os.Rename(part, final); err != nil {
		return FileResult{}, fmt.Errorf("hub: %w", err)
	}
	fr.SHA256, fr.Downloaded = sums.sha256, true
	return fr, nil
}

// present reports whether path holds the file r describes, and its sha256.
func present(path string, r *remote) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() != r.size {
		return "", false
	}
	h := newHashes(r.size)
	if _, err := io.Copy(h, f); err != nil {
		return "", false
	}
	s := h.sums()
	if (r.lfs && s.sha256 != r.digest) || (!r.lfs && s.gitSHA1 != r.digest) {
		return "", false
	}
	return s.sha256, true
}

// download fetches r into part, continuing from what part holds already, and returns the
// digests of the whole file.
func (c Config) download(ctx context.Context, r *remote, part, name string) (digests, error) {
	f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return digests{}, fmt.Errorf("hub: %w", err)
	}
	defer f.Close()
	h := newHashes(r.size)
	have, err := io.Copy(h, f) // the digest covers what an earlier attempt fetched
	if err != nil {
		return digests{}, fmt.Errorf("hub: reading %s: %w", part, err)
	}
	switch {
	case have == r.size:
		return h.sums(), nil // an earlier attempt fetched it all: check it
	case have > r.size:
		have = 0 // not a prefix of this file
	}

	resp, err := c.get(ctx, r.url, have)
	if err == nil && resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		resp.Body.Close()
		have = 0
		resp, err = c.get(ctx, r.url, 0)
	}
	if err != nil {
		return digests{}, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0 && contentRangeStart(resp) == have:
		c.Logger.InfoContext(ctx, "hub: resuming a download", "file", name, "from", have, "size", r.size)
	case resp.StatusCode == http.StatusOK:
		// From the start: nothing to resume, or a server that ignores ranges.
		if err := f.Truncate(0); err != nil {
			return digests{}, fmt.Errorf("hub: %w", err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return digests{}, fmt.Errorf("hub: %w", err)
		}
		have, h = 0, newHashes(r.size)
	default:
		return digests{}, fmt.Errorf("hub: %s answered %s", r.url, resp.Status)
	}

	var progress io.Writer = io.Discard
	if c.Progress != nil {
		p := c.Progress(name, have, r.size)
		defer p.Close()
		progress = p
	}
	_, err = io.Copy(io.MultiWriter(f, h, progress), resp.Body)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		if ctx.Err() != nil {
			return digests{}, fmt.Errorf("hub: %w", ctx.Err())
		}
		return digests{}, fmt.Errorf("hub: downloading %s stopped (run the same pull again to resume): %w", name, c.offline(err))
	}
	return h.sums(), nil
}

// get requests u from byte from on.
func (c Config) get(ctx context.Context, u string, from int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	c.authorize(req)                              // the client drops it on a redirect to another host
	req.Header.Set("Accept-Encoding", "identity") // byte ranges of the file itself
	if from > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", from))
	}
	resp, err := c.Client.Do(req)
	if err != nil {
		return nil, c.offline(err)
	}
	return resp, nil
}

// contentRangeStart returns the first byte of a 206 answer, or -1.
func contentRangeStart(resp *http.Response) int64 {
	var start, end, total int64
	if _, err := fmt.Sscanf(resp.Header.Get("Content-Range"), "bytes %d-%d/%d", &start, &end, &total); err != nil {
		return -1
	}
	return start
}

// hashes computes, in one pass, a file's sha256 and its Git blob id (sha1 of "blob <size>\0"
// and the content), which is the hub's ETag for files not stored in LFS.
type hashes struct {
	sha256, git hash.Hash
}

type digests struct{ sha256, gitSHA1 string }

func newHashes(size int64) *hashes {
	h := &hashes{sha256: sha256.New(), git: sha1.New()}
	fmt.Fprintf(h.git, "blob %d\x00", size)
	return h
}

func (h *hashes) Write(p []byte) (int, error) {
	h.sha256.Write(p)
	return h.git.Write(p)
}

func (h *hashes) sums() digests {
	return digests{hex.EncodeToString(h.sha256.Sum(nil)), hex.EncodeToString(h.git.Sum(nil))}
}

// writeManifest records where the directory's files came from.
func writeManifest(dir string, res *Result) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	tmp := filepath.Join(dir, "."+ManifestName+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, ManifestName)); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("hub: %w", err)
	}
	return nil
}
