package rerank_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/internal/modeltest"
	"github.com/ragd/ragd/rerank"
)

// benchPassages are a turn's n candidates: passages of about 200 words, as chunks of 256 cl100k
// tokens are (some 260 model tokens).
func benchPassages(n int) []string {
	passages := make([]string, n)
	for i := range passages {
		passages[i] = strings.Repeat(fmt.Sprintf("passage %d says something about smoke alarms and batteries. ", i), 20)
	}
	return passages
}

func openBench(b *testing.B, cfg encoder.Config, opts ...rerank.Option) *rerank.Scorer {
	cfg.Dir, cfg.Runtime, cfg.ORTLibrary = modeltest.Dir(b, modeltest.CrossEncoder), encoder.ORT, modeltest.ORTLibrary()
	s, err := rerank.Open(cfg, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkScore40 scores the 40 candidates of one turn (passages of about 200 words, as chunks
// of 256 cl100k tokens are) at several batch sizes: the figure behind the default batch size.
func BenchmarkScore40(b *testing.B) {
	passages := benchPassages(40)
	for _, batch := range []int{1, 4, 8, 16, 40} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s := openBench(b, encoder.Config{BatchSize: batch})
			for b.Loop() {
				if _, err := s.Score(context.Background(), "how often should smoke alarm batteries be replaced", passages); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScore40Window scores one turn's 40 candidates whole and on query-centred windows of
// 128 and 64 model tokens (the passages are about 260): what --rerank-window saves. cpu-ms/op is
// the process's CPU time per turn (CPUTime).
func BenchmarkScore40Window(b *testing.B) {
	passages := benchPassages(40)
	for _, window := range []int{0, 128, 64} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			s := openBench(b, encoder.Config{BatchSize: 8}, rerank.WithWindow(window))
			start := rerank.CPUTime(b)
			for b.Loop() {
				if _, err := s.Score(context.Background(), "how often should smoke alarm batteries be replaced", passages); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rerank.CPUTime(b)-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkConcurrentTurns has 8 turns in flight, each scoring its 40 candidates against its
// own question, with model runs shared between turns (the default) and with each run kept to one
// turn: the cross-request batching gain. Read pairs/s.
func BenchmarkConcurrentTurns(b *testing.B) {
	const turns, candidates = 8, 40
	passages := benchPassages(candidates)
	for _, solo := range []bool{false, true} {
		name := "shared"
		if solo {
			name = "solo"
		}
		b.Run(name, func(b *testing.B) {
			s := openBench(b, encoder.Config{BatchSize: 8, SoloBatches: solo})
			for b.Loop() {
				var wg sync.WaitGroup
				for i := range turns {
					wg.Go(func() {
						q := fmt.Sprintf("how often should smoke alarm batteries be replaced in house %d", i)
						if _, err := s.Score(context.Background(), q, passages[:candidates-i]); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*(turns*candidates-turns*(turns-1)/2))/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}
