package eval

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd/ask"
)

// Ranker is the retrieval code under evaluation: the /v1/ask pipeline's.
type Ranker interface {
	Rank(ctx context.Context, query string, m ask.Method) (*ask.Ranking, error)
}

// Retrieve runs every query of ds through r with method m and returns the run: per query the
// distinct documents in the order their best chunk ranked (BEIR judges documents, ragd ranks
// chunks), and per stage one latency per query, plus "total".
func Retrieve(ctx context.Context, ds *Dataset, r Ranker, m ask.Method, docID func(uuid.UUID) string) (Run, error) {
	run := Run{Name: string(m), PerQuery: make(map[string][]string, len(ds.Queries)), Stages: map[string][]time.Duration{}}
	for _, q := range ds.Queries {
		t := time.Now()
		ranking, err := r.Rank(ctx, q.Text, m)
		if err != nil {
			return Run{}, fmt.Errorf("eval: query %s: %w", q.ID, err)
		}
		run.Stages["total"] = append(run.Stages["total"], time.Since(t))
		for _, st := range ranking.Timings {
			run.Stages[st.Stage] = append(run.Stages[st.Stage], st.Duration)
		}
		run.PerQuery[q.ID] = docsOf(ranking.Candidates, docID)
	}
	return run, nil
}
