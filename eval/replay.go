package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
)

// Asker is the /v1/ask turn pipeline.
type Asker interface {
	Ranker
	Ask(ctx context.Context, req ask.Request) (*ask.Turn, error)
}

// Replier records the agent's reply after each turn, as a chat UI does.
type Replier interface {
	RecordReply(ctx context.Context, conv, msg uuid.UUID, content string) (*ragd.Message, error)
}

// Carry is the strategy that replays conversations through ragd's own conversation state.
const Carry = "carry"

// Strategies are the compared strategies in report order: the three MTRAG query forms run as
// single questions, and carry.
var Strategies = append(append([]string(nil), QueryForms...), Carry)

// ReplayMTRAG runs every strategy on a domain. The query forms are single questions through the
// pipeline's ranking (rewrite is the human rewrite: a reference ragd does not have at run time).
// carry replays each conversation through Ask, user turns in order with the agent's reply
// recorded after each, and ranks a judged turn by the turn's whole ranking (deeper than the
// sources a turn returns, so every strategy is scored to the same depth).
func ReplayMTRAG(ctx context.Context, m *MTRAG, a Asker, r Replier, method ask.Method, docID func(uuid.UUID) string) (map[string]Run, map[string]map[string]string, error) {
	runs := map[string]Run{}
	queries := map[string]map[string]string{} // task -> search texts of the carry turn
	for _, form := range QueryForms {
		run := Run{Name: form, PerQuery: map[string][]string{}, Stages: map[string][]time.Duration{}}
		for id, text := range m.Tasks[form] {
			if _, judged := m.Qrels[id]; !judged {
				continue
			}
			t := time.Now()
			ranking, err := a.Rank(ctx, text, method)
			if err != nil {
				return nil, nil, fmt.Errorf("eval: %s %s: %w", form, id, err)
			}
			run.Stages["total"] = append(run.Stages["total"], time.Since(t))
			run.PerQuery[id] = docsOf(ranking.Candidates, docID)
		}
		runs[form] = run
	}
	run := Run{Name: Carry, PerQuery: map[string][]string{}, Stages: map[string][]time.Duration{}}
	for _, c := range m.Conversations {
		var conv uuid.UUID
		for _, t := range c.Turns {
			start := time.Now()
			turn, err := a.Ask(ctx, ask.Request{ConversationID: conv, Message: t.User})
			if err != nil {
				return nil, nil, fmt.Errorf("eval: conversation %s turn %d: %w", c.ID, t.Turn, err)
			}
			run.Stages["total"] = append(run.Stages["total"], time.Since(start))
			conv = turn.ConversationID
			if id := TaskID(c.ID, t.Turn); m.Qrels[id] != nil {
				run.PerQuery[id] = docsOf(turn.Ranked, docID)
				queries[id] = turn.Queries
				queries[id]["intent"] = turn.Intent.Label
			}
			if t.Agent != "" {
				if _, err := r.RecordReply(ctx, conv, turn.AssistantMessageID, t.Agent); err != nil {
					return nil, nil, fmt.Errorf("eval: recording the reply of %s turn %d: %w", c.ID, t.Turn, err)
				}
			}
		}
	}
	runs[Carry] = run
	return runs, queries, nil
}

// TurnRow is one judged turn of a replay, for reading the turns a strategy wins or loses.
type TurnRow struct {
	Domain    string             `json:"domain"`
	Task      string             `json:"task"`
	Turn      int                `json:"turn"`
	MultiTurn string             `json:"multi_turn"`
	Question  string             `json:"question"`
	Rewrite   string             `json:"rewrite"`
	Carry     map[string]string  `json:"carry"` // the carry turn's intent and search texts
	NDCG5     map[string]float64 `json:"ndcg5"` // by strategy
	Recall5   map[string]float64 `json:"recall5"`
}

// TurnRows lists every judged turn with each strategy's nDCG@5 and Recall@5.
func TurnRows(m *MTRAG, runs map[string]Run, queries map[string]map[string]string) []TurnRow {
	var rows []TurnRow
	for _, c := range m.Conversations {
		for _, t := range c.Turns {
			id := TaskID(c.ID, t.Turn)
			rel := m.Qrels[id]
			if rel == nil {
				continue
			}
			row := TurnRow{Domain: m.Domain, Task: id, Turn: t.Turn, MultiTurn: t.MultiTurn, Question: t.User,
				Rewrite: m.Tasks["rewrite"][id], Carry: queries[id], NDCG5: map[string]float64{}, Recall5: map[string]float64{}}
			for name, run := range runs {
				row.NDCG5[name] = NDCG(run.PerQuery[id], rel, 5)
				row.Recall5[name] = Recall(run.PerQuery[id], rel, 5)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// docsOf lists the distinct documents of a ranking in the order their best chunk ranked.
func docsOf(cs []ask.Candidate, docID func(uuid.UUID) string) []string {
	seen := map[string]bool{}
	var docs []string
	for _, c := range cs {
		if id := docID(c.Chunk.DocID); id != "" && !seen[id] {
			seen[id] = true
			docs = append(docs, id)
		}
	}
	return docs
}

// GroupResult is the strategies' scores over one group of judged turns.
type GroupResult struct {
	Group   string   `json:"group"`
	Tasks   int      `json:"tasks"`
	Results []Result `json:"results"` // one per strategy, in Strategies order
}

// DomainReport is a domain's groups.
type DomainReport struct {
	Domain string        `json:"domain"`
	Groups []GroupResult `json:"groups"`
}

// ConversationReport is the result of ragd eval conversations.
type ConversationReport struct {
	Domains []DomainReport `json:"domains"`
	Notes   []string       `json:"notes,omitempty"`
}

// ConversationKs are the cutoffs the conversation report uses for nDCG and recall.
var ConversationKs = []int{1, 3, 5, 10}

// ScoreMTRAG scores runs over the judged turns of m: all of them, turn 1, later turns, and each
// multi-turn type of the annotators (Follow-up, Clarification, N/A).
func ScoreMTRAG(m *MTRAG, runs map[string]Run) DomainReport {
	groups := map[string][]Query{}
	var order []string
	add := func(g string, q Query) {
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], q)
	}
	for _, g := range []string{"all", "turn 1", "later turns", "Follow-up", "Clarification", "N/A"} {
		groups[g], order = nil, append(order, g)
	}
	for _, c := range m.Conversations {
		for _, t := range c.Turns {
			id := TaskID(c.ID, t.Turn)
			if m.Qrels[id] == nil {
				continue
			}
			q := Query{ID: id}
			add("all", q)
			if t.Turn == 1 {
				add("turn 1", q)
			} else {
				add("later turns", q)
			}
			add(t.MultiTurn, q)
		}
	}
	rep := DomainReport{Domain: m.Domain}
	for _, g := range order {
		ds := &Dataset{Name: m.Domain, Queries: groups[g], Qrels: m.Qrels}
		gr := GroupResult{Group: g, Tasks: len(ds.Queries)}
		for _, s := range Strategies {
			if run, ok := runs[s]; ok {
				gr.Results = append(gr.Results, Score(ds, run, ConversationKs, ConversationKs))
			}
		}
		rep.Groups = append(rep.Groups, gr)
	}
	return rep
}

// WriteTable writes one block per domain: a row per group and strategy.
func (r ConversationReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, d := range r.Domains {
		fmt.Fprintf(tw, "%s\n", d.Domain)
		fmt.Fprintln(tw, "group\tturns\tstrategy\tnDCG@1\tnDCG@3\tnDCG@5\tnDCG@10\tR@1\tR@3\tR@5\tR@10")
		for _, g := range d.Groups {
			if g.Tasks == 0 {
				continue
			}
			for _, res := range g.Results {
				fmt.Fprintf(tw, "%s\t%d\t%s", g.Group, g.Tasks, res.Name)
				for _, k := range ConversationKs {
					fmt.Fprintf(tw, "\t%.4f", res.NDCG[k])
				}
				for _, k := range ConversationKs {
					fmt.Fprintf(tw, "\t%.4f", res.Recall[k])
				}
				fmt.Fprintln(tw)
			}
		}
		fmt.Fprintln(tw)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(tw, "- %s\n", n)
	}
	return tw.Flush()
}

// WriteJSON writes the report as indented JSON.
func (r ConversationReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// strategyColors tells the strategies apart in the plot.
var strategyColors = map[string]color.NRGBA{
	"lastturn":  {0x99, 0x99, 0x99, 0xff},
	"questions": {0xe6, 0x9f, 0x00, 0xff},
	"rewrite":   {0x56, 0xb4, 0xe9, 0xff},
	Carry:       {0x00, 0x9e, 0x73, 0xff},
}

// WritePlot draws nDCG@5 and Recall@5 on later turns, per domain and strategy, as a PNG.
func (r ConversationReport) WritePlot(path string) error {
	p := plot.New()
	p.Title.Text = "MTRAG later turns: nDCG@5 (solid), Recall@5 (light)"
	p.Y.Label.Text = "score"
	p.Y.Min, p.Y.Max = 0, 1
	var names []string
	values := map[string][2]plotter.Values{} // strategy -> nDCG@5, R@5 per domain
	for _, d := range r.Domains {
		names = append(names, d.Domain)
		for _, g := range d.Groups {
			if g.Group != "later turns" {
				continue
			}
			for _, res := range g.Results {
				v := values[res.Name]
				v[0] = append(v[0], res.NDCG[5])
				v[1] = append(v[1], res.Recall[5])
				values[res.Name] = v
			}
		}
	}
	width := vg.Points(9)
	i := 0
	for _, s := range Strategies {
		v, ok := values[s]
		if !ok {
			continue
		}
		for j, metric := range v {
			bars, err := plotter.NewBarChart(metric, width)
			if err != nil {
				return err
			}
			c := strategyColors[s] // not premultiplied: lowering alpha keeps the hue
			if j == 1 {
				c.A = 0x60
			}
			bars.Color, bars.LineStyle.Width = c, 0
			bars.Offset = width * vg.Length(2*i+j-len(Strategies))
			p.Add(bars)
			if j == 0 {
				p.Legend.Add(s, bars)
			}
		}
		i++
	}
	p.Legend.Top = true
	p.NominalX(names...)
	return p.Save(vg.Length(60+50*len(names))*vg.Millimeter, 100*vg.Millimeter, path)
}
