package ask

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/index"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/store"
)

// arrivals counts the turns that have started looking for the gazetteer (each reads the
// tenant's sequence first) and closes all when every one of them has.
type arrivals struct {
	TextIndex
	want  int32
	n     atomic.Int32
	all   chan struct{}
	close sync.Once
}

func (a *arrivals) TenantSeq(ctx context.Context) int64 {
	if a.n.Add(1) == a.want {
		a.close.Do(func() { close(a.all) })
	}
	return a.TextIndex.TenantSeq(ctx)
}

// titleReads counts the builds (each reads the tenant's titles once) and holds each until
// every turn has arrived, so no turn can find a build already finished. The reads take turns:
// the test's store is one transaction.
type titleReads struct {
	ragd.Store
	arrived <-chan struct{}
	n       atomic.Int32
	mu      sync.Mutex
}

func (s *titleReads) Titles(ctx context.Context) ([]ragd.Title, error) {
	s.n.Add(1)
	<-s.arrived
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Store.Titles(ctx)
}

// A fresh server's first concurrent turns of a tenant build its gazetteer once and share it.
func TestFirstGazetteerIsBuiltOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, ix := guesthouses(t, "Hobsons House", "Allenbell")

	const turns = 8
	arr := &arrivals{TextIndex: ix, want: turns, all: make(chan struct{})}
	reads := &titleReads{Store: st, arrived: arr.all}
	p, err := New(DefaultConfig(), Deps{Index: arr, Store: reads})
	require.NoError(t, err)
	got := make([]*gazetteer, turns)
	errs := make([]error, turns)
	var wg sync.WaitGroup
	for i := range turns {
		wg.Go(func() { got[i], errs[i] = p.gazetteer(ctx) })
	}
	wg.Wait()
	for i := range turns {
		require.NoError(t, errs[i])
		require.Same(t, got[0], got[i])
	}
	require.Equal(t, int32(1), reads.n.Load(), "one build for all the turns")
	require.Contains(t, got[0].chunks, "Allenbell")
}

// guesthouses stores a document of one chunk for each title, in a transaction the test rolls
// back, and indexes them.
func guesthouses(t *testing.T, titles ...string) (*store.Store, *index.Index) {
	t.Helper()
	ctx := context.Background()
	st := store.New(dbtest.TestTx(t))
	var vs []ragd.NewVersion
	for _, title := range titles {
		vs = append(vs, ragd.NewVersion{SourceKey: title, Format: "text", Title: title, ContentHash: "h", Bytes: 10,
			Chunks: []ragd.Chunk{{Text: title + " is a guesthouse.", CharEnd: 20, Tokens: 5}}})
	}
	_, err := st.SaveVersions(ctx, vs)
	require.NoError(t, err)
	ix, err := index.Open(filepath.Join(t.TempDir(), "bm25"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { ix.Close() })
	_, err = ix.CatchUp(ctx, st)
	require.NoError(t, err)
	return st, ix
}
