package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/eval"
)

type evalCmd struct {
	Beir          evalBeirCmd          `cmd:"" name:"beir" help:"Retrieval quality (nDCG, recall) and latency on a BEIR dataset."`
	Conversations evalConversationsCmd `cmd:"" help:"Multi-turn retrieval on MTRAG and DSTC11 conversations: last turn, all questions, the reference (LLM rewrite, or the entity's name), and ragd's carry-over."`
	Ask           evalAskCmd           `cmd:"" name:"ask" help:"Latency of /v1/ask on a running server, per stage and end to end."`
	Compaction    evalCompactionCmd    `cmd:"" help:"Replays MultiWOZ dialogues through each context compaction strategy: tokens, retention, goal boundaries."`
	Ingest        evalIngestCmd        `cmd:"" name:"ingest" help:"Ingest throughput against the embedding model's own: the same chunks embedded alone, then ingested end to end."`
	Scale         evalScaleCmd         `cmd:"" name:"scale" help:"Load recombined corpora of growing size (no model needed) and time the /v1/ask turn over each."`
	Classifiers   evalClassifiersCmd   `cmd:"" help:"Precision, recall and F1 (95% intervals) of the shipped mode, intent and invariant classifiers on labelled files, and their cost per turn."`
	Experiment    evalExperimentCmd    `cmd:"" help:"The A/B experiment per arm and mode stratum: turns, conversations, context tokens, feedback completion and error rates, z-test with 95% intervals, sample size still needed."`
}

type evalBeirCmd struct {
	Dir     string   `arg:"" help:"BEIR directory: corpus.jsonl, queries.jsonl, qrels/<split>.tsv." type:"existingdir"`
	Split   string   `help:"Qrels split to score." default:"test"`
	Methods []string `help:"Retrieval methods to compare (vector ones need --embed-model, hybrid+rerank --rerank-model)." default:"bm25,vector,hybrid,hybrid+rerank" enum:"bm25,vector,hybrid,hybrid+rerank"`
	JSON    string   `help:"Write the JSON report here ('-' for stdout). Default: <data-dir>/eval/<dataset>/report.json." name:"json"`
}

var unsafeSchemaChars = regexp.MustCompile(`[^a-z0-9_]+`)

// Run ingests the corpus into its own schema and index (a no-op when it is already there),
// then runs every test query through the /v1/ask retrieval code for each method.
func (c evalBeirCmd) Run(ctx context.Context, a *app) error {
	ds, err := eval.LoadBEIR(c.Dir, c.Split)
	if err != nil {
		return err
	}
	if err := a.openModels(true); err != nil {
		return err
	}
	name, err := a.openCorpus(ctx, ds.Name, filepath.Join(c.Dir, "corpus.jsonl"))
	if err != nil {
		return err
	}
	pipeline, err := ask.New(a.cfg.askConfig(), ask.Deps{Index: a.index, Store: a.store, Embedder: embedderOrNil(a), Reranker: rerankerOrNil(a)})
	if err != nil {
		return err
	}
	docID, err := a.corpusIDs(ctx, ds.Name)
	if err != nil {
		return err
	}

	n, err := a.store.CountDocuments(ctx)
	if err != nil {
		return err
	}
	report := eval.Report{Dataset: ds.Name, Split: c.Split, Corpus: n, Notes: a.evalNotes()}
	for _, m := range c.Methods {
		method := ask.Method(m)
		if method != ask.BM25 && a.embedder == nil {
			report.Notes = append(report.Notes, fmt.Sprintf("%s skipped: no --embed-model", m))
			continue
		}
		if method == ask.HybridRerank && a.scorer == nil {
			report.Notes = append(report.Notes, fmt.Sprintf("%s skipped: no --rerank-model", m))
			continue
		}
		run, err := eval.Retrieve(ctx, ds, pipeline, method, docID)
		if err != nil {
			return err
		}
		report.Results = append(report.Results, eval.Score(ds, run, nil, nil))
	}
	if err := report.WriteTable(os.Stdout); err != nil {
		return err
	}
	path := c.JSON
	if path == "" {
		path = filepath.Join(a.cfg.DataDir, "eval", name, "report.json")
	}
	return writeJSON(report, path)
}

// openCorpus opens the schema and BM25 index kept for an evaluation corpus and ingests the corpus
// into them (a no-op for documents already there). It returns the name of the schema and index.
func (a *app) openCorpus(ctx context.Context, dataset, corpus string) (string, error) {
	name := unsafeSchemaChars.ReplaceAllString(strings.ToLower(dataset), "_")
	if err := a.openStore(ctx, "eval_"+name, true); err != nil {
		return "", err
	}
	st, err := runIngest(ctx, a, []string{corpus}, os.Stderr)
	if err != nil {
		return "", err
	}
	t := time.Now()
	if err := a.openIndex(ctx, filepath.Join(a.cfg.DataDir, "eval", name, "bm25"), false); err != nil {
		return "", err
	}
	printIngestStats(os.Stderr, st, time.Since(t))
	return name, nil
}

// corpusIDs maps documents to the ids their corpus gave them, which is what qrels judge.
func (a *app) corpusIDs(ctx context.Context, corpus string) (func(uuid.UUID) string, error) {
	keys, err := a.store.SourceKeys(ctx)
	if err != nil {
		return nil, err
	}
	prefix := "corpus:" + corpus + "/"
	return func(id uuid.UUID) string { return strings.TrimPrefix(keys[id], prefix) }, nil
}

func (a *app) evalNotes() []string {
	notes := []string{fmt.Sprintf("chunks of at most %d tokens, overlap %d; fresh k %d; RRF k %d",
		a.cfg.ChunkTokens, a.cfg.ChunkOverlap, a.cfg.FreshK, a.cfg.RRFK)}
	if a.embedder != nil {
		notes = append(notes, fmt.Sprintf("embedding model %s on %s", a.embedder.Dir(), a.embedder.Runtime()))
		if strings.Contains(a.embedder.Dir(), "standin") {
			notes = append(notes, "the embedding model is a stand-in with synthetic weights: vector and hybrid figures prove the path runs, not quality")
		}
	}
	if a.scorer != nil {
		notes = append(notes, fmt.Sprintf("cross-encoder %s on %s, top %d reranked", a.scorer.Dir(), a.scorer.Runtime(), a.cfg.askConfig().RerankTop))
		if strings.Contains(a.scorer.Dir(), "standin") {
			notes = append(notes, "the cross-encoder is a stand-in with synthetic weights: hybrid+rerank figures prove the path runs, not quality")
		}
	}
	return notes
}

// writeJSON writes a report as JSON to path, or to stdout for "-".
func writeJSON(r interface{ WriteJSON(io.Writer) error }, path string) error {
	if path == "-" {
		return r.WriteJSON(os.Stdout)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := r.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("\nJSON report: %s\n", path)
	return nil
}

type evalAskCmd struct {
	Dir         string        `arg:"" help:"BEIR directory whose queries.jsonl (and qrels split) supply the questions." type:"existingdir"`
	URL         string        `help:"Base URL of the running server." default:"http://127.0.0.1:8080" name:"url"`
	Split       string        `help:"Qrels split whose queries are sent." default:"test"`
	N           int           `help:"Requests to send (0 = each query of the split once; more cycles through them again)." default:"0"`
	Warmup      int           `help:"Queries sent first and not measured." default:"5"`
	Concurrency int           `help:"Requests in flight." default:"1"`
	JSON        string        `help:"Also write the report as JSON to this file ('-' for stdout)." name:"json"`
	Key         string        `help:"API key to send (RAGD_EVAL_KEY); empty sends none, for a server open on loopback." env:"RAGD_EVAL_KEY"`
	Timeout     time.Duration `help:"Limit on each request, warm-ups included; a request over it ends the run with an error (0 = no limit)." default:"1m"`
}

// validate names the flag of a value the run cannot use: a negative count would cut the
// question list out of range, and 0 requests in flight would send nothing.
func (c evalAskCmd) validate() error {
	switch {
	case c.N < 0:
		return fmt.Errorf("--n must be 0 (each query once) or more, got %d", c.N)
	case c.Warmup < 0:
		return fmt.Errorf("--warmup must be 0 or more, got %d", c.Warmup)
	case c.Concurrency < 1:
		return fmt.Errorf("--concurrency must be at least 1, got %d", c.Concurrency)
	case c.Timeout < 0:
		return fmt.Errorf("--timeout must be 0 (no limit) or more, got %s", c.Timeout)
	}
	return nil
}

// Run drives a running server's /v1/ask with a dataset's questions, each a new conversation.
func (c evalAskCmd) Run(ctx context.Context) error {
	if err := c.validate(); err != nil {
		return err
	}
	ds, err := eval.LoadBEIR(c.Dir, c.Split)
	if err != nil {
		return err
	}
	qs := ds.Queries
	if c.N > 0 {
		qs = nil
		for i := range c.N {
			qs = append(qs, ds.Queries[i%len(ds.Queries)])
		}
	}
	r, err := eval.Load(ctx, eval.LoadConfig{URL: strings.TrimRight(c.URL, "/"), Queries: qs, Warmup: c.Warmup, Concurrency: c.Concurrency, Key: c.Key, Timeout: c.Timeout})
	if err != nil {
		return err
	}
	if err := r.WriteTable(os.Stdout); err != nil {
		return err
	}
	switch c.JSON {
	case "":
		return nil
	case "-":
		return r.WriteJSON(os.Stdout)
	}
	f, err := os.Create(c.JSON)
	if err != nil {
		return err
	}
	defer f.Close()
	return r.WriteJSON(f)
}
