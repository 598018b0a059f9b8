package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ragd/ragd/ask"
)

// LoadConfig says how to drive a running server's /v1/ask.
type LoadConfig struct {
	URL         string // server base URL
	Queries     []Query
	Warmup      int // requests sent first and not measured (model and cache warm-up)
	Concurrency int // requests in flight
	Client      *http.Client
	// Key is the API key sent as a bearer token; empty sends none (a server open on loopback).
	Key string
	// Timeout limits each request, warm-ups included, when Client is nil; 0 sets no limit (a
	// reranker on the pure-Go runtime takes minutes a turn).
	Timeout time.Duration
}

// LoadReport is the latency of /v1/ask: per stage as the server timed it, the server's whole
// turn, the client's round trip, and the work other than reranking.
type LoadReport struct {
	URL         string                    `json:"url"`
	Requests    int                       `json:"requests"`
	Concurrency int                       `json:"concurrency"`
	Stages      map[string]LatencySummary `json:"stages"`
	EndToEnd    LatencySummary            `json:"end_to_end"`
	NonRerank   LatencySummary            `json:"non_rerank"`
	// RatioToRerank is the end-to-end p50 over the rerank stage's p50: how close the turn is to
	// costing only its cross-encoder.
	RatioToRerank float64 `json:"ratio_end_to_end_to_rerank_p50"`
	// Throughput is the measured requests over the wall time they took, all in flight together.
	Throughput float64       `json:"requests_per_s"`
	Elapsed    time.Duration `json:"-"`
	Order      []string      `json:"-"`
}

type askTimings struct {
	Timings []struct {
		Stage string  `json:"stage"`
		MS    float64 `json:"ms"`
	} `json:"timings"`
}

// Load sends every query to /v1/ask, each as a new conversation, and summarizes the latencies.
func Load(ctx context.Context, cfg LoadConfig) (*LoadReport, error) {
	cfg.Concurrency = max(cfg.Concurrency, 1)
	if cfg.Client == nil {
		// Every worker keeps its connection, as a chat front end does: the default transport
		// keeps two idle per host and closed the others after each answer, so at 8 in flight
		// most requests paid for a new TCP connection (on the server's cores too).
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = cfg.Concurrency
		cfg.Client = &http.Client{Timeout: cfg.Timeout, Transport: t}
	}
	for _, q := range cfg.Queries[:min(cfg.Warmup, len(cfg.Queries))] {
		if _, _, err := askOnce(ctx, cfg, q.Text); err != nil {
			return nil, err
		}
	}
	var (
		mu      sync.Mutex
		times   TurnTimes
		e2e     []time.Duration
		firstEr error
	)
	work := make(chan Query)
	start := time.Now()
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range work {
				rt, timings, err := askOnce(ctx, cfg, q.Text)
				mu.Lock()
				if err != nil {
					if firstEr == nil {
						firstEr = err
					}
					mu.Unlock()
					continue
				}
				e2e = append(e2e, rt)
				ts := make(ask.Timings, len(timings.Timings))
				for i, t := range timings.Timings {
					ts[i] = ask.Timing{Stage: t.Stage, Duration: time.Duration(t.MS * float64(time.Millisecond))}
				}
				times.Add(ts)
				mu.Unlock()
			}
		}()
	}
	for _, q := range cfg.Queries {
		select {
		case work <- q:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	if firstEr != nil {
		return nil, firstEr
	}
	r := &LoadReport{URL: cfg.URL, Requests: len(e2e), Concurrency: cfg.Concurrency, Stages: times.Summaries(),
		EndToEnd: Summarize(e2e), NonRerank: Summarize(times.AllButRerank), Order: times.Order,
		Throughput: float64(len(e2e)) / elapsed.Seconds(), Elapsed: elapsed}
	if rr := r.Stages["rerank"].P50; rr > 0 {
		r.RatioToRerank = float64(r.EndToEnd.P50) / float64(rr)
	}
	return r, nil
}

func askOnce(ctx context.Context, cfg LoadConfig, text string) (time.Duration, askTimings, error) {
	body, _ := json.Marshal(map[string]string{"message": text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL+"/v1/ask", bytes.NewReader(body))
	if err != nil {
		return 0, askTimings{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if cfg.Key != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.Key)
	}
	start := time.Now()
	resp, err := cfg.Client.Do(req)
	if err != nil {
		return 0, askTimings{}, fmt.Errorf("eval: /v1/ask: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	rt := time.Since(start)
	if err != nil {
		return 0, askTimings{}, fmt.Errorf("eval: /v1/ask: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, askTimings{}, fmt.Errorf("eval: /v1/ask: %s: %s", resp.Status, b)
	}
	var t askTimings
	if err := json.Unmarshal(b, &t); err != nil {
		return 0, askTimings{}, fmt.Errorf("eval: /v1/ask answer: %w", err)
	}
	return rt, t, nil
}

// WriteTable writes the report as aligned text, stages in the order the server ran them.
func (r *LoadReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%d requests to %s/v1/ask, %d at a time\n\n", r.Requests, r.URL, r.Concurrency)
	fmt.Fprintln(tw, "stage\tp50 ms\tp95 ms\tmean ms")
	row := func(name string, s LatencySummary) {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\n", name, millis(s.P50), millis(s.P95), millis(s.Mean))
	}
	for _, s := range slices.DeleteFunc(slices.Clone(r.Order), func(s string) bool { return s == "total" }) {
		row(s, r.Stages[s])
	}
	row("server total", r.Stages["total"])
	row("all but rerank", r.NonRerank)
	row("client end to end", r.EndToEnd)
	fmt.Fprintf(tw, "\nthroughput: %.1f requests/s (%d in %s)\n", r.Throughput, r.Requests, r.Elapsed.Round(time.Millisecond))
	if r.RatioToRerank > 0 {
		fmt.Fprintf(tw, "\nend-to-end p50 / rerank p50 = %.2f\n", r.RatioToRerank)
	}
	return tw.Flush()
}

// WriteJSON writes the report as indented JSON.
func (r *LoadReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
