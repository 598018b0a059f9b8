package server_test

import (
	"log/slog"
	"testing"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/internal/modeltest"
)

// BenchmarkLongWordQuestion times the first turn of a conversation whose question is one of
// modeltest.Messages: an ordinary one, one 8 KiB word (no spaces; messages may be 8192 bytes),
// where every stage super-linear in a word's length shows, or 8 KiB of prose (BM25 only, no
// models).
//
//	go test ./server -run '^$' -bench LongWordQuestion -count 6
func BenchmarkLongWordQuestion(b *testing.B) {
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	tb := setup(b, options{corpus: true, logger: slog.New(slog.DiscardHandler)})
	for _, q := range modeltest.Messages {
		b.Run("question="+q.Name, func(b *testing.B) {
			for b.Loop() {
				if _, err := tb.deps.Pipeline.Ask(tb.ctx, ask.Request{Message: q.Text}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
