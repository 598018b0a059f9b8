// Package rerank scores (query, passage) pairs with a cross-encoder, on ONNX Runtime or hugot's
// pure-Go backend. A score is the sigmoid of the model's relevance logit, in (0, 1).
package rerank

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/pipelines"

	"github.com/ragd/ragd/encoder"
)

// Scorer scores passages against a query. It is safe for concurrent use. On ONNX Runtime,
// concurrent turns share model runs (encoder.Batcher): each caller tokenizes its own pairs and
// one goroutine runs the graph. The pure-Go backend runs one caller's batch at a time.
type Scorer struct {
	model   *encoder.Model
	runtime encoder.Runtime
	batch   int
	window  int                // passage tokens scored; 0 is the whole passage
	wtk     *encoder.Tokenizer // cuts windows, on either runtime

	ort *encoder.ORTModel[float32] // ONNX Runtime

	mu    sync.Mutex
	run   func(query string, passages []string) ([]float32, error) // one batch, input order; pure Go
	close func() error
}

// Open loads the cross-encoder in cfg.Dir on the configured runtime and checks it with one probe
// pair.
func Open(cfg encoder.Config, opts ...Option) (*Scorer, error) {
	cfg, m, rt, fallback, err := encoder.Prepare(cfg, encoder.CrossEncoder)
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	s := &Scorer{model: m, runtime: rt, batch: cfg.BatchSize}
	for _, o := range opts {
		o(s)
	}
	if err := s.checkWindow(); err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	if rt == encoder.ORT {
		err = s.openORT(cfg)
	} else {
		err = s.openGo(cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	switch {
	case s.window == 0:
	case s.ort != nil: // the model's own tokenizer: one vocabulary in memory, not two
		s.wtk = s.ort.Tokenizer
	default:
		if s.wtk, err = encoder.NewTokenizer(m); err != nil {
			s.close()
			return nil, fmt.Errorf("rerank: %w", err)
		}
	}
	if _, err := s.Score(context.Background(), "probe", []string{"probe passage"}); err != nil {
		s.close()
		return nil, fmt.Errorf("rerank: %w: probe run failed: %w", encoder.ErrModel, err)
	}
	encoder.LogStart(cfg, "cross-encoder", m, rt, fallback, 1)
	return s, nil
}

func (s *Scorer) openORT(cfg encoder.Config) error {
	o, err := encoder.OpenORT(s.model, cfg, func(out encoder.Output, seqs []encoder.Sequence) ([]float32, error) {
		if len(out.Shape) != 2 || out.Shape[1] != 1 || int(out.Shape[0]) != len(seqs) {
			return nil, fmt.Errorf("%w: output shape %v, want [%d, 1]", encoder.ErrModel, out.Shape, len(seqs))
		}
		scores := make([]float32, len(seqs))
		for i, logit := range out.Data {
			scores[i] = float32(1 / (1 + math.Exp(-float64(logit))))
		}
		return scores, nil
	})
	if err != nil {
		return err
	}
	s.ort, s.close = o, o.Close
	return nil
}

func (s *Scorer) openGo(cfg encoder.Config) error {
	p, closeFn, err := encoder.GoPipeline(s.model, hugot.CrossEncoderConfig{
		Name: "rerank",
		Options: []hugot.CrossEncoderOption{
			pipelines.WithBatchSize(cfg.BatchSize),
			pipelines.WithSortResults(false),
		},
	})
	if err != nil {
		return err
	}
	s.close = closeFn
	s.run = func(query string, passages []string) ([]float32, error) {
		out, err := p.RunPipeline(query, passages)
		if err != nil {
			return nil, err
		}
		scores := make([]float32, len(passages))
		for _, r := range out.Results {
			scores[r.Index] = r.Score
		}
		return scores, nil
	}
	return nil
}

// Runtime is the engine running the model.
func (s *Scorer) Runtime() encoder.Runtime { return s.runtime }

// Dir is the model directory.
func (s *Scorer) Dir() string { return s.model.Dir }

// Score returns one score per passage, in order: higher means more relevant to query. Passages
// run in batches of similar length.
func (s *Scorer) Score(ctx context.Context, query string, passages []string) ([]float32, error) {
	if s.ort != nil {
		return s.scoreORT(ctx, query, passages)
	}
	if s.window > 0 {
		// hugot's pipeline takes text: the windows go back to it as text, which it tokenizes
		// again into the window's tokens (a window starts at a word's start).
		var err error
		if passages, err = windows(s.wtk, s.window, query, passages); err != nil {
			return nil, fmt.Errorf("rerank: %w", err)
		}
	}
	scores, err := encoder.RunBatched(ctx, passages, s.batch, func(batch []string) ([]float32, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.run(query, batch)
	})
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	return scores, nil
}

// scoreORT tokenizes the query and each passage once: the window, when there is one, is cut from
// those tokens, and the model reads exactly the tokens the window chose.
func (s *Scorer) scoreORT(ctx context.Context, query string, passages []string) ([]float32, error) {
	seqs, err := s.sequences(query, passages)
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	scores, err := s.ort.Run(ctx, seqs)
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	return scores, nil
}

// sequences are the model's inputs for query and passages on ONNX Runtime.
func (s *Scorer) sequences(query string, passages []string) ([]encoder.Sequence, error) {
	t, err := tokenize(s.ort.Tokenizer, query, passages)
	if err != nil {
		return nil, err
	}
	if s.window > 0 {
		t.window(s.window)
	}
	seqs := make([]encoder.Sequence, len(passages))
	for i, p := range t.passages {
		if seqs[i], err = s.ort.Tokenizer.Pair(t.query, p); err != nil {
			return nil, err
		}
	}
	return seqs, nil
}

// Close frees the model.
func (s *Scorer) Close() error { return s.close() }
