package token

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/modeltest"
)

// BenchmarkCount counts a short prose paragraph and the first 500 SciFact abstracts, as the
// chunker and the context bundle do. Each text is counted once before the clock starts: the BPE
// ranks are loaded and the words are cached, as in a running server.
func BenchmarkCount(b *testing.B) {
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog. Vitamin D supplementation "+
		"reduced fracture risk in elderly women (p < 0.05), a 12-month trial found. ", 8)
	b.Run("prose", func(b *testing.B) {
		b.SetBytes(int64(len(prose)))
		Count(prose)
		for b.Loop() {
			Count(prose)
		}
	})
	var texts []string
	size := 0
	for _, d := range modeltest.Corpus(b, "scifact", 500) {
		texts = append(texts, d.Text)
		size += len(d.Text)
	}
	b.Run("scifact500", func(b *testing.B) {
		b.SetBytes(int64(size))
		for _, s := range texts {
			Count(s)
		}
		for b.Loop() {
			for _, s := range texts {
				Count(s)
			}
		}
	})
}

// BenchmarkCountCold counts text whose words are not cached yet (the cache is emptied, its maps
// kept): the price of the first sight, against the encoder alone.
func BenchmarkCountCold(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. Vitamin D supplementation "+
		"reduced fracture risk in elderly women (p < 0.05), a 12-month trial found. ", 8)
	Count(text)
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			words.Clear()
			Count(text)
		}
	})
	b.Run("encoder", func(b *testing.B) {
		for b.Loop() {
			encode(text)
		}
	})
}

// BenchmarkCountLongWord counts one word without spaces of 2, 4 and 8 KiB (a question may be
// 8192 bytes): the BPE's merges are quadratic in a piece's length, so time per byte should stay
// flat as the word grows.
//
//	go test ./token -run '^$' -bench CountLongWord -count 6
func BenchmarkCountLongWord(b *testing.B) {
	for _, n := range []int{2048, 4096, 8192} {
		w := strings.Repeat("qwertyuiopasdfghjklzxcvbnm", n/26+1)[:n]
		b.Run(fmt.Sprintf("bytes=%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			Count(w)
			for b.Loop() {
				Count(w)
			}
		})
	}
}
