package server_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/ragd/ragd/ask"
)

// BenchmarkLongWordQuestion times the first turn of a conversation whose question is an
// ordinary one, or carries one 8 KiB word (no spaces; messages may be 8192 bytes): every stage
// that is super-linear in a word's length shows in the second (BM25 only, no models).
//
//	go test ./server -run '^$' -bench LongWordQuestion -count 6
func BenchmarkLongWordQuestion(b *testing.B) {
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	tb := setup(b, options{corpus: true, logger: slog.New(slog.DiscardHandler)})
	for _, q := range []struct{ name, text string }{
		{"question=ordinary", "What should I do if I smell gas after an earthquake?"},
		{"question=word8k", "what is " + strings.Repeat("qwertyuiopasdfghjklzxcvbnm", 8184/26)},
	} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := tb.deps.Pipeline.Ask(tb.ctx, ask.Request{Message: q.text}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
