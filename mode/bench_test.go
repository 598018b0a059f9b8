package mode

import (
	"testing"

	"github.com/ragd/ragd/internal/modeltest"
)

// BenchmarkClassify times the mode classifier, without a previous turn, on an ordinary question
// and the longest messages (modeltest.Messages):
//
//	go test ./mode -run '^$' -bench Classify -count 6
func BenchmarkClassify(b *testing.B) {
	for _, m := range modeltest.Messages {
		b.Run(m.Name, func(b *testing.B) {
			for b.Loop() {
				Classify(m.Text, "")
			}
		})
	}
}
