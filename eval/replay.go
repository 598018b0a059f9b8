package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/google/uuid"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/index"
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
// pipeline's ranking (rewrite is the set's reference: an LLM rewrite on MTRAG, the entity's name
// on DSTC11; neither is something ragd has at run time). carry replays each conversation
// through Ask as a chat UI would: user turns in order, and before each turn the reply the agent
// gave to the previous one. A turn's own reply is never recorded before it is asked, and the
// last turn's (the judged turn of a DSTC11 conversation) never at all: it answers the very
// question being judged. A judged turn is ranked by the turn's whole ranking (deeper than the
// sources a turn returns, so every strategy is scored to the same depth).
//
// Every carry turn's stage timings are kept, first turns apart from later ones: a later turn
// is where the conversation's state (carried sources, the focus) costs something.
func ReplayMTRAG(ctx context.Context, m *MTRAG, a Asker, r Replier, method ask.Method, docID func(uuid.UUID) string) (*Replay, error) {
	rp := &Replay{Runs: map[string]Run{}, Queries: map[string]map[string]string{}, AllButRerank: map[string]time.Duration{}}
	runs, queries := rp.Runs, rp.Queries
	for _, form := range QueryForms {
		run := Run{Name: form, PerQuery: map[string][]string{}, Stages: map[string][]time.Duration{}}
		for id, text := range m.Tasks[form] {
			if _, judged := m.Qrels[id]; !judged {
				continue
			}
			t := time.Now()
			ranking, err := a.Rank(ctx, text, method)
			if err != nil {
				return nil, fmt.Errorf("eval: %s %s: %w", form, id, err)
			}
			run.Stages["total"] = append(run.Stages["total"], time.Since(t))
			run.PerQuery[id] = docsOf(ranking.Candidates, docID)
		}
		runs[form] = run
	}
	run := Run{Name: Carry, PerQuery: map[string][]string{}, Stages: map[string][]time.Duration{}}
	for _, c := range m.Conversations {
		var conv, prev uuid.UUID
		for i, t := range c.Turns {
			if i > 0 && c.Turns[i-1].Agent != "" {
				if _, err := r.RecordReply(ctx, conv, prev, c.Turns[i-1].Agent); err != nil {
					return nil, fmt.Errorf("eval: recording the reply of %s turn %d: %w", c.ID, c.Turns[i-1].Turn, err)
				}
			}
			start := time.Now()
			turn, err := a.Ask(ctx, ask.Request{ConversationID: conv, Message: t.User})
			if err != nil {
				return nil, fmt.Errorf("eval: conversation %s turn %d: %w", c.ID, t.Turn, err)
			}
			run.Stages["total"] = append(run.Stages["total"], time.Since(start))
			times := &rp.Later
			if i == 0 {
				times = &rp.First
			}
			abr := times.Add(turn.Timings)
			conv, prev = turn.ConversationID, turn.AssistantMessageID
			if id := TaskID(c.ID, t.Turn); m.Qrels[id] != nil {
				run.PerQuery[id] = docsOf(turn.Ranked, docID)
				queries[id] = turn.Queries
				queries[id]["intent"] = turn.Intent.Label
				rp.AllButRerank[id] = abr
			}
		}
	}
	runs[Carry] = run
	return rp, nil
}

// Replay is what ReplayMTRAG ran: each strategy's run, the search texts of each judged carry
// turn, and the timings of carry's turns.
type Replay struct {
	Runs    map[string]Run
	Queries map[string]map[string]string // task -> search texts and intent of the carry turn
	// First and Later are the timings of carry's first turns and of its later ones (every turn
	// asked, judged or not); AllButRerank is each judged carry turn's, by task.
	First, Later TurnTimes
	AllButRerank map[string]time.Duration
}

// Latency summarizes carry's turn timings: turn 1, later turns.
func (rp *Replay) Latency() []TurnLatency {
	return []TurnLatency{rp.First.Latency("turn 1"), rp.Later.Latency("later turns")}
}

// TurnRow is one judged turn of a replay, for reading the turns a strategy wins or loses.
type TurnRow struct {
	Domain    string             `json:"domain"`
	Task      string             `json:"task"`
	Turn      int                `json:"turn"`
	MultiTurn string             `json:"multi_turn"`
	Slices    []string           `json:"slices"`
	Question  string             `json:"question"`
	Rewrite   string             `json:"rewrite"`
	Carry     map[string]string  `json:"carry"` // the carry turn's intent and search texts
	NDCG5     map[string]float64 `json:"ndcg5"` // by strategy
	Recall5   map[string]float64 `json:"recall5"`
	// CarryAllButRerankMS is the carry turn's total less reranking, in milliseconds.
	CarryAllButRerankMS float64 `json:"carry_all_but_rerank_ms"`
}

// TurnRows lists every judged turn with each strategy's nDCG@5 and Recall@5.
func TurnRows(m *MTRAG, rp *Replay) []TurnRow {
	runs, queries := rp.Runs, rp.Queries
	var rows []TurnRow
	for _, c := range m.Conversations {
		for _, t := range c.Turns {
			id := TaskID(c.ID, t.Turn)
			rel := m.Qrels[id]
			if rel == nil {
				continue
			}
			row := TurnRow{Domain: m.Domain, Task: id, Turn: t.Turn, MultiTurn: t.MultiTurn, Slices: Slices(t.User, m.Tasks["rewrite"][id]),
				Question: t.User, Rewrite: m.Tasks["rewrite"][id], Carry: queries[id], NDCG5: map[string]float64{}, Recall5: map[string]float64{},
				CarryAllButRerankMS: millis(rp.AllButRerank[id])}
			for name, run := range runs {
				row.NDCG5[name] = NDCG(run.PerQuery[id], rel, 5)
				row.Recall5[name] = Recall(run.PerQuery[id], rel, 5)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// Slices of judged turns, read from the data alone: never from ragd's own judgement of a turn,
// so that a slice does not move with the system it measures.
const (
	SlicePronoun       = "pronoun"        // points back with a pronoun or demonstrative ("are their rooms clean?")
	SliceShort         = "short"          // five words or fewer ("Investments?")
	SliceSelfContained = "self-contained" // the reference adds no content word to the question
)

// pointers are the pronouns and demonstratives of the pronoun slice. The pipeline has its own
// cues for a turn that leans on the conversation; this list stays apart from them on purpose.
var pointers = map[string]bool{"it": true, "its": true, "it's": true, "they": true, "them": true, "their": true,
	"theirs": true, "he": true, "him": true, "his": true, "she": true, "her": true, "this": true, "that": true,
	"these": true, "those": true}

// Slices returns the slices a judged turn belongs to, given its question and its reference
// (the rewrite form). A question is self-contained when every content word of its reference (as
// BM25 analyses words: stemmed, without stop words) is already in it: the rewriter, or the
// entity's name, added nothing.
func Slices(question, reference string) []string {
	var out []string
	words := strings.FieldsFunc(strings.ToLower(strings.ReplaceAll(question, "’", "'")), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
	for _, w := range words {
		if pointers[strings.Trim(w, "'")] {
			out = append(out, SlicePronoun)
			break
		}
	}
	if len(words) <= 5 {
		out = append(out, SliceShort)
	}
	if reference != "" {
		have := map[string]bool{}
		for _, t := range index.Terms(question) {
			have[t] = true
		}
		adds := false
		for _, t := range index.Terms(reference) {
			adds = adds || !have[t]
		}
		if !adds {
			out = append(out, SliceSelfContained)
		}
	}
	return out
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
	// CarryVsLast is carry's nDCG@5 minus the last turn's, turn by turn, with its interval, and
	// Carry carry's nDCG@5 with its interval.
	CarryVsLast *Paired   `json:"carry_vs_lastturn_ndcg5,omitempty"`
	Carry       *Interval `json:"carry_ndcg5,omitempty"`
}

// DomainReport is a domain's groups.
type DomainReport struct {
	Domain string `json:"domain"`
	// Labels names the strategies for readers: the rewrite form is an LLM rewrite or an
	// entity reference, depending on the set.
	Labels map[string]string `json:"labels"`
	Groups []GroupResult     `json:"groups"`
	// Latency is the timing of carry's turns through the pipeline, turn 1 and later turns.
	Latency []TurnLatency `json:"carry_latency,omitempty"`
}

// ConversationReport is the result of ragd eval conversations.
type ConversationReport struct {
	Domains []DomainReport `json:"domains"`
	// Pooled is carry against the last turn over several domains together (MTRAG's).
	Pooled *Pooled  `json:"pooled,omitempty"`
	Notes  []string `json:"notes,omitempty"`
}

// ConversationKs are the cutoffs the conversation report uses for nDCG and recall.
var ConversationKs = []int{1, 3, 5, 10}

// Labels names the strategies of a set for readers.
func Labels(m *MTRAG) map[string]string {
	return map[string]string{"lastturn": "last turn", "questions": "all questions", "rewrite": m.Reference, Carry: "ragd carry-over"}
}

// ScoreMTRAG scores runs over the judged turns of m: all of them, turn 1, later turns, slices of
// the later turns (pronoun, short, self-contained, and the annotators' multi-turn types
// Follow-up and Clarification where the data has them), with carry's paired difference from
// the last turn on each.
func ScoreMTRAG(m *MTRAG, runs map[string]Run) DomainReport {
	groups := map[string][]Query{}
	order := []string{"all", "turn 1", "later turns", "later: " + SlicePronoun, "later: " + SliceShort,
		"later: " + SliceSelfContained, "later: not self-contained", "Follow-up", "Clarification"}
	for _, c := range m.Conversations {
		for _, t := range c.Turns {
			id := TaskID(c.ID, t.Turn)
			if m.Qrels[id] == nil {
				continue
			}
			q := Query{ID: id}
			groups["all"] = append(groups["all"], q)
			if t.Turn == 1 {
				groups["turn 1"] = append(groups["turn 1"], q)
				continue
			}
			groups["later turns"] = append(groups["later turns"], q)
			in := Slices(t.User, m.Tasks["rewrite"][id])
			for _, s := range in {
				groups["later: "+s] = append(groups["later: "+s], q)
			}
			if !slices.Contains(in, SliceSelfContained) {
				groups["later: not self-contained"] = append(groups["later: not self-contained"], q)
			}
			if t.MultiTurn == "Follow-up" || t.MultiTurn == "Clarification" {
				groups[t.MultiTurn] = append(groups[t.MultiTurn], q)
			}
		}
	}
	rep := DomainReport{Domain: m.Domain, Labels: Labels(m)}
	for _, g := range order {
		ds := &Dataset{Name: m.Domain, Queries: groups[g], Qrels: m.Qrels}
		gr := GroupResult{Group: g, Tasks: len(ds.Queries)}
		for _, s := range Strategies {
			if run, ok := runs[s]; ok {
				gr.Results = append(gr.Results, Score(ds, run, ConversationKs, ConversationKs))
			}
		}
		last, lok := runs["lastturn"]
		carry, cok := runs[Carry]
		if lok && cok {
			a, b := make([]float64, len(ds.Queries)), make([]float64, len(ds.Queries))
			for i, q := range ds.Queries {
				a[i] = NDCG(last.PerQuery[q.ID], m.Qrels[q.ID], 5)
				b[i] = NDCG(carry.PerQuery[q.ID], m.Qrels[q.ID], 5)
			}
			d, c := Compare(a, b), Mean(b)
			gr.CarryVsLast, gr.Carry = &d, &c
		}
		rep.Groups = append(rep.Groups, gr)
	}
	return rep
}

// Pooled is carry's paired difference from the last turn over the judged later turns of several
// domains together, whole and per slice: MTRAG's domains are small, and their pronoun turns few.
type Pooled struct {
	Domains []string           `json:"domains"`
	Groups  map[string]*Paired `json:"carry_vs_lastturn_ndcg5"`
	Order   []string           `json:"-"`
}

// Pool pools the later turns of rows from the given domains.
func Pool(rows []TurnRow, domains []string) Pooled {
	p := Pooled{Domains: domains, Groups: map[string]*Paired{}}
	a, b := map[string][]float64{}, map[string][]float64{}
	add := func(g string, r TurnRow) {
		if _, ok := a[g]; !ok {
			p.Order = append(p.Order, g)
		}
		a[g] = append(a[g], r.NDCG5["lastturn"])
		b[g] = append(b[g], r.NDCG5[Carry])
	}
	for _, r := range rows {
		if r.Turn == 1 || !slices.Contains(domains, r.Domain) {
			continue
		}
		add("later turns", r)
		for _, s := range r.Slices {
			add("later: "+s, r)
		}
	}
	for g := range a {
		d := Compare(a[g], b[g])
		p.Groups[g] = &d
	}
	return p
}

// WriteTable writes one block per domain: a row per group and strategy, and per group carry's
// paired difference from the last turn.
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
				name := res.Name
				if l, ok := d.Labels[name]; ok {
					name = l
				}
				fmt.Fprintf(tw, "%s\t%d\t%s", g.Group, g.Tasks, name)
				for _, k := range ConversationKs {
					fmt.Fprintf(tw, "\t%.4f", res.NDCG[k])
				}
				for _, k := range ConversationKs {
					fmt.Fprintf(tw, "\t%.4f", res.Recall[k])
				}
				fmt.Fprintln(tw)
			}
			if p := g.CarryVsLast; p != nil {
				fmt.Fprintf(tw, "%s\t%d\tcarry - last turn\t\t\t%+.4f\t[%+.4f, %+.4f] 95%% CI, p=%.4f; carry %.4f [%.4f, %.4f]\n",
					g.Group, g.Tasks, p.Mean, p.Lo, p.Hi, p.P, g.Carry.Mean, g.Carry.Lo, g.Carry.Hi)
			}
		}
		fmt.Fprintln(tw)
		writeLatency(tw, d.Latency)
	}
	if p := r.Pooled; p != nil {
		fmt.Fprintf(tw, "pooled: %s\n", strings.Join(p.Domains, " + "))
		for _, g := range p.Order {
			d := p.Groups[g]
			fmt.Fprintf(tw, "%s\t%d\tcarry - last turn\t%+.4f\t[%+.4f, %+.4f] 95%% CI, p=%.4f\n", g, d.N, d.Mean, d.Lo, d.Hi, d.P)
		}
		fmt.Fprintln(tw)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(tw, "- %s\n", n)
	}
	return tw.Flush()
}

// writeLatency writes the latency of carry's turns: all but rerank, and the stages that make a
// later turn cost more than a first one (the focus, and the searches only a follow-up runs).
func writeLatency(tw io.Writer, groups []TurnLatency) {
	if len(groups) == 0 {
		return
	}
	fmt.Fprintln(tw, "carry turns\tturns\tstage\tp50 ms\tp95 ms")
	for _, g := range groups {
		if g.Turns == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\tall but rerank\t%.2f\t%.2f\n", g.Group, g.Turns, millis(g.AllButRerank.P50), millis(g.AllButRerank.P95))
		for _, s := range g.Stages {
			if s.Stage == "focus" || strings.HasPrefix(s.Stage, "focus-") || strings.HasPrefix(s.Stage, "context-") || s.Stage == "bm25" {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%.2f\t%.2f\n", g.Group, s.Turns, s.Stage, millis(s.Latency.P50), millis(s.Latency.P95))
			}
		}
	}
	fmt.Fprintln(tw)
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
	p.Title.Text = "Later turns: nDCG@5 (solid), Recall@5 (light)"
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
