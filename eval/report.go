package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"
)

// Default cutoffs. The nDCG ones are those BEIR papers report; R@40 is kept as well because it
// bounds what a later stage, such as a reranker reading the first 40 candidates, can recover.
var (
	DefaultNDCGKs   = []int{1, 3, 5, 10}
	DefaultRecallKs = []int{1, 3, 5, 10, 40}
)

// Run is what one retrieval configuration returned for the queries of a dataset.
type Run struct {
	Name string // e.g. "bm25"
	// PerQuery maps a query id to its ranked doc ids, best first and distinct.
	PerQuery map[string][]string
	// Stages maps a stage name ("embed", "retrieve", ...) to one latency per query.
	Stages map[string][]time.Duration
}

// Result is a run's scores over a dataset: means over its queries, and latency per stage.
type Result struct {
	Name    string                    `json:"name"`
	Queries int                       `json:"queries"`
	NDCG    map[int]float64           `json:"ndcg"`   // cutoff k -> mean nDCG@k
	Recall  map[int]float64           `json:"recall"` // cutoff k -> mean Recall@k
	Latency map[string]LatencySummary `json:"latency"`
}

// LatencySummary describes the latencies of one stage over the queries of a run.
type LatencySummary struct {
	P50  time.Duration
	P95  time.Duration
	Mean time.Duration
}

// MarshalJSON writes the durations as fractional milliseconds, the unit latency is read in,
// rather than as nanosecond integers.
func (s LatencySummary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		P50  float64 `json:"p50_ms"`
		P95  float64 `json:"p95_ms"`
		Mean float64 `json:"mean_ms"`
	}{millis(s.P50), millis(s.P95), millis(s.Mean)})
}

// Score scores run against the judgments of ds at the given cutoffs (DefaultNDCGKs and
// DefaultRecallKs when nil). Means are over all of ds.Queries: a query the run has no results
// for scores 0, as it would in BEIR, instead of being left out.
func Score(ds *Dataset, run Run, ndcgKs, recallKs []int) Result {
	if ndcgKs == nil {
		ndcgKs = DefaultNDCGKs
	}
	if recallKs == nil {
		recallKs = DefaultRecallKs
	}
	res := Result{
		Name:    run.Name,
		Queries: len(ds.Queries),
		NDCG:    make(map[int]float64, len(ndcgKs)),
		Recall:  make(map[int]float64, len(recallKs)),
		Latency: make(map[string]LatencySummary, len(run.Stages)),
	}
	for _, k := range ndcgKs {
		res.NDCG[k] = 0
	}
	for _, k := range recallKs {
		res.Recall[k] = 0
	}
	for _, q := range ds.Queries {
		ranked, rel := run.PerQuery[q.ID], ds.Qrels[q.ID]
		for k := range res.NDCG {
			res.NDCG[k] += NDCG(ranked, rel, k)
		}
		for k := range res.Recall {
			res.Recall[k] += Recall(ranked, rel, k)
		}
	}
	if n := float64(len(ds.Queries)); n > 0 {
		for k := range res.NDCG {
			res.NDCG[k] /= n
		}
		for k := range res.Recall {
			res.Recall[k] /= n
		}
	}
	for stage, lat := range run.Stages {
		res.Latency[stage] = Summarize(lat)
	}
	return res
}

// Summarize returns the nearest-rank percentiles and the mean of lat.
func Summarize(lat []time.Duration) LatencySummary {
	if len(lat) == 0 {
		return LatencySummary{}
	}
	sorted := slices.Sorted(slices.Values(lat))
	var sum time.Duration
	for _, d := range sorted {
		sum += d
	}
	return LatencySummary{
		P50:  percentile(sorted, 50),
		P95:  percentile(sorted, 95),
		Mean: sum / time.Duration(len(sorted)),
	}
}

// percentile returns the p-th percentile of the non-empty ascending sorted by the nearest-rank
// method: the value at 1-based rank ceil(p/100 * n). Unlike interpolation it always reports a
// latency that was observed. The rank is computed in integers so that, say, p95 of 20 values is
// rank 19 exactly, not 20 through floating-point error.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// Report is the outcome of evaluating one or more runs on a dataset split.
type Report struct {
	Dataset string   `json:"dataset"`
	Split   string   `json:"split"`
	Corpus  int      `json:"corpus"` // documents in the corpus
	Results []Result `json:"results"`
	Notes   []string `json:"notes,omitempty"` // caveats worth keeping next to the numbers
}

// WriteTable writes r for a terminal: a table of scores with one row per result, a table of p50
// and p95 latency in milliseconds per result and stage, then the notes. Cutoff columns are the
// union of the results' cutoffs in ascending order; stages are sorted by name, because a Run
// keeps them in a map.
func (r Report) WriteTable(w io.Writer) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "dataset %s, split %s, corpus %d docs\n\n", r.Dataset, r.Split, r.Corpus)

	ndcgKs, recallKs := cutoffs(r.Results)
	fmt.Fprint(tw, "run\tqueries")
	for _, k := range ndcgKs {
		fmt.Fprintf(tw, "\tnDCG@%d", k)
	}
	for _, k := range recallKs {
		fmt.Fprintf(tw, "\tR@%d", k)
	}
	fmt.Fprintln(tw)
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%d", res.Name, res.Queries)
		for _, k := range ndcgKs {
			fmt.Fprintf(tw, "\t%s", score(res.NDCG, k))
		}
		for _, k := range recallKs {
			fmt.Fprintf(tw, "\t%s", score(res.Recall, k))
		}
		fmt.Fprintln(tw)
	}

	header := true
	for _, res := range r.Results {
		for _, stage := range slices.Sorted(maps.Keys(res.Latency)) {
			if header {
				fmt.Fprint(tw, "\nrun\tstage\tp50 ms\tp95 ms\n")
				header = false
			}
			l := res.Latency[stage]
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\n", res.Name, stage, millis(l.P50), millis(l.P95))
		}
	}

	if len(r.Notes) > 0 {
		fmt.Fprint(tw, "\nnotes:\n")
		for _, n := range r.Notes {
			fmt.Fprintf(tw, "- %s\n", n)
		}
	}
	// The table is built in buf so that a failing w surfaces once, from the single write below.
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := buf.WriteTo(w)
	return err
}

// WriteJSON writes r as indented JSON with snake_case field names. Cutoff maps are keyed by k
// as a string ("10"), and latencies are in milliseconds.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// cutoffs returns the nDCG and recall cutoffs that any of results has, ascending.
func cutoffs(results []Result) (ndcg, recall []int) {
	for _, res := range results {
		ndcg = append(ndcg, slices.Collect(maps.Keys(res.NDCG))...)
		recall = append(recall, slices.Collect(maps.Keys(res.Recall))...)
	}
	slices.Sort(ndcg)
	slices.Sort(recall)
	return slices.Compact(ndcg), slices.Compact(recall)
}

// score formats m[k] for the table, or "-" for a cutoff this result was not scored at.
func score(m map[int]float64, k int) string {
	v, ok := m[k]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.4f", v)
}

func millis(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}
