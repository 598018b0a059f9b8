package eval

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/modeltest"
)

// testdata holds this package's fixtures; it sits at the module root, shared with other packages.
var testdata = filepath.Join("..", "testdata", "eval")

func TestLoadBEIR(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(testdata, "tinybeir")
	for _, tc := range []struct {
		split string
		want  *Dataset
	}{
		{
			// The qrels list q2 first, but queries keep queries.jsonl order. q3 has no test
			// judgments, so it is left out; the 0 grade is kept as BEIR ships it.
			split: "",
			want: &Dataset{
				Name: "tinybeir",
				Dir:  dir,
				Queries: []Query{
					{ID: "q1", Text: "which language has a garbage collector"},
					{ID: "q2", Text: "relational database"},
				},
				Qrels: Qrels{
					"q1": {"d1": 2, "d2": 1},
					"q2": {"d3": 1, "d1": 0},
				},
			},
		},
		{
			split: "train",
			want: &Dataset{
				Name:    "tinybeir",
				Dir:     dir,
				Queries: []Query{{ID: "q3", Text: "a query with no judgments in the test split"}},
				Qrels:   Qrels{"q3": {"d2": 1}},
			},
		},
	} {
		t.Run("split="+tc.split, func(t *testing.T) {
			t.Parallel()
			ds, err := LoadBEIR(dir, tc.split)
			require.NoError(t, err)
			require.Equal(t, tc.want, ds)
		})
	}
}

func TestLoadBEIRErrors(t *testing.T) {
	t.Parallel()
	const (
		queries = `{"_id": "q1", "text": "one"}` + "\n" + `{"_id": "q2", "text": "two"}` + "\n"
		qrels   = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n"
	)
	for _, tc := range []struct {
		name  string
		files map[string]string // path in the BEIR dir -> content
		split string
		want  string // in the error
		is    error  // matched with errors.Is when set
	}{
		{
			name:  "missing qrels",
			files: map[string]string{"queries.jsonl": queries},
			want:  filepath.Join("qrels", "test.tsv"),
			is:    fs.ErrNotExist,
		},
		{
			name:  "missing split",
			files: map[string]string{"queries.jsonl": queries, "qrels/test.tsv": qrels},
			split: "dev",
			want:  filepath.Join("qrels", "dev.tsv"),
			is:    fs.ErrNotExist,
		},
		{
			name:  "missing queries",
			files: map[string]string{"qrels/test.tsv": qrels},
			want:  "queries.jsonl",
			is:    fs.ErrNotExist,
		},
		{
			name: "malformed query",
			files: map[string]string{
				"queries.jsonl":  `{"_id": "q1", "text": "one"}` + "\n" + `{"_id": "q2", "text": ` + "\n",
				"qrels/test.tsv": qrels,
			},
			want: "queries.jsonl:2: malformed JSON",
		},
		{
			name: "query without id",
			files: map[string]string{
				"queries.jsonl":  queries + "\n" + `{"text": "three"}` + "\n",
				"qrels/test.tsv": qrels,
			},
			want: "queries.jsonl:4: missing _id", // line 3 is blank and skipped, but counted
		},
		{
			name: "duplicate query",
			files: map[string]string{
				"queries.jsonl":  queries + `{"_id": "q1", "text": "again"}` + "\n",
				"qrels/test.tsv": qrels,
			},
			want: `queries.jsonl:3: duplicate query id "q1"`,
		},
		{
			name: "qrels row with two columns",
			files: map[string]string{
				"queries.jsonl":  queries,
				"qrels/test.tsv": qrels + "q2\td3\n",
			},
			want: "test.tsv:4: want 3 tab-separated columns",
		},
		{
			name: "qrels score not a number",
			files: map[string]string{
				"queries.jsonl":  queries,
				"qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\thigh\n",
			},
			want: "test.tsv:2: score",
		},
		{
			name: "judged query missing from queries",
			files: map[string]string{
				"queries.jsonl":  queries,
				"qrels/test.tsv": qrels + "q9\td1\t1\nq8\td1\t1\n",
			},
			want: "qrels/test.tsv judges queries missing from queries.jsonl: q8, q9",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, content := range tc.files {
				path := filepath.Join(dir, name)
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
			}
			_, err := LoadBEIR(dir, tc.split)
			require.ErrorContains(t, err, tc.want)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
		})
	}
}

// TestSciFact checks the loaders against the real BEIR SciFact, when the checkout has the shared
// data next to it, since counts that match the published ones catch what tiny fixtures cannot.
func TestSciFact(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(modeltest.SharedDir(t), "data", "scifact")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("SciFact not found (%v): tests expect ../shared beside the checkout", err)
	}

	ds, err := LoadBEIR(dir, "")
	require.NoError(t, err)
	require.Equal(t, "scifact", ds.Name)
	require.Len(t, ds.Queries, 300)
	pairs := 0
	for _, docs := range ds.Qrels {
		pairs += len(docs)
	}
	require.Equal(t, 339, pairs)
}
