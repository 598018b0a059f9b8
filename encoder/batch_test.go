package encoder_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/encoder"
)

// gate is a run function that records each batch and, while closed, holds the runner in its
// first batch so that callers queue up behind it.
type gate struct {
	mu      sync.Mutex
	batches [][]int64 // the first id of each sequence, per batch
	hold    chan struct{}
	held    chan struct{}
	fail    error
}

func newGate() *gate { return &gate{hold: make(chan struct{}), held: make(chan struct{}, 1)} }

func (g *gate) run(seqs []encoder.Sequence) ([]int64, error) {
	select {
	case g.held <- struct{}{}:
		<-g.hold
	default:
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var ids []int64
	out := make([]int64, len(seqs))
	for i, s := range seqs {
		ids = append(ids, s.IDs[0])
		out[i] = s.IDs[0] * 10
	}
	g.batches = append(g.batches, ids)
	return out, g.fail
}

func seqs(ids ...int64) []encoder.Sequence {
	out := make([]encoder.Sequence, len(ids))
	for i, id := range ids {
		// Length varies against the order, so results must be put back in input order.
		out[i] = encoder.Sequence{IDs: make([]int64, 1+int(10-id%10))}
		out[i].IDs[0] = id
	}
	return out
}

// waitQueued waits until n callers' jobs are queued behind the held batch.
func waitQueued[T any](b *encoder.Batcher[T], n int) {
	for b.Queued() < n {
		time.Sleep(time.Millisecond)
	}
}

func TestBatcherSharesRunsAndKeepsOrder(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{true, false} {
		g := newGate()
		b := encoder.NewBatcher(4, shared, g.run)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // occupies the runner
			defer wg.Done()
			out, err := b.Run(context.Background(), seqs(1))
			require.NoError(t, err)
			require.Equal(t, []int64{10}, out)
		}()
		<-g.held
		results := make([][]int64, 3)
		for k := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := b.Run(context.Background(), seqs(int64(100+k)))
				require.NoError(t, err)
				results[k] = out
			}()
		}
		waitQueued(b, 3)
		close(g.hold)
		wg.Wait()
		for k := range 3 {
			require.Equal(t, []int64{int64(1000 + 10*k)}, results[k])
		}
		if shared {
			require.Len(t, g.batches, 2, "three one-sequence callers share the second run: %v", g.batches)
			require.Len(t, g.batches[1], 3)
		} else {
			require.Len(t, g.batches, 4, "every caller runs alone: %v", g.batches)
		}
		b.Close()
	}
}

func TestBatcherServesFewestLeftFirst(t *testing.T) {
	t.Parallel()
	g := newGate()
	b := encoder.NewBatcher(4, true, g.run)
	defer b.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := b.Run(context.Background(), seqs(1))
		require.NoError(t, err)
	}()
	<-g.held
	big := []int64{21, 22, 23, 24, 25, 26, 27, 28, 29, 30}
	wg.Add(1)
	go func() {
		defer wg.Done()
		out, err := b.Run(context.Background(), seqs(big...))
		require.NoError(t, err)
		for i, id := range big {
			require.Equal(t, id*10, out[i], "results come back in input order")
		}
	}()
	waitQueued(b, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		out, err := b.Run(context.Background(), seqs(7))
		require.NoError(t, err)
		require.Equal(t, []int64{70}, out)
	}()
	waitQueued(b, 2)
	close(g.hold)
	wg.Wait()
	require.Equal(t, int64(7), g.batches[1][0], "the one-sequence caller goes first: %v", g.batches)
	require.Len(t, g.batches[1], 4, "and the batch is filled from the next caller")
	n := 0
	for _, bt := range g.batches[1:] {
		n += len(bt)
	}
	require.Equal(t, 11, n)
}

func TestBatcherCancelAndErrors(t *testing.T) {
	t.Parallel()
	g := newGate()
	b := encoder.NewBatcher(2, true, g.run)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := b.Run(context.Background(), seqs(1))
		require.NoError(t, err)
	}()
	<-g.held
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := b.Run(ctx, seqs(5, 6, 7))
		errc <- err
	}()
	waitQueued(b, 1)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	close(g.hold)
	wg.Wait()
	for _, bt := range g.batches {
		require.NotContains(t, bt, int64(5), "a cancelled caller's sequences are not run")
	}

	g.mu.Lock()
	g.fail = errors.New("boom")
	g.mu.Unlock()
	_, err := b.Run(context.Background(), seqs(8, 9, 3))
	require.ErrorContains(t, err, "boom")

	b.Close()
	_, err = b.Run(context.Background(), seqs(1))
	require.ErrorIs(t, err, encoder.ErrClosed)
	out, err := encoder.NewBatcher(2, true, g.run).Run(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, out)
}
