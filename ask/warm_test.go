package ask

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

// countedTitles counts the gazetteer builds: each reads the tenant's titles once.
type countedTitles struct {
	ragd.Store
	n atomic.Int32
}

func (s *countedTitles) Titles(ctx context.Context) ([]ragd.Title, error) {
	s.n.Add(1)
	return s.Store.Titles(ctx)
}

// WarmFocus builds the tenant's gazetteer, and the tenant's first turn then finds it built; with
// the focus off it builds nothing.
func TestWarmFocusBuildsTheGazetteerTheFirstTurnUses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, ix := guesthouses(t, "Allenbell")

	off := DefaultConfig()
	off.FocusWeight = 0
	reads := &countedTitles{Store: st}
	p, err := New(off, Deps{Index: ix, Store: reads})
	require.NoError(t, err)
	require.NoError(t, p.WarmFocus(ctx))
	require.Zero(t, reads.n.Load(), "the focus is off: no gazetteer")

	p, err = New(DefaultConfig(), Deps{Index: ix, Store: reads})
	require.NoError(t, err)
	require.NoError(t, p.WarmFocus(ctx))
	require.Equal(t, int32(1), reads.n.Load())
	g, err := p.gazetteer(ctx) // the first turn's
	require.NoError(t, err)
	require.Contains(t, g.chunks, "Allenbell")
	require.Equal(t, int32(1), reads.n.Load(), "the first turn built none")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, p.WarmFocus(cancelled), context.Canceled)
}
