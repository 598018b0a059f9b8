package rerank

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/internal/modeltest"
)

// BenchmarkInputs40 is the tokenizing part of one rerank on ONNX Runtime: the model's inputs for
// a question and 40 SciFact candidates (chunks of about 260 model tokens), whole and with a
// window of 128. The model's run is apart (BenchmarkScore40Window). cpu-ms/op as there.
func BenchmarkInputs40(b *testing.B) {
	docs := modeltest.Corpus(b, "scifact", 40)
	passages := make([]string, len(docs))
	for i, d := range docs {
		passages[i] = d.Title + "\n" + d.Text
	}
	query := "vitamin d deficiency and bone loss in older adults"
	cfg := encoder.Config{Dir: modeltest.Dir(b, modeltest.CrossEncoder), Runtime: encoder.ORT, ORTLibrary: modeltest.ORTLibrary(), BatchSize: 8}
	for _, window := range []int{0, 128} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			s, err := Open(cfg, WithWindow(window))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			start := CPUTime(b)
			for b.Loop() {
				if _, err := s.sequences(query, passages); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(CPUTime(b)-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// CPUTime is the CPU time the process has used, user and system, every thread's (ONNX Runtime's
// included): a busy machine moves it less than wall time.
func CPUTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
