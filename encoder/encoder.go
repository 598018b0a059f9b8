// Package encoder loads a transformer encoder directory (an ONNX graph with its tokenizer, as
// published for sentence-transformers and cross-encoder models) and decides which runtime executes
// it: ONNX Runtime when its shared library can be loaded, hugot's pure-Go backend otherwise.
//
// Both runtimes share hugot's Go tokenizer, so they see identical token ids; only the graph
// executor differs. hugot's own ONNX Runtime build needs the Rust tokenizers library, which this
// project cannot build, so the ONNX Runtime path drives the graph through onnxruntime_go (the
// binding hugot itself uses) and leaves the Go path to hugot's pipelines.
package encoder

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Runtime names the engine that executes a model's graph.
type Runtime string

const (
	// Auto picks ORT when its library loads and Go otherwise.
	Auto Runtime = "auto"
	// ORT is ONNX Runtime through its C library (fast: the default in production).
	ORT Runtime = "onnxruntime"
	// Go is hugot's pure-Go backend (no C library; roughly 20x slower on these models).
	Go Runtime = "go"
)

// ErrModel means a model directory is missing, incomplete or not a model ragd can run.
var ErrModel = errors.New("unusable model directory")

// Config says which model to load and how to run it.
type Config struct {
	// Dir holds model.onnx (or model_quantized.onnx), tokenizer.json and config.json.
	Dir string
	// Runtime is auto, onnxruntime or go.
	Runtime Runtime
	// ORTLibrary is the path of libonnxruntime.so; empty searches the loader path and /usr/local/lib.
	ORTLibrary string
	// BatchSize is how many texts (or pairs) one graph run takes.
	BatchSize int
	// Threads is ONNX Runtime's intra-op thread count; 0 uses every core.
	Threads int
	// SoloBatches keeps every model run to one caller's inputs, as before runs were shared
	// between concurrent callers (see Batcher); for measuring what sharing gains.
	SoloBatches bool
	Logger      *slog.Logger
}

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if c.Runtime == "" {
		c.Runtime = Auto
	}
	if c.BatchSize == 0 {
		c.BatchSize = 32
	}
	if c.Threads == 0 {
		c.Threads = runtime.NumCPU()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate checks the settings (not the directory: Inspect does that).
func (c Config) Validate() error {
	switch c.Runtime {
	case Auto, ORT, Go:
	default:
		return fmt.Errorf("runtime %q: want auto, onnxruntime or go", c.Runtime)
	}
	if c.BatchSize < 1 || c.BatchSize > 1024 {
		return fmt.Errorf("batch size %d out of range 1..1024", c.BatchSize)
	}
	if c.Threads < 1 {
		return fmt.Errorf("threads %d must be at least 1", c.Threads)
	}
	return nil
}

// Model describes a model directory.
type Model struct {
	Dir      string
	OnnxFile string // absolute path of the graph
	// HiddenSize is config.json's hidden_size: the embedding dimension of encoders.
	HiddenSize int
	// MaxPositions is config.json's max_position_embeddings: the longest input the graph takes.
	MaxPositions int
	// Architecture is the first of config.json's architectures, e.g. BertModel or
	// BertForSequenceClassification.
	Architecture string
}

// Inspect checks that dir holds a loadable model and reads its configuration.
func Inspect(dir string) (*Model, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: no directory given", ErrModel)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrModel, dir, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrModel, dir)
	}
	m := &Model{Dir: abs}
	for _, name := range []string{"model.onnx", "model_quantized.onnx"} {
		if _, err := os.Stat(filepath.Join(abs, name)); err == nil {
			m.OnnxFile = filepath.Join(abs, name)
			break
		}
	}
	if m.OnnxFile == "" {
		return nil, fmt.Errorf("%w: %s has no model.onnx or model_quantized.onnx", ErrModel, dir)
	}
	if _, err := os.Stat(filepath.Join(abs, "tokenizer.json")); err != nil {
		return nil, fmt.Errorf("%w: %s has no tokenizer.json", ErrModel, dir)
	}
	raw, err := os.ReadFile(filepath.Join(abs, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("%w: %s has no readable config.json: %w", ErrModel, dir, err)
	}
	var cfg struct {
		HiddenSize    int      `json:"hidden_size"`
		MaxPositions  int      `json:"max_position_embeddings"`
		Architectures []string `json:"architectures"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("%w: %s/config.json: %w", ErrModel, dir, err)
	}
	if cfg.HiddenSize <= 0 || cfg.MaxPositions <= 0 {
		return nil, fmt.Errorf("%w: %s/config.json lacks hidden_size or max_position_embeddings", ErrModel, dir)
	}
	m.HiddenSize, m.MaxPositions = cfg.HiddenSize, cfg.MaxPositions
	if len(cfg.Architectures) > 0 {
		m.Architecture = cfg.Architectures[0]
	}
	return m, nil
}

// IsCrossEncoder reports whether the model scores pairs (a sequence-classification head) rather
// than embedding texts.
func (m *Model) IsCrossEncoder() bool {
	return strings.HasSuffix(m.Architecture, "ForSequenceClassification")
}

// Kind is what a model computes.
type Kind string

const (
	Embedding    Kind = "embedding"     // a vector per text
	CrossEncoder Kind = "cross-encoder" // a relevance score per (query, passage) pair
)

// Prepare does what opening any model starts with: it fills and validates cfg, inspects the
// directory, checks that the model is of the wanted kind, and resolves the runtime (with the
// reason when Auto fell back to Go).
func Prepare(cfg Config, want Kind) (Config, *Model, Runtime, string, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return cfg, nil, "", "", err
	}
	m, err := Inspect(cfg.Dir)
	if err != nil {
		return cfg, nil, "", "", err
	}
	if got := m.Kind(); got != want {
		return cfg, nil, "", "", fmt.Errorf("%w: %s holds a model of kind %s (architecture %s), want kind %s", ErrModel, cfg.Dir, got, m.Architecture, want)
	}
	rt, fallback, err := Resolve(cfg)
	if err != nil {
		return cfg, nil, "", "", err
	}
	return cfg, m, rt, fallback, nil
}

// Kind says what the model computes, from its architecture.
func (m *Model) Kind() Kind {
	if m.IsCrossEncoder() {
		return CrossEncoder
	}
	return Embedding
}
