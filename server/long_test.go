package server_test

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd/ask"
)

// longQuestions are the user turns of a long conversation, asked in a cycle.
var longQuestions = []string{
	"What should I do if I smell gas after an earthquake?",
	"Is it the same after a flood?",
	"How long does food keep in the freezer when the power is out?",
	"Where should smoke alarms go?",
	"How do I treat a burn?",
	"What goes in an emergency kit?",
	"Should I drive through flood water?",
	"What do I do during the shaking?",
}

// BenchmarkLongConversation times a turn at the start of a conversation and ones 120 and 240
// turns in (BM25 only, no models; a turn reads the latest --history-window messages, so the
// last two should cost the same): ns/op is the whole turn as /v1/ask runs it; locked-ms is the
// time the turn holds the conversation's lock (facts, bundle and persist), context-ms the
// reading through of the conversation for the context bundle (before the lock), load-ms the
// reading of the conversation from PostgreSQL. Each iteration asks one more turn: turn=120 with
// -benchtime=10x times turns 120 to 129.
//
//	go test ./server -run '^$' -bench LongConversation -benchtime 10x
func BenchmarkLongConversation(b *testing.B) {
	// The index logs every catch-up, which would break the benchmark's result lines.
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	for _, at := range []int{1, 120, 240} {
		b.Run(fmt.Sprintf("turn=%d", at), func(b *testing.B) {
			tb := setup(b, options{corpus: true, logger: slog.New(slog.DiscardHandler)})
			p := tb.deps.Pipeline
			ask1 := func(conv uuid.UUID, i int) *ask.Turn {
				turn, err := p.Ask(tb.ctx, ask.Request{ConversationID: conv, Message: longQuestions[i%len(longQuestions)]})
				if err != nil {
					b.Fatal(err)
				}
				return turn
			}
			var conv uuid.UUID
			for i := 1; i < at; i++ {
				conv = ask1(conv, i).ConversationID
			}
			var locked, context, load time.Duration
			i := at
			for b.Loop() {
				c := conv
				if at == 1 {
					c = uuid.Nil // every iteration a first turn
				}
				turn := ask1(c, i)
				i++
				for _, s := range turn.Timings {
					switch s.Stage {
					case "facts", "bundle", "persist":
						locked += s.Duration
					case "context":
						context += s.Duration
					case "load_conversation":
						load += s.Duration
					}
				}
			}
			n := float64(b.N) * float64(time.Millisecond)
			b.ReportMetric(float64(locked)/n, "locked-ms/op")
			b.ReportMetric(float64(context)/n, "context-ms/op")
			b.ReportMetric(float64(load)/n, "load-ms/op")
		})
	}
}
