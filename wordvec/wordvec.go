package wordvec

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"
	"sync"
)

//go:generate go run ./internal/gen -json=${WORDVEC_JSON} -size=100000 -out=.

// Dim is the number of dimensions of every vector.
const Dim = 100

// recordSize is the bytes of one word in vectors.bin: its float32 scale, then Dim int8 codes.
const recordSize = 4 + Dim

var (
	//go:embed words.txt
	wordsTxt []byte
	//go:embed vectors.bin
	vectorsBin []byte
)

// Table is a quantized word-vector table. It is safe for concurrent use.
type Table struct {
	words   []string
	index   map[string]int32
	records []byte // len(words) records of recordSize bytes
	id      string
}

// embedded is the committed table, parsed on first use. The files are generated and tested, so
// a failure to parse them is a build defect, not a run-time condition.
var embedded = sync.OnceValue(func() *Table {
	t, err := newTable(splitWords(string(wordsTxt)), vectorsBin)
	if err != nil {
		panic(fmt.Sprintf("wordvec: embedded table: %v", err))
	}
	return t
})

// Embedded returns the table compiled into the binary.
func Embedded() *Table { return embedded() }

// Build quantizes vectors (one of Dim values per word, in the order of words) into a table.
func Build(words []string, vectors [][]float32) (*Table, error) {
	if len(words) != len(vectors) {
		return nil, fmt.Errorf("wordvec: %d words and %d vectors", len(words), len(vectors))
	}
	records := make([]byte, 0, len(words)*recordSize)
	for i, v := range vectors {
		if len(v) != Dim {
			return nil, fmt.Errorf("wordvec: %q has %d dimensions, want %d", words[i], len(v), Dim)
		}
		records = appendQuantized(records, v)
	}
	return newTable(words, records)
}

// appendQuantized appends v as a record: scale = max |x| / 127, codes = round(x / scale), so the
// error of every dimension is at most scale/2.
func appendQuantized(dst []byte, v []float32) []byte {
	var top float32
	for _, x := range v {
		top = max(top, float32(math.Abs(float64(x))))
	}
	scale := top / 127
	dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(scale))
	for _, x := range v {
		var q int8
		if scale > 0 {
			q = int8(math.Round(float64(x / scale)))
		}
		dst = append(dst, byte(q))
	}
	return dst
}

// Read reads a table written by WriteTo: the words, one a line, and their records.
func Read(words, vectors io.Reader) (*Table, error) {
	w, err := io.ReadAll(words)
	if err != nil {
		return nil, fmt.Errorf("wordvec: read words: %w", err)
	}
	v, err := io.ReadAll(vectors)
	if err != nil {
		return nil, fmt.Errorf("wordvec: read vectors: %w", err)
	}
	return newTable(splitWords(string(w)), v)
}

// splitWords splits words.txt into its lines.
func splitWords(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func newTable(words []string, records []byte) (*Table, error) {
	if len(records) != len(words)*recordSize {
		return nil, fmt.Errorf("wordvec: %d bytes of vectors for %d words, want %d", len(records), len(words), len(words)*recordSize)
	}
	t := &Table{words: words, index: make(map[string]int32, len(words)), records: records}
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, "\n") {
			return nil, fmt.Errorf("wordvec: bad word %q at line %d", w, i+1)
		}
		if _, dup := t.index[w]; dup {
			return nil, fmt.Errorf("wordvec: word %q twice", w)
		}
		t.index[w] = int32(i)
	}
	// CRC-32C, not a cryptographic hash: it guards against a model read with the wrong table by
	// mistake, and costs about a millisecond where SHA-256 took 30 at first use.
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	var line []byte
	for _, w := range words {
		line = append(append(line[:0], w...), '\n')
		h.Write(line)
	}
	h.Write(records)
	t.id = fmt.Sprintf("crc32c:%08x:%d", h.Sum32(), len(words))
	return t, nil
}

// WriteTo writes the table's words, one a line, and its records.
func (t *Table) WriteTo(words, vectors io.Writer) error {
	var b strings.Builder
	for _, w := range t.words {
		b.WriteString(w)
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(words, b.String()); err != nil {
		return fmt.Errorf("wordvec: write words: %w", err)
	}
	if _, err := vectors.Write(t.records); err != nil {
		return fmt.Errorf("wordvec: write vectors: %w", err)
	}
	return nil
}

// Len returns the number of words in the table.
func (t *Table) Len() int { return len(t.words) }

// ID identifies the table's contents (the CRC-32C of its words and records, and its size): a
// model trained on one table's vectors must not be read with another's.
func (t *Table) ID() string { return t.id }

// clitics are the endings GloVe's tokenizer (Stanford's, as the Penn Treebank's) split off a
// word: "doesn't" is "does" + "n't" there, so the table has "does" and no "doesn't".
var clitics = []string{"n't", "'s", "'m", "'re", "'ll", "'ve", "'d"}

// Forms returns the forms of a lower-case word to look up, in order: the word itself, then the
// word without a clitic ending ("doesn't" -> "does"), as GloVe's tokenizer would have split it.
func Forms(word string) []string {
	forms := []string{word}
	for _, c := range clitics {
		if base, ok := strings.CutSuffix(word, c); ok && base != "" {
			forms = append(forms, base)
			break
		}
	}
	return forms
}

// lookup returns the row of a word, trying its Forms.
func (t *Table) lookup(word string) (int, bool) {
	if i, ok := t.index[word]; ok {
		return int(i), true
	}
	for _, f := range Forms(word)[1:] {
		if i, ok := t.index[f]; ok {
			return int(i), true
		}
	}
	return 0, false
}

// Has reports whether the table has a vector for a lower-case word (or one of its Forms).
func (t *Table) Has(word string) bool {
	_, ok := t.lookup(word)
	return ok
}

// Vector writes the vector of a lower-case word into dst (of length Dim) and reports whether
// the table has it; dst is left alone when it does not.
func (t *Table) Vector(word string, dst []float64) bool {
	i, ok := t.lookup(word)
	if !ok {
		return false
	}
	clear(dst[:Dim])
	t.add(i, dst)
	return true
}

// add adds row i's vector to dst.
func (t *Table) add(i int, dst []float64) {
	r := t.records[i*recordSize : (i+1)*recordSize]
	scale := float64(math.Float32frombits(binary.LittleEndian.Uint32(r)))
	for j, q := range r[4:] {
		dst[j] += scale * float64(int8(q))
	}
}

// Mean writes the mean vector of the words found in the table into dst (of length Dim), in
// their order, and returns how many were found. Unknown words are skipped; when none is found,
// dst is zero.
func (t *Table) Mean(words []string, dst []float64) int {
	clear(dst[:Dim])
	n := 0
	for _, w := range words {
		if i, ok := t.lookup(w); ok {
			t.add(i, dst)
			n++
		}
	}
	for j := range dst[:Dim] {
		if n > 0 {
			dst[j] /= float64(n)
		}
	}
	return n
}
