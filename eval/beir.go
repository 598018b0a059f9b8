// Package eval scores retrieval on BEIR datasets: it loads queries and relevance judgments,
// streams the corpus, computes nDCG and recall the way pytrec_eval (and so BEIR) computes them,
// and reports the scores next to per-stage latencies.
package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Query is one BEIR query.
type Query struct {
	ID   string
	Text string
}

// Qrels maps a query id to the judged doc ids and their graded relevance. Grades <= 0 are kept
// as BEIR ships them, but the metrics treat them as not relevant.
type Qrels map[string]map[string]int

// Dataset is the part of a BEIR dataset that is held in memory: the judged queries of one split.
// The corpus is not: ingest streams it into the store (ingest.Walk reads JSONL corpora).
type Dataset struct {
	Name string // base name of Dir, e.g. "scifact"
	Dir  string
	// Queries are the queries that have qrels in the split, in queries.jsonl order. Queries
	// without judgments are left out: they would score 0 whatever the retriever returned.
	Queries []Query
	Qrels   Qrels
}

// DefaultSplit is the qrels split LoadBEIR reads when none is given; BEIR reports on it.
const DefaultSplit = "test"

// maxLine bounds one JSONL or TSV line. bufio.Scanner's 64 KiB default is too small for some
// BEIR corpora; the buffer only grows to this size when a line needs it.
const maxLine = 64 << 20

// LoadBEIR reads the queries and the qrels of split (DefaultSplit when empty) from the BEIR
// directory dir, which holds queries.jsonl and qrels/<split>.tsv.
//
// It fails when a file is missing or malformed, and when the qrels judge a query that
// queries.jsonl lacks, since such a query could not be run and would silently lower the mean.
func LoadBEIR(dir, split string) (*Dataset, error) {
	if split == "" {
		split = DefaultSplit
	}
	qrels, err := readQrels(filepath.Join(dir, "qrels", split+".tsv"))
	if err != nil {
		return nil, fmt.Errorf("eval: loading qrels: %w", err)
	}
	all, err := readQueries(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("eval: loading queries: %w", err)
	}

	ds := &Dataset{Name: filepath.Base(dir), Dir: dir, Qrels: qrels}
	if abs, err := filepath.Abs(dir); err == nil {
		ds.Name = filepath.Base(abs) // so that "." still names the dataset
	}
	found := make(map[string]bool, len(qrels))
	for _, q := range all {
		if _, ok := qrels[q.ID]; ok {
			ds.Queries = append(ds.Queries, q)
			found[q.ID] = true
		}
	}
	if len(found) < len(qrels) {
		var missing []string
		for id := range qrels {
			if !found[id] {
				missing = append(missing, id)
			}
		}
		slices.Sort(missing)
		return nil, fmt.Errorf("eval: qrels/%s.tsv judges queries missing from queries.jsonl: %s",
			split, abbreviate(missing, 5))
	}
	return ds, nil
}

// jsonRecord is a line of queries.jsonl.
type jsonRecord struct {
	ID       string         `json:"_id"`
	Title    string         `json:"title"`
	Text     string         `json:"text"`
	Metadata map[string]any `json:"metadata"`
}

func decodeRecord(line []byte) (jsonRecord, error) {
	var r jsonRecord
	if err := json.Unmarshal(line, &r); err != nil {
		return r, fmt.Errorf("malformed JSON: %w", err)
	}
	if r.ID == "" {
		return r, errors.New("missing _id")
	}
	return r, nil
}

func readQueries(path string) ([]Query, error) {
	var qs []Query
	seen := make(map[string]bool)
	err := eachLine(path, func(line []byte) error {
		r, err := decodeRecord(line)
		if err != nil {
			return err
		}
		// A repeated id would be scored twice and weigh double in every mean.
		if seen[r.ID] {
			return fmt.Errorf("duplicate query id %q", r.ID)
		}
		seen[r.ID] = true
		qs = append(qs, Query{ID: r.ID, Text: r.Text})
		return nil
	})
	return qs, err
}

// readQrels reads a BEIR qrels TSV: an optional "query-id corpus-id score" header, then one
// judgment per row. A pair judged twice keeps its last grade, as BEIR's loader does.
func readQrels(path string) (Qrels, error) {
	qrels := make(Qrels)
	first := true
	err := eachLine(path, func(line []byte) error {
		fields := strings.Split(string(line), "\t")
		if first {
			first = false
			if strings.TrimSpace(fields[0]) == "query-id" {
				return nil
			}
		}
		if len(fields) != 3 {
			return fmt.Errorf("want 3 tab-separated columns (query-id, corpus-id, score), got %d", len(fields))
		}
		qid, did := strings.TrimSpace(fields[0]), strings.TrimSpace(fields[1])
		if qid == "" || did == "" {
			return errors.New("empty query-id or corpus-id")
		}
		score, err := strconv.Atoi(strings.TrimSpace(fields[2]))
		if err != nil {
			return fmt.Errorf("score: %w", err)
		}
		if qrels[qid] == nil {
			qrels[qid] = make(map[string]int)
		}
		qrels[qid][did] = score
		return nil
	})
	return qrels, err
}

// eachLine calls fn with every non-blank line of the file at path; blank lines, such as a
// trailing one, carry nothing. Errors are prefixed with path and the 1-based line number so a
// bad row in a large file can be found.
func eachLine(path string, fn func(line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()

	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes() // ScanLines already dropped the "\n" or "\r\n"
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", path, n+1, err)
	}
	return nil
}

// abbreviate joins the first n ids and says how many more there are, so that an error about
// thousands of ids stays readable.
func abbreviate(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:n], ", "), len(ids)-n)
}
