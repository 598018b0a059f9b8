// Package embed computes sentence embeddings: token vectors of a transformer encoder mean-pooled
// over the attention mask, then L2-normalized (as sentence-transformers does for
// all-MiniLM-L6-v2), on ONNX Runtime or hugot's pure-Go backend.
package embed

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/pipelines"

	"github.com/ragd/ragd/encoder"
)

// Embedder turns texts into unit vectors. It is safe for concurrent use. On ONNX Runtime,
// concurrent callers share model runs (encoder.Batcher): callers tokenize their own texts and one
// goroutine runs the graph. The pure-Go backend runs one caller's batch at a time.
type Embedder struct {
	model   *encoder.Model
	runtime encoder.Runtime
	dim     int
	batch   int

	ort *encoder.ORTModel[[]float32] // ONNX Runtime

	mu    sync.Mutex
	run   func(texts []string) ([][]float32, error) // one batch, pure Go
	close func() error
}

// Open loads the model in cfg.Dir on the configured runtime and checks, with one probe text,
// that it produces embeddings of the size its config.json promises.
func Open(cfg encoder.Config) (*Embedder, error) {
	cfg, m, rt, fallback, err := encoder.Prepare(cfg, encoder.Embedding)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	e := &Embedder{model: m, runtime: rt, batch: cfg.BatchSize}
	if rt == encoder.ORT {
		err = e.openORT(cfg)
	} else {
		err = e.openGo()
	}
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	probe, err := e.Embed(context.Background(), []string{"probe"})
	if err != nil {
		e.close()
		return nil, fmt.Errorf("embed: %w: probe run failed: %w", encoder.ErrModel, err)
	}
	e.dim = len(probe[0])
	if e.dim != m.HiddenSize {
		e.close()
		return nil, fmt.Errorf("embed: %w: %s gives %d-dimensional vectors, config.json says %d", encoder.ErrModel, cfg.Dir, e.dim, m.HiddenSize)
	}
	encoder.LogStart(cfg, "embedding", m, rt, fallback, e.dim)
	return e, nil
}

func (e *Embedder) openORT(cfg encoder.Config) error {
	o, err := encoder.OpenORT(e.model, cfg, pool)
	if err != nil {
		return err
	}
	e.ort, e.close = o, o.Close
	return nil
}

// pool mean-pools token vectors over each sequence's real tokens and normalizes. A graph that
// already outputs one vector per text ([batch, dim]) is only normalized.
func pool(out encoder.Output, seqs []encoder.Sequence) ([][]float32, error) {
	vecs := make([][]float32, len(seqs))
	switch len(out.Shape) {
	case 2:
		dim := int(out.Shape[1])
		for i := range seqs {
			vecs[i] = normalize(out.Data[i*dim : (i+1)*dim])
		}
	case 3:
		width, dim := int(out.Shape[1]), int(out.Shape[2])
		for i, s := range seqs {
			sum := make([]float64, dim)
			for j := range s.IDs {
				tok := out.Data[(i*width+j)*dim : (i*width+j+1)*dim]
				for k, x := range tok {
					sum[k] += float64(x)
				}
			}
			v := make([]float32, dim)
			for k := range sum {
				v[k] = float32(sum[k] / float64(len(s.IDs)))
			}
			vecs[i] = normalize(v)
		}
	default:
		return nil, fmt.Errorf("%w: output shape %v is not [batch, seq, dim] or [batch, dim]", encoder.ErrModel, out.Shape)
	}
	return vecs, nil
}

func normalize(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if ss == 0 {
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

func (e *Embedder) openGo() error {
	p, closeFn, err := encoder.GoPipeline(e.model, hugot.FeatureExtractionConfig{
		Name:    "embed",
		Options: []hugot.FeatureExtractionOption{pipelines.WithNormalization()},
	})
	if err != nil {
		return err
	}
	e.close = closeFn
	e.run = func(texts []string) ([][]float32, error) {
		out, err := p.RunPipeline(texts)
		if err != nil {
			return nil, err
		}
		return out.Embeddings, nil
	}
	return nil
}

// Dim is the length of the vectors.
func (e *Embedder) Dim() int { return e.dim }

// Runtime is the engine running the model.
func (e *Embedder) Runtime() encoder.Runtime { return e.runtime }

// Dir is the model directory.
func (e *Embedder) Dir() string { return e.model.Dir }

// Embed returns one unit vector per text, in order. Texts run in batches of similar length.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.ort != nil {
		seqs := make([]encoder.Sequence, len(texts))
		for i, t := range texts {
			var err error
			if seqs[i], err = e.ort.Tokenizer.Encode(t); err != nil {
				return nil, fmt.Errorf("embed: %w", err)
			}
		}
		vecs, err := e.ort.Run(ctx, seqs)
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		return vecs, nil
	}
	vecs, err := encoder.RunBatched(ctx, texts, e.batch, func(batch []string) ([][]float32, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.run(batch)
	})
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return vecs, nil
}

// Close frees the model.
func (e *Embedder) Close() error { return e.close() }
