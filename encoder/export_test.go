package encoder

var SessionOptions = sessionOptions

// Queued is how many callers' jobs wait in the queue, so that a test can wait for them to
// arrive instead of guessing how long that takes.
func (b *Batcher[T]) Queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}
