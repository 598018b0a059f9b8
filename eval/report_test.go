package eval

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "update the golden files in testdata/eval")

func TestScore(t *testing.T) {
	t.Parallel()
	ds := &Dataset{
		Queries: []Query{{ID: "q1"}, {ID: "q2"}, {ID: "q3"}},
		Qrels:   Qrels{"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}},
	}
	run := Run{
		Name: "bm25",
		PerQuery: map[string][]string{
			"q1": {"a"},      // nDCG@1 = nDCG@3 = 1, R@1 = R@3 = 1
			"q2": {"x", "b"}, // nDCG@1 = 0, nDCG@3 = 1/log2(3), R@1 = 0, R@3 = 1
			// q3 has no results: 0 everywhere, and still counts in the mean.
			"q9": {"a"}, // not in the dataset: ignored
		},
		Stages: map[string][]time.Duration{"retrieve": {3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}},
	}

	got := Score(ds, run, []int{1, 3}, []int{1, 3})
	require.Equal(t, "bm25", got.Name)
	require.Equal(t, 3, got.Queries)
	require.Len(t, got.NDCG, 2)
	require.InDelta(t, 1.0/3, got.NDCG[1], 1e-12)
	require.InDelta(t, (1+1/math.Log2(3))/3, got.NDCG[3], 1e-12)
	require.Equal(t, map[int]float64{1: 1.0 / 3, 3: 2.0 / 3}, got.Recall)
	// Nearest rank of 3 values: p50 is rank ceil(1.5) = 2, p95 rank ceil(2.85) = 3.
	require.Equal(t, map[string]LatencySummary{
		"retrieve": {P50: 2 * time.Millisecond, P95: 3 * time.Millisecond, Mean: 2 * time.Millisecond},
	}, got.Latency)

	defaults := Score(ds, Run{}, nil, nil)
	require.Equal(t, map[int]float64{1: 0, 3: 0, 5: 0, 10: 0}, defaults.NDCG)
	require.Equal(t, map[int]float64{1: 0, 3: 0, 5: 0, 10: 0, 40: 0}, defaults.Recall)

	// No queries must not divide by zero: NaN would also break WriteJSON.
	empty := Score(&Dataset{}, run, nil, nil)
	require.Zero(t, empty.NDCG[10])
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	ms := func(ns ...int) []time.Duration {
		var ds []time.Duration
		for _, n := range ns {
			ds = append(ds, time.Duration(n)*time.Millisecond)
		}
		return ds
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want LatencySummary
	}{
		{"empty", nil, LatencySummary{}},
		{"one", ms(7), LatencySummary{P50: 7 * time.Millisecond, P95: 7 * time.Millisecond, Mean: 7 * time.Millisecond}},
		// 10 values: p50 is rank ceil(5) = 5, p95 rank ceil(9.5) = 10; mean 55/10 = 5.5.
		{
			"ten unsorted", ms(10, 1, 9, 2, 8, 3, 7, 4, 6, 5),
			LatencySummary{P50: 5 * time.Millisecond, P95: 10 * time.Millisecond, Mean: 5500 * time.Microsecond},
		},
		// 20 values: p50 is rank 10, p95 rank ceil(19) = 19; mean 210/20 = 10.5.
		{
			"twenty", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20),
			LatencySummary{P50: 10 * time.Millisecond, P95: 19 * time.Millisecond, Mean: 10500 * time.Microsecond},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, Summarize(tc.in))
		})
	}
}

func TestReportGolden(t *testing.T) {
	t.Parallel()
	r := testReport(t)
	for _, tc := range []struct {
		golden string
		write  func(*bytes.Buffer) error
	}{
		{"report.golden.txt", func(b *bytes.Buffer) error { return r.WriteTable(b) }},
		{"report.golden.json", func(b *bytes.Buffer) error { return r.WriteJSON(b) }},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			t.Parallel()
			var got bytes.Buffer
			require.NoError(t, tc.write(&got))
			checkGolden(t, tc.golden, got.Bytes())
		})
	}
}

// testReport scores two fixed runs on tinybeir, so the golden files cover the path from the
// dataset to the report and not just the formatting.
func testReport(t *testing.T) Report {
	t.Helper()
	ds, err := LoadBEIR(filepath.Join(testdata, "tinybeir"), "test")
	require.NoError(t, err)
	ms := time.Millisecond
	bm25 := Run{
		Name:     "bm25",
		PerQuery: map[string][]string{"q1": {"d2", "d3", "d1"}, "q2": {"d3"}},
		Stages:   map[string][]time.Duration{"retrieve": {2 * ms, 1250 * time.Microsecond}},
	}
	hybrid := Run{
		Name:     "hybrid",
		PerQuery: map[string][]string{"q1": {"d1", "d2"}, "q2": {"d1", "d3"}},
		Stages: map[string][]time.Duration{
			"retrieve": {3 * ms, 4 * ms},
			"embed":    {12 * ms, 15 * ms},
			"fuse":     {100 * time.Microsecond, 300 * time.Microsecond},
		},
	}
	return Report{
		Dataset: ds.Name,
		Split:   "test",
		Corpus:  3,
		Results: []Result{Score(ds, bm25, nil, nil), Score(ds, hybrid, nil, nil)},
		Notes:   []string{"latencies measured on a laptop"},
	}
}

// checkGolden compares got with testdata/eval/name, or rewrites the file under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testdata, name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./eval -update to create it")
	require.Equal(t, string(want), string(got))
}
