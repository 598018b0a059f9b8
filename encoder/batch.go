package encoder

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrClosed is returned for work submitted to, or pending in, a closed Batcher.
var ErrClosed = errors.New("encoder: model closed")

// Batcher runs the tokenized sequences of concurrent callers through one model in shared runs:
// one goroutine runs the graph, one batch at a time (a run already uses every core), and each
// batch takes up to size sequences from whatever is waiting, so eight turns that each need one
// query embedded cost one run instead of eight. It batches naturally: an idle model runs a lone
// caller's sequences at once, and callers queue into the next batch only while a run is going.
//
// The next batch serves the caller with the fewest sequences left first (ties by arrival): a
// query's one sequence goes ahead of an ingest's hundreds, and a turn's rerank finishes before
// the next turn's begins instead of all finishing last. Sequences are grouped by length within
// each caller, so padding stays small.
type Batcher[T any] struct {
	size int
	run  func([]Sequence) ([]T, error)
	// Shared false gives every batch to one caller only: the behaviour before batches were
	// shared, kept to measure the gain.
	shared bool

	mu     sync.Mutex
	queue  []*job[T]
	seq    int // arrival counter
	wake   chan struct{}
	closed bool
	done   chan struct{}
}

type job[T any] struct {
	seqs    []Sequence
	order   []int // indexes of seqs by length, shortest first
	taken   int   // how many of order are in a batch already
	left    int   // sequences not answered yet
	arrival int
	out     []T
	err     error
	done    chan struct{}
	ended   bool // done is closed
}

// end closes j.done once. The caller holds b.mu.
func (j *job[T]) end() {
	if !j.ended {
		j.ended = true
		close(j.done)
	}
}

// NewBatcher starts a batcher that runs batches of at most size sequences with run, which must
// return one result per sequence in order. shared false keeps each batch to one caller.
func NewBatcher[T any](size int, shared bool, run func([]Sequence) ([]T, error)) *Batcher[T] {
	b := &Batcher[T]{size: size, run: run, shared: shared, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go b.loop()
	return b
}

// Run returns one result per sequence, in order. When ctx ends first, Run returns its error
// and the sequences not yet started are dropped.
func (b *Batcher[T]) Run(ctx context.Context, seqs []Sequence) ([]T, error) {
	if len(seqs) == 0 {
		return []T{}, nil
	}
	j := &job[T]{seqs: seqs, left: len(seqs), out: make([]T, len(seqs)), done: make(chan struct{})}
	j.order = make([]int, len(seqs))
	for i := range j.order {
		j.order[i] = i
	}
	slices.SortStableFunc(j.order, func(a, c int) int { return len(seqs[a].IDs) - len(seqs[c].IDs) })
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	b.seq++
	j.arrival = b.seq
	b.queue = append(b.queue, j)
	select { // under b.mu, so Close cannot close wake in between
	case b.wake <- struct{}{}:
	default:
	}
	b.mu.Unlock()
	select {
	case <-j.done:
		return j.out, j.err
	case <-ctx.Done():
		b.mu.Lock()
		b.drop(j, ctx.Err())
		b.mu.Unlock()
		<-j.done // a batch holding its sequences may still be running: it writes into j.out
		return nil, ctx.Err()
	}
}

// drop fails j and removes what it has not started. The caller holds b.mu.
func (b *Batcher[T]) drop(j *job[T], err error) {
	if j.err == nil {
		j.err = err
	}
	if i := slices.Index(b.queue, j); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
	}
	j.left -= len(j.order) - j.taken
	j.taken = len(j.order)
	if j.left == 0 {
		j.end()
	}
}

type slot[T any] struct {
	j *job[T]
	i int
}

// take forms the next batch: callers with the fewest sequences left first.
func (b *Batcher[T]) take() []slot[T] {
	b.mu.Lock()
	defer b.mu.Unlock()
	slices.SortStableFunc(b.queue, func(x, y *job[T]) int {
		if d := (len(x.order) - x.taken) - (len(y.order) - y.taken); d != 0 {
			return d
		}
		return x.arrival - y.arrival
	})
	var batch []slot[T]
	for len(b.queue) > 0 && len(batch) < b.size {
		j := b.queue[0]
		n := min(b.size-len(batch), len(j.order)-j.taken)
		for _, i := range j.order[j.taken : j.taken+n] {
			batch = append(batch, slot[T]{j, i})
		}
		j.taken += n
		if j.taken == len(j.order) {
			b.queue = b.queue[1:]
		}
		if !b.shared {
			break
		}
	}
	return batch
}

func (b *Batcher[T]) loop() {
	defer close(b.done)
	for range b.wake {
		for {
			batch := b.take()
			if len(batch) == 0 {
				break
			}
			seqs := make([]Sequence, len(batch))
			for k, s := range batch {
				seqs[k] = s.j.seqs[s.i]
			}
			res, err := b.run(seqs)
			if err == nil && len(res) != len(seqs) {
				err = fmt.Errorf("encoder: runtime returned %d results for %d inputs", len(res), len(seqs))
			}
			b.mu.Lock()
			for k, s := range batch {
				if err != nil {
					b.drop(s.j, err)
				} else {
					s.j.out[s.i] = res[k]
				}
				if s.j.left > 0 {
					if s.j.left--; s.j.left == 0 {
						s.j.end()
					}
				}
			}
			b.mu.Unlock()
		}
	}
}

// Close fails what is waiting, lets a running batch finish, and stops the batcher. The model can
// be freed once Close returns.
func (b *Batcher[T]) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	for len(b.queue) > 0 {
		b.drop(b.queue[0], ErrClosed)
	}
	close(b.wake)
	b.mu.Unlock()
	<-b.done
}
