package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/ragd/ragd/wordvec"
)

// FormatVersion is the version of the JSON model format that Save writes and Load reads.
const FormatVersion = 1

// file is the JSON form of a model. Hashed weights are rows of [bucket, w_label0, w_label1, …]
// holding only buckets that training kept, which is what makes a 2^18-bucket model small.
type file struct {
	Version     int                  `json:"version"`
	Labels      []string             `json:"labels"`
	Options     Options              `json:"options"`
	Temperature float64              `json:"temperature"`
	Bias        []float64            `json:"bias"`
	Extra       map[string][]float64 `json:"extra"`
	// WordVectors are the weights of the word-vector block (one row of per-label weights per
	// dimension) and the ID of the wordvec table they were trained with; absent when
	// Options.WordVectors is 0.
	WordVectors      [][]float64 `json:"word_vectors,omitempty"`
	WordVectorsTable string      `json:"word_vectors_table,omitempty"`
	Buckets          [][]float64 `json:"buckets"`
}

// Save writes the model as JSON: one line per hashed bucket, in bucket order, so the same
// model always gives the same bytes and a retrained model gives a readable diff.
func (m *Model) Save(w io.Writer) error {
	bw := bufio.NewWriter(w)
	header := []struct {
		key string
		val any
	}{
		{"version", FormatVersion},
		{"labels", m.labels},
		{"options", m.opts},
		{"temperature", m.temperature},
		{"bias", m.bias},
		{"extra", m.extra}, // encoding/json sorts map keys
	}
	if m.dense != nil {
		header = append(header, []struct {
			key string
			val any
		}{{"word_vectors", m.dense}, {"word_vectors_table", wordvec.Embedded().ID()}}...)
	}
	bw.WriteString("{\n")
	for _, h := range header {
		b, err := json.Marshal(h.val)
		if err != nil {
			return fmt.Errorf("classify: encode %s: %w", h.key, err)
		}
		fmt.Fprintf(bw, "%q: %s,\n", h.key, b)
	}
	bw.WriteString("\"buckets\": [")
	keys := make([]uint32, 0, len(m.weights))
	for k := range m.weights {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	row := make([]float64, 1+len(m.labels))
	for i, k := range keys {
		row[0] = float64(k)
		copy(row[1:], m.weights[k])
		b, err := json.Marshal(row)
		if err != nil {
			return fmt.Errorf("classify: encode bucket %d: %w", k, err)
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n")
		bw.Write(b)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// Load reads a model that Save wrote.
func Load(r io.Reader) (*Model, error) {
	var f file
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("classify: decode model: %w", err)
	}
	if f.Version != FormatVersion {
		return nil, fmt.Errorf("classify: model format version %d, want %d", f.Version, FormatVersion)
	}
	nc := len(f.Labels)
	if nc < 2 || len(f.Bias) != nc {
		return nil, fmt.Errorf("classify: model has %d labels and %d biases", nc, len(f.Bias))
	}
	if err := f.Options.validate(); err != nil {
		return nil, err
	}
	if f.Temperature <= 0 {
		return nil, fmt.Errorf("classify: temperature %g must be positive", f.Temperature)
	}
	m := &Model{
		labels:      f.Labels,
		opts:        f.Options,
		temperature: f.Temperature,
		bias:        f.Bias,
		weights:     make(map[uint32][]float64, len(f.Buckets)),
		extra:       f.Extra,
	}
	if m.extra == nil {
		m.extra = map[string][]float64{}
	}
	for name, w := range m.extra {
		if len(w) != nc {
			return nil, fmt.Errorf("classify: extra feature %q has %d weights, want %d", name, len(w), nc)
		}
	}
	switch {
	case f.Options.WordVectors == 0 && (f.WordVectors != nil || f.WordVectorsTable != ""):
		return nil, errors.New("classify: model has word-vector weights but its word_vectors option is 0")
	case f.Options.WordVectors != 0 && len(f.WordVectors) != wordvec.Dim:
		return nil, fmt.Errorf("classify: model has %d word-vector rows, want %d", len(f.WordVectors), wordvec.Dim)
	case f.Options.WordVectors != 0 && f.WordVectorsTable != wordvec.Embedded().ID():
		return nil, fmt.Errorf("classify: model was trained with word-vector table %q, this binary has %q", f.WordVectorsTable, wordvec.Embedded().ID())
	}
	for _, row := range f.WordVectors {
		if len(row) != nc {
			return nil, fmt.Errorf("classify: word-vector row has %d weights, want %d", len(row), nc)
		}
	}
	m.dense = f.WordVectors
	limit := float64(uint32(1) << f.Options.HashBits)
	for _, row := range f.Buckets {
		if len(row) != 1+nc || row[0] < 0 || row[0] >= limit || row[0] != float64(uint32(row[0])) {
			return nil, fmt.Errorf("classify: bad bucket row %v", row)
		}
		m.weights[uint32(row[0])] = row[1:]
	}
	return m, nil
}

// LoadBytes reads a model from bytes, such as a file embedded with go:embed.
func LoadBytes(b []byte) (*Model, error) { return Load(bytes.NewReader(b)) }
