package main

import (
	"context"
	"fmt"
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
	Beir evalBeirCmd `cmd:"" name:"beir" help:"Retrieval quality (nDCG, recall) and latency on a BEIR dataset."`
}

type evalBeirCmd struct {
	Dir     string   `arg:"" help:"BEIR directory: corpus.jsonl, queries.jsonl, qrels/<split>.tsv." type:"existingdir"`
	Split   string   `help:"Qrels split to score." default:"test"`
	Methods []string `help:"Retrieval methods to compare." default:"bm25,vector,hybrid" enum:"bm25,vector,hybrid"`
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
	name := unsafeSchemaChars.ReplaceAllString(strings.ToLower(ds.Name), "_")
	if err := a.openModels(false); err != nil {
		return err
	}
	if err := a.openStore(ctx, "eval_"+name, true); err != nil {
		return err
	}
	st, err := runIngest(ctx, a, []string{filepath.Join(c.Dir, "corpus.jsonl")}, os.Stderr)
	if err != nil {
		return err
	}
	t := time.Now()
	if err := a.openIndex(ctx, filepath.Join(a.cfg.DataDir, "eval", name, "bm25"), false); err != nil {
		return err
	}
	printIngestStats(os.Stderr, st, time.Since(t))

	pipeline, err := ask.New(a.cfg.askConfig(), a.index, a.store, embedderOrNil(a))
	if err != nil {
		return err
	}
	keys, err := a.store.SourceKeys(ctx)
	if err != nil {
		return err
	}
	prefix := "corpus:" + ds.Name + "/"
	docID := func(id uuid.UUID) string { return strings.TrimPrefix(keys[id], prefix) }

	report := eval.Report{Dataset: ds.Name, Split: c.Split, Corpus: len(keys), Notes: a.evalNotes()}
	for _, m := range c.Methods {
		method := ask.Method(m)
		if method != ask.BM25 && a.embedder == nil {
			report.Notes = append(report.Notes, fmt.Sprintf("%s skipped: no --embed-model", m))
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
	return writeJSONReport(report, c.JSON, filepath.Join(a.cfg.DataDir, "eval", name, "report.json"))
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
	return notes
}

func writeJSONReport(r eval.Report, path, fallback string) error {
	if path == "-" {
		return r.WriteJSON(os.Stdout)
	}
	if path == "" {
		path = fallback
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
