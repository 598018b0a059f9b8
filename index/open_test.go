package index_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/index"
)

// openFiles returns the tenants whose index has a file open in this process, and how many
// files under dir are open at all (the layout file included), from /proc/self/fd: what the bound
// on open indexes is for.
func openFiles(t testing.TB, dir string) (map[string]bool, int) {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	tenants, files := map[string]bool{}, 0
	prefix := filepath.Join(dir, "tenants") + string(filepath.Separator)
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil || !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			continue // closed meanwhile, or not the index's
		}
		files++
		if rest, ok := strings.CutPrefix(target, prefix); ok {
			tenants[strings.SplitN(rest, string(filepath.Separator), 2)[0]] = true
		}
	}
	return tenants, files
}

// tenantsWithChunks makes n tenants, each with one document whose chunk has the tenant's own
// word ("word0", "word1", ...) and a word they all share, and returns their contexts.
func tenantsWithChunks(t testing.TB, b *testBundle, n int) []context.Context {
	t.Helper()
	ctxs := make([]context.Context, n)
	for i := range n {
		tenant, err := b.store.EnsureTenant(b.ctx, fmt.Sprintf("t%d", i))
		require.NoError(t, err)
		b.saveAs(t, tenant, ragd.NewVersion{SourceKey: "doc", Format: "text", Title: "Doc", ContentHash: "1",
			Chunks: []ragd.Chunk{{Text: fmt.Sprintf("word%d shared", i)}}})
		ctxs[i] = ragd.WithPrincipal(b.ctx, ragd.Principal{Tenant: tenant})
	}
	return ctxs
}

// More tenants than the bound keep working (each finds its own chunks, updates reach indexes
// that were closed, whole-index counts see every tenant) and leave at most the bound open,
// counted as open files once the evicted ones' closes (in the background) are done; closing the
// index closes every file. With no bound every tenant's
// index stays open, so the count can fail.
func TestOpenTenantIndexesAreBounded(t *testing.T) {
	t.Parallel()
	const tenants, bound = 6, 2
	b := setup(t)
	ctxs := tenantsWithChunks(t, b, tenants)
	ix, err := index.OpenWith(b.dir, nil, index.Options{MaxOpen: bound})
	require.NoError(t, err)
	defer ix.Close()
	_, err = ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	atMostBound := func(when string) {
		t.Helper()
		require.LessOrEqual(t, ix.OpenTenants(), bound, when)
		ix.Settle() // an evicted index's files close in the background
		open, _ := openFiles(t, b.dir)
		require.LessOrEqual(t, len(open), bound, "tenants with open index files %s", when)
	}
	atMostBound("after the catch-up made every tenant's index")

	for round := range 2 {
		for i, ctx := range ctxs {
			hits, err := ix.Search(ctx, fmt.Sprintf("word%d shared", i), 10)
			require.NoError(t, err)
			require.Len(t, hits, 1, "tenant %d finds its own chunk, round %d", i, round)
			own, err := ix.Search(ctx, fmt.Sprintf("word%d", (i+1)%tenants), 10)
			require.NoError(t, err)
			require.Empty(t, own, "and not the next tenant's")
			atMostBound(fmt.Sprintf("after tenant %d searched", i))
		}
	}

	// Changes reach indexes that were closed: each tenant gets a second chunk.
	for i, ctx := range ctxs {
		tenant := ragd.PrincipalOf(ctx).Tenant
		b.saveAs(t, tenant, ragd.NewVersion{SourceKey: "doc2", Format: "text", Title: "Doc", ContentHash: "1",
			Chunks: []ragd.Chunk{{Text: fmt.Sprintf("later%d shared", i)}}})
	}
	n, err := ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	require.Equal(t, tenants, n)
	atMostBound("after the second catch-up")
	for i, ctx := range ctxs {
		hits, err := ix.Search(ctx, "shared", 10)
		require.NoError(t, err)
		require.Len(t, hits, 2, "tenant %d", i)
		hits, err = ix.Search(ctx, fmt.Sprintf("later%d", i), 10)
		require.NoError(t, err)
		require.Len(t, hits, 1, "tenant %d", i)
	}
	count, err := ix.DocCount()
	require.NoError(t, err)
	require.EqualValues(t, 2*tenants, count)
	atMostBound("after counting every tenant's chunks")
	n, evicted := ix.OpenStats()
	require.LessOrEqual(t, n, bound)
	require.Greater(t, evicted, uint64(3*(tenants-bound)), "closes to keep the bound are counted")

	require.NoError(t, ix.Close())
	open, files := openFiles(t, b.dir)
	require.Empty(t, open, "closing the index closes every tenant's")
	require.Zero(t, files, "and the layout file")
	_, err = ix.Search(ctxs[0], "shared", 10)
	require.ErrorIs(t, err, index.ErrClosed)

	// Without a bound (0), every tenant read stays open.
	ix, err = index.OpenWith(b.dir, nil, index.Options{})
	require.NoError(t, err)
	defer ix.Close()
	for _, ctx := range ctxs {
		_, err := ix.Search(ctx, "shared", 10)
		require.NoError(t, err)
	}
	open, _ = openFiles(t, b.dir)
	require.Len(t, open, tenants, "0 is no bound")
	n, evicted = ix.OpenStats()
	require.Equal(t, tenants, n)
	require.Zero(t, evicted)

	_, err = index.OpenWith(t.TempDir(), nil, index.Options{MaxOpen: -1})
	require.ErrorContains(t, err, "must not be negative")
}

// An index in use by a search is not closed under it when the bound is exceeded: it is closed
// when its last read ends, and only if it is still past the bound then.
func TestSearchOutlivesEviction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctxs := tenantsWithChunks(t, b, 3)
	ix, err := index.OpenWith(b.dir, nil, index.Options{MaxOpen: 1})
	require.NoError(t, err)
	defer ix.Close()
	_, err = ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)

	searchA, doneA, err := ix.Hold(ctxs[0])
	require.NoError(t, err)
	defer doneA() // before Close, which waits for every read to end
	searchB, doneB, err := ix.Hold(ctxs[1])
	require.NoError(t, err)
	defer doneB()
	require.Equal(t, 2, ix.OpenTenants(), "both in use: the bound waits")
	// A third tenant's whole search, opening its index, runs while A and B are read.
	hits, err := ix.Search(ctxs[2], "word2", 10)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.Equal(t, 2, ix.OpenTenants(), "the idle third index was closed, not the two in use")

	n, err := searchA("word0 shared")
	require.NoError(t, err, "A's search runs in an index past the bound")
	require.Equal(t, 1, n)
	doneA()
	require.Equal(t, 1, ix.OpenTenants(), "A's index is closed when its read ends")
	ix.Settle()
	open, _ := openFiles(t, b.dir)
	require.Equal(t, map[string]bool{ragd.PrincipalOf(ctxs[1]).Tenant.String(): true}, open)

	n, err = searchB("word1")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	doneB()
	require.Equal(t, 1, ix.OpenTenants(), "B, the one in the bound, stays open")

	// A is reopened on demand.
	hits, err = ix.Search(ctxs[0], "word0", 10)
	require.NoError(t, err)
	require.Len(t, hits, 1)
}

// Searches of many tenants and the catch-up writing into their indexes run at once with a bound
// smaller than the tenants, so indexes are closed and reopened under them (go test -race): no
// search fails or finds another tenant's chunk, and every update is applied.
func TestConcurrentReadsAndUpdatesUnderTheBound(t *testing.T) {
	t.Parallel()
	const tenants, rounds = 5, 4
	b := setup(t)
	ctxs := tenantsWithChunks(t, b, tenants)
	ix, err := index.OpenWith(b.dir, nil, index.Options{MaxOpen: 2})
	require.NoError(t, err)
	defer ix.Close()
	_, err = ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 6 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := r.IntN(tenants)
				hits, err := ix.Search(ctxs[i], fmt.Sprintf("word%d shared", i), 10)
				if err == nil && (len(hits) == 0 || len(hits) > 1+rounds) {
					err = fmt.Errorf("tenant %d found %d chunks", i, len(hits))
				}
				if err == nil {
					_, err = ix.DocFreq(ctxs[i], "_all", []string{"share"})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	// The store's transaction is one connection: saves and catch-ups stay on this goroutine.
	for round := range rounds {
		for i, ctx := range ctxs {
			b.saveAs(t, ragd.PrincipalOf(ctx).Tenant, ragd.NewVersion{SourceKey: fmt.Sprintf("r%d", round), Format: "text",
				Title: "Doc", ContentHash: "1", Chunks: []ragd.Chunk{{Text: fmt.Sprintf("word%d round%d", i, round)}}})
		}
		n, err := ix.CatchUp(b.ctx, b.store)
		require.NoError(t, err)
		require.Equal(t, tenants, n)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for i, ctx := range ctxs {
		hits, err := ix.Search(ctx, fmt.Sprintf("word%d", i), 10)
		require.NoError(t, err)
		require.Len(t, hits, 1+rounds, "tenant %d has every update", i)
	}
	require.LessOrEqual(t, ix.OpenTenants(), 2)
}

// BenchmarkReopen is the cost of a search that must reopen its tenant's index (8 tenants
// searched in turn with a bound of 4, so every search reopens the index of the tenant searched
// least recently, and closes another in the background) against one that finds it open (no
// bound): what a tenant pays for being past --bm25-open-tenants.
func BenchmarkReopen(b *testing.B) {
	const tenants = 8
	for _, bound := range []int{0, tenants / 2} {
		b.Run(fmt.Sprintf("bound=%d", bound), func(b *testing.B) {
			tb := setup(b)
			ctxs := tenantsWithChunks(b, tb, tenants)
			ix, err := index.OpenWith(tb.dir, slog.New(slog.DiscardHandler), index.Options{MaxOpen: bound})
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			if _, err := ix.CatchUp(tb.ctx, tb.store); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				if _, err := ix.Search(ctxs[i%tenants], "shared", 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpenTenantIndexes is what an open tenant index holds, what --bm25-open-tenants bounds:
// 64 tenants' indexes (one chunk each) are opened by a search each, with no bound, and the files,
// goroutines, Go heap and resident memory the process gained are reported per index. The timed
// loop searches them in turn.
func BenchmarkOpenTenantIndexes(b *testing.B) {
	const tenants = 64
	tb := setup(b)
	ctxs := tenantsWithChunks(b, tb, tenants)
	ix, err := index.OpenWith(tb.dir, slog.New(slog.DiscardHandler), index.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.CatchUp(tb.ctx, tb.store); err != nil {
		b.Fatal(err)
	}
	// CatchUp opened the indexes it wrote to; a fresh start opens them on first use, so close
	// them all and measure from there.
	if err := ix.Close(); err != nil {
		b.Fatal(err)
	}
	if ix, err = index.OpenWith(tb.dir, slog.New(slog.DiscardHandler), index.Options{}); err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	_, files0 := openFiles(b, tb.dir)
	heap0, rss0, g0 := memory(b)
	for _, ctx := range ctxs {
		if _, err := ix.Search(ctx, "shared", 10); err != nil {
			b.Fatal(err)
		}
	}
	open, files := openFiles(b, tb.dir)
	heap, rss, g := memory(b)
	if len(open) != tenants {
		b.Fatalf("%d tenants' indexes open, want %d", len(open), tenants)
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := ix.Search(ctxs[i%tenants], "shared", 10); err != nil {
			b.Fatal(err)
		}
	}
	// After the loop: ResetTimer deletes reported metrics.
	b.ReportMetric(float64(files-files0)/tenants, "files/index")
	b.ReportMetric(float64(g-g0)/tenants, "goroutines/index")
	b.ReportMetric(float64(heap-heap0)/tenants/1024, "heap-KiB/index")
	b.ReportMetric(float64(rss-rss0)/tenants/1024, "rss-KiB/index")
}

// memory returns the Go heap in use after a collection, the process's resident set (VmRSS, from
// /proc/self/status) in bytes, and the number of goroutines.
func memory(t testing.TB) (heap, rss uint64, goroutines int) {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for line := range strings.Lines(string(status)) {
		if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(kb), " kB"), 10, 64)
			require.NoError(t, err)
			rss = n * 1024
		}
	}
	return ms.HeapInuse, rss, runtime.NumGoroutine()
}
