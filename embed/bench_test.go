package embed_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ragd/ragd/embed"
	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/internal/modeltest"
)

// BenchmarkEmbed64 embeds 64 chunks of about 128 tokens (what the model reads of a chunk) at
// several batch sizes: the figure behind the default batch size.
func BenchmarkEmbed64(b *testing.B) {
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("chunk %d is about vitamin d and bone density in older adults. ", i), 10)
	}
	for _, batch := range []int{8, 16, 32, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			e, err := embed.Open(encoder.Config{Dir: modeltest.Dir(b, modeltest.Embedding), Runtime: encoder.ORT,
				ORTLibrary: modeltest.ORTLibrary(), BatchSize: batch})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			for b.Loop() {
				if _, err := e.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConcurrentQueries has 8 turns in flight, each embedding its question, with model runs
// shared between turns (the default) and with each run kept to one turn. Read queries/s.
func BenchmarkConcurrentQueries(b *testing.B) {
	const turns = 8
	for _, solo := range []bool{false, true} {
		name := "shared"
		if solo {
			name = "solo"
		}
		b.Run(name, func(b *testing.B) {
			e, err := embed.Open(encoder.Config{Dir: modeltest.Dir(b, modeltest.Embedding), Runtime: encoder.ORT,
				ORTLibrary: modeltest.ORTLibrary(), BatchSize: 16, SoloBatches: solo})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			for b.Loop() {
				var wg sync.WaitGroup
				for i := range turns {
					wg.Go(func() {
						if _, err := e.Embed(context.Background(), []string{fmt.Sprintf("does vitamin d %d prevent bone loss in older adults", i)}); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*turns)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}
