package embed_test

import (
	"context"
	"fmt"
	"strings"
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
