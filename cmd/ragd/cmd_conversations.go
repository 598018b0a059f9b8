package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/eval"
)

type evalConversationsCmd struct {
	Dirs   []string `arg:"" help:"Directories in MTRAG's layout (…/mtrag/clapnq …, …/dstc11t5): tasks, qrels.tsv, corpus.jsonl; conversations.jsonl there or in the parent." type:"existingdir" name:"dir"`
	Method string   `help:"Retrieval of each turn. bm25 is the reference (the stand-in models carry no meaning); hybrid and hybrid+rerank need --embed-model (and --rerank-model) and are labelled so." default:"bm25" enum:"bm25,hybrid,hybrid+rerank"`
	JSON   string   `help:"Write the JSON report here ('-' for stdout). Default: <data-dir>/eval/conversations-<method>.json, with the plot beside it." name:"json"`
	Turns  string   `help:"Also write every judged turn (questions, rewrite, carry's searches, each strategy's nDCG@5 and R@5) as JSONL here." type:"path"`
}

// Run replays each domain's conversations through the /v1/ask pipeline and compares carry-over
// with MTRAG's three query forms, one schema and index per domain.
func (c evalConversationsCmd) Run(ctx context.Context, a *app) error {
	method := ask.Method(c.Method)
	if method != ask.BM25 {
		if err := a.openModels(method == ask.HybridRerank); err != nil {
			return err
		}
		if a.embedder == nil {
			return fmt.Errorf("--method %s needs --embed-model", method)
		}
	}
	report := eval.ConversationReport{Notes: []string{
		fmt.Sprintf("retrieval: %s; carry-over re-scores %s", method, map[bool]string{true: "with the cross-encoder", false: map[bool]string{true: "by embedding similarity", false: "lexically (share of the question's IDF mass)"}[a.embedder != nil]}[a.scorer != nil]),
		"MTRAG's rewrite was written by an LLM (Mixtral 8x7B); DSTC11's reference is the last turn plus the gold entity's name, a ceiling: neither is something ragd has at run time",
		"MTRAG's corpora are pools of the passages annotators saw, not the full collections: compare strategies with each other, not with published figures; DSTC11's corpus is its full knowledge base",
		"carry - last turn: paired difference of nDCG@5 per judged turn, 95% bootstrap interval, two-sided paired randomization p (10,000 draws each)",
		"carry turns' latency: stage timings of every turn replayed, turn 1 apart from later turns; all but rerank is a turn's total less reranking, as in `ragd eval ask`; the table shows the focus and BM25 searches, the JSON every stage",
	}}
	var rows []eval.TurnRow
	for _, dir := range c.Dirs {
		m, err := eval.LoadMTRAG(dir)
		if err != nil {
			return err
		}
		// Each domain has its own schema and index: close the previous domain's first.
		a.close()
		if method != ask.BM25 {
			if err := a.openModels(method == ask.HybridRerank); err != nil {
				return err
			}
		}
		if _, err := a.openCorpus(ctx, "mtrag_"+m.Domain, filepath.Join(m.Dir, "corpus.jsonl")); err != nil {
			return err
		}
		p, err := a.pipeline(ask.Monitors{})
		if err != nil {
			return err
		}
		docID, err := a.corpusIDs(ctx, m.Domain)
		if err != nil {
			return err
		}
		rp, err := eval.ReplayMTRAG(ctx, m, p, a.store, method, docID)
		if err != nil {
			return err
		}
		d := eval.ScoreMTRAG(m, rp.Runs)
		d.Latency = rp.Latency()
		report.Domains = append(report.Domains, d)
		rows = append(rows, eval.TurnRows(m, rp)...)
	}
	var mtrag []string
	for _, d := range report.Domains {
		if d.Labels["rewrite"] == eval.LLMRewrite {
			mtrag = append(mtrag, d.Domain)
		}
	}
	if len(mtrag) > 1 {
		p := eval.Pool(rows, mtrag)
		report.Pooled = &p
	}
	if c.Turns != "" {
		if err := writeJSONL(c.Turns, rows); err != nil {
			return err
		}
	}
	if err := report.WriteTable(os.Stdout); err != nil {
		return err
	}
	path := c.JSON
	if path == "" {
		path = filepath.Join(a.cfg.DataDir, "eval", "conversations-"+c.Method+".json")
	}
	if path != "-" {
		plot := path[:len(path)-len(filepath.Ext(path))] + ".png"
		if err := report.WritePlot(plot); err != nil {
			return err
		}
		fmt.Printf("plot: %s\n", plot)
	}
	return writeJSON(report, path)
}

func writeJSONL[T any](path string, rows []T) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
