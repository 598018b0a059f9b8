package encoder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ortCandidates are tried in order when no library path is configured: the dynamic loader's own
// search (which finds /usr/local/lib after ldconfig), then where scripts/setup.sh installs it.
var ortCandidates = []string{"libonnxruntime.so.1", "/usr/local/lib/libonnxruntime.so.1", "/usr/lib/libonnxruntime.so.1"}

var ortEnv struct {
	sync.Mutex
	path string // library the process loaded; ONNX Runtime is process-global
}

// ErrORTLibrary means the ONNX Runtime library was not found or did not load.
var ErrORTLibrary = errors.New("onnxruntime library not loaded")

// LoadORT loads the ONNX Runtime library once per process and returns the path that loaded. A
// later call with another path keeps the first library: one process cannot hold two.
// A path that does not exist is an error even then: it is a mistake whichever library loaded.
func LoadORT(path string) (string, error) {
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("%w: %s: %w", ErrORTLibrary, path, err)
		}
	}
	ortEnv.Lock()
	defer ortEnv.Unlock()
	if ort.IsInitialized() {
		return ortEnv.path, nil
	}
	candidates := ortCandidates
	if path != "" {
		candidates = []string{path}
	}
	var errs []error
	for _, c := range candidates {
		ort.SetSharedLibraryPath(c)
		err := ort.InitializeEnvironment(ort.WithLogLevelError())
		if err == nil {
			ortEnv.path = c
			return c, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", c, err))
	}
	return "", fmt.Errorf("%w: %w", ErrORTLibrary, errors.Join(errs...))
}

// ORTVersion returns the loaded ONNX Runtime's version.
func ORTVersion() string { return ort.GetVersion() }

// Session runs one model's graph on ONNX Runtime. Run may be called concurrently.
type Session struct {
	s      *ort.DynamicAdvancedSession
	inputs []string
	output string
}

// newSession opens m's graph. The graph's inputs must be a subset of input_ids, attention_mask
// and token_type_ids; its first output is the one read.
func newSession(m *Model, threads int) (*Session, error) {
	ins, outs, err := ort.GetInputOutputInfo(m.OnnxFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrModel, m.OnnxFile, err)
	}
	s := &Session{output: outs[0].Name}
	for _, in := range ins {
		switch in.Name {
		case "input_ids", "attention_mask", "token_type_ids":
			s.inputs = append(s.inputs, in.Name)
		default:
			return nil, fmt.Errorf("%w: %s: unexpected graph input %q", ErrModel, m.OnnxFile, in.Name)
		}
	}
	opts, err := sessionOptions(threads)
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	s.s, err = ort.NewDynamicAdvancedSession(m.OnnxFile, s.inputs, []string{s.output}, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrModel, m.OnnxFile, err)
	}
	return s, nil
}

// sessionOptions runs a graph on threads intra-op threads that wait for work asleep, not
// spinning. A spinning thread burns a core that ragd's other work needs (PostgreSQL, the BM25
// index, Go itself): on 2 cores, eval ingest measured ingest at 44-46 ms of ragd's CPU a chunk
// against 41 embedding alone with spinning, 39.5-42 against 38-42 without, and the model alone
// no slower.
func sessionOptions(threads int) (*ort.SessionOptions, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnxruntime session options: %w", err)
	}
	for _, set := range []func() error{
		func() error { return opts.SetIntraOpNumThreads(threads) },
		func() error { return opts.SetInterOpNumThreads(1) },
		func() error { return opts.AddSessionConfigEntry("session.intra_op.allow_spinning", "0") },
	} {
		if err := set(); err != nil {
			opts.Destroy()
			return nil, fmt.Errorf("onnxruntime session options: %w", err)
		}
	}
	return opts, nil
}

// Output is a graph output: flat data and its shape.
type Output struct {
	Data  []float32
	Shape []int64
}

// Run pads the sequences to the longest one, runs the graph, and returns its first output.
func (s *Session) Run(seqs []Sequence) (Output, error) {
	n, width := len(seqs), 0
	for _, q := range seqs {
		width = max(width, len(q.IDs))
	}
	ids := make([]int64, n*width)
	mask := make([]int64, n*width)
	types := make([]int64, n*width)
	for i, q := range seqs {
		copy(ids[i*width:], q.IDs)
		copy(types[i*width:], q.Types)
		for j := range q.IDs {
			mask[i*width+j] = 1
		}
	}
	shape := ort.NewShape(int64(n), int64(width))
	values := make([]ort.Value, 0, len(s.inputs))
	defer func() {
		for _, v := range values {
			v.Destroy()
		}
	}()
	for _, name := range s.inputs {
		data := map[string][]int64{"input_ids": ids, "attention_mask": mask, "token_type_ids": types}[name]
		t, err := ort.NewTensor(shape, data)
		if err != nil {
			return Output{}, fmt.Errorf("onnxruntime input %s: %w", name, err)
		}
		values = append(values, t)
	}
	out := []ort.Value{nil}
	if err := s.s.Run(values, out); err != nil {
		return Output{}, fmt.Errorf("onnxruntime run: %w", err)
	}
	defer out[0].Destroy()
	t, ok := out[0].(*ort.Tensor[float32])
	if !ok {
		return Output{}, fmt.Errorf("onnxruntime output %s is %T, want float32 tensor", s.output, out[0])
	}
	// The tensor's memory belongs to ONNX Runtime and is freed by Destroy: copy it out.
	return Output{Data: append([]float32(nil), t.GetData()...), Shape: t.GetShape()}, nil
}

// Close frees the session.
func (s *Session) Close() error { return s.s.Destroy() }

// ORTModel is a model's graph on ONNX Runtime, shared by concurrent callers: each caller
// tokenizes its own inputs with Tokenizer, and Run puts them into graph runs shared with the
// other callers' (Batcher).
type ORTModel[T any] struct {
	Tokenizer *Tokenizer
	session   *Session
	batcher   *Batcher[T]
}

// OpenORT opens m's tokenizer and graph on ONNX Runtime with cfg's threads and batching. read
// turns one run's output into one result per sequence, in order.
func OpenORT[T any](m *Model, cfg Config, read func(Output, []Sequence) ([]T, error)) (*ORTModel[T], error) {
	tk, err := NewTokenizer(m)
	if err != nil {
		return nil, err
	}
	s, err := newSession(m, cfg.Threads)
	if err != nil {
		return nil, err
	}
	b := NewBatcher(cfg.BatchSize, !cfg.SoloBatches, func(seqs []Sequence) ([]T, error) {
		out, err := s.Run(seqs)
		if err != nil {
			return nil, err
		}
		return read(out, seqs)
	})
	return &ORTModel[T]{Tokenizer: tk, session: s, batcher: b}, nil
}

// Run returns one result per sequence, in order.
func (o *ORTModel[T]) Run(ctx context.Context, seqs []Sequence) ([]T, error) {
	return o.batcher.Run(ctx, seqs)
}

// Close stops the batcher before it frees the graph, so no run is left using a freed session.
func (o *ORTModel[T]) Close() error {
	o.batcher.Close()
	return o.session.Close()
}

// Resolve turns the configured runtime into the one that will run: Auto becomes ORT when the
// library loads and Go otherwise, with the reason in fallback. An explicit ORT that cannot load
// is an error rather than a silent 20x slowdown.
func Resolve(cfg Config) (rt Runtime, fallback string, err error) {
	switch cfg.Runtime {
	case Go:
		return Go, "", nil
	case ORT:
		if _, err := LoadORT(cfg.ORTLibrary); err != nil {
			return "", "", err
		}
		return ORT, "", nil
	default:
		if _, err := LoadORT(cfg.ORTLibrary); err != nil {
			return Go, err.Error(), nil
		}
		return ORT, "", nil
	}
}

// LogStart reports at start-up which runtime, model directory and dimension a model runs with.
func LogStart(cfg Config, role string, m *Model, rt Runtime, fallback string, dim int) {
	attrs := []any{slog.String("role", role), slog.String("runtime", string(rt)), slog.String("dir", m.Dir),
		slog.Int("dim", dim), slog.Int("batch", cfg.BatchSize)}
	if rt == ORT {
		attrs = append(attrs, slog.String("onnxruntime", ORTVersion()), slog.String("library", ortEnv.path),
			slog.Int("threads", cfg.Threads))
	}
	if fallback != "" {
		cfg.Logger.Warn("onnxruntime unavailable, using hugot's pure-Go backend (much slower)",
			slog.String("role", role), slog.String("reason", fallback))
	}
	cfg.Logger.Info("model loaded", attrs...)
}
