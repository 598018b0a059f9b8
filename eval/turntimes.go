package eval

import (
	"time"

	"github.com/ragd/ragd/ask"
)

// TurnTimes collects the stage timings of turns through the /v1/ask pipeline and each turn's
// all-but-rerank: its total less reranking, the work ragd adds to its cross-encoder. Every eval
// that times turns (ask, scale, conversations) collects them here, so they mean the same.
type TurnTimes struct {
	Order        []string // stages in the order they first ran
	Stages       map[string][]time.Duration
	AllButRerank []time.Duration
}

// Add records one turn's timings and returns its all-but-rerank.
func (tt *TurnTimes) Add(ts ask.Timings) time.Duration {
	if tt.Stages == nil {
		tt.Stages = map[string][]time.Duration{}
	}
	var total, rerank time.Duration
	for _, t := range ts {
		if _, ok := tt.Stages[t.Stage]; !ok {
			tt.Order = append(tt.Order, t.Stage)
		}
		tt.Stages[t.Stage] = append(tt.Stages[t.Stage], t.Duration)
		switch t.Stage {
		case "total":
			total = t.Duration
		case "rerank":
			rerank = t.Duration
		}
	}
	abr := total - rerank
	tt.AllButRerank = append(tt.AllButRerank, abr)
	return abr
}

// Summaries summarizes each stage over the turns it ran in.
func (tt *TurnTimes) Summaries() map[string]LatencySummary {
	out := make(map[string]LatencySummary, len(tt.Stages))
	for s, ds := range tt.Stages {
		out[s] = Summarize(ds)
	}
	return out
}

// StageLatency is one stage's latency over the turns that ran it (a search runs only on the
// turns whose plan has it, such as focus-bm25 on a turn that leans on the conversation).
type StageLatency struct {
	Stage   string         `json:"stage"`
	Turns   int            `json:"turns"`
	Latency LatencySummary `json:"latency"`
}

// TurnLatency is the latency of a group of carry's turns (turn 1, later turns).
type TurnLatency struct {
	Group        string         `json:"group"`
	Turns        int            `json:"turns"`
	AllButRerank LatencySummary `json:"all_but_rerank"`
	Stages       []StageLatency `json:"stages"` // in the order they first ran
}

// Latency summarizes tt as the group named group.
func (tt *TurnTimes) Latency(group string) TurnLatency {
	l := TurnLatency{Group: group, Turns: len(tt.AllButRerank), AllButRerank: Summarize(tt.AllButRerank)}
	for _, s := range tt.Order {
		l.Stages = append(l.Stages, StageLatency{Stage: s, Turns: len(tt.Stages[s]), Latency: Summarize(tt.Stages[s])})
	}
	return l
}
