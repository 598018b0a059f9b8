package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/ragd/ragd/eval"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/store"
)

type evalIngestCmd struct {
	Paths      []string `arg:"" help:"What to ingest (files, directories, JSONL corpora), e.g. ../shared/data/scifact/corpus.jsonl." name:"path"`
	Parts      int      `default:"8" help:"Cut the sources into this many consecutive parts of whole batches and measure each part's embedding alone and its ingest back to back, alternating which runs first, so that the machine's load moving between parts moves both sides of a part's ratio. 1 measures the whole corpus once each way." name:"parts"`
	CPUProfile string   `help:"Write a CPU profile of the whole run (go tool pprof) to this file." name:"cpu-profile"`
}

// Run measures ingest against the embedding model alone. The sources are cut into parts of whole
// batches; for each part the model embeds exactly the texts ingest would, batch by batch as
// ingest forms them, with nothing else running, and the part is ingested end to end (extract,
// chunk, embed, PostgreSQL, BM25 index caught up) into one schema and index started from
// scratch. The two run back to back, in alternating order from part to part, so each part's
// ratio compares the model and ingest under nearly the same load of the machine: the spread of
// the parts' ratios says how far one figure can be trusted.
func (c evalIngestCmd) Run(ctx context.Context, a *app) error {
	if a.cfg.EmbedModel == "" {
		return errors.New("eval ingest measures against the embedding model: set --embed-model")
	}
	if c.Parts < 1 {
		return fmt.Errorf("--parts %d: must be at least 1", c.Parts)
	}
	stop, err := cpuProfile(c.CPUProfile)
	if err != nil {
		return err
	}
	defer stop()
	if err := a.openModels(false); err != nil {
		return err
	}
	cfg := a.cfg.ingestConfig(a.logger)
	in, err := ingest.New(cfg, nil, a.embedder)
	if err != nil {
		return err
	}
	type source struct {
		src ingest.Source
		err error
	}
	var sources []source
	for src, err := range in.Walk(ctx, c.Paths) {
		if !errors.Is(err, ingest.ErrSkipped) { // measured parts hold only what is ingested
			sources = append(sources, source{src, err})
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	const schema = "eval_ingest"
	url, owner, err := a.databaseURLs(ctx)
	if err != nil {
		return err
	}
	if err := store.DropSchema(ctx, cmp.Or(owner, url), schema); err != nil {
		return err
	}
	if err := a.openStore(ctx, schema, true); err != nil {
		return err
	}
	stored, err := ingest.New(cfg, a.store, a.embedder)
	if err != nil {
		return err
	}
	indexDir := filepath.Join(a.cfg.DataDir, "eval", "ingest", "bm25")
	if err := os.RemoveAll(indexDir); err != nil {
		return err
	}
	if err := a.openIndex(ctx, indexDir, false); err != nil {
		return err
	}

	// A part is whole batches, so the batches embedded alone are the ones ingest forms.
	batchDocs := cfg.WithDefaults().BatchDocs
	batches := (len(sources) + batchDocs - 1) / batchDocs
	perPart := max(1, (batches+c.Parts-1)/c.Parts) * batchDocs
	var (
		embedTime, ingestTime time.Duration
		embedCPU, ingestCPU   time.Duration
		chunks                int
		ratios                []float64
	)
	fmt.Printf("part  chunks  embedding alone chunks/s (CPU ms/chunk)  ingest chunks/s (CPU ms/chunk)  ratio  first\n")
	for part, lo := 0, 0; lo < len(sources); part, lo = part+1, lo+perPart {
		replay := func(yield func(ingest.Source, error) bool) {
			for _, s := range sources[lo:min(lo+perPart, len(sources))] {
				if !yield(s.src, s.err) {
					return
				}
			}
		}
		var (
			n, written int
			eT, iT     time.Duration
			eCPU, iCPU time.Duration
			texts      [][]string
			embedAlone = func() error {
				var err error
				if texts, err = in.EmbeddingTexts(ctx, iter.Seq2[ingest.Source, error](replay)); err != nil {
					return err
				}
				eT, eCPU, err = timed(func() error {
					for _, b := range texts {
						if _, err := a.embedder.Embed(ctx, b); err != nil {
							return err
						}
						n += len(b)
					}
					return nil
				})
				return err
			}
			ingestPart = func() error {
				var err error
				iT, iCPU, err = timed(func() error {
					st, err := ingestSources(ctx, a, stored, replay, min(perPart, len(sources)-lo), os.Stderr)
					if err != nil {
						return err
					}
					written = st.Chunks
					_, err = a.index.CatchUp(ctx, a.store)
					return err
				})
				return err
			}
		)
		steps, first := []func() error{embedAlone, ingestPart}, "embedding"
		if part%2 == 1 {
			steps, first = []func() error{ingestPart, embedAlone}, "ingest"
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		if written != n {
			return fmt.Errorf("part %d: ingest wrote %d chunks, the model alone embedded %d: not the same work", part+1, written, n)
		}
		ratio := eT.Seconds() / iT.Seconds()
		ratios = append(ratios, ratio)
		fmt.Printf("%4d  %6d  %15.1f (%5.1f)  %22.1f (%5.1f)  %.3f  %s\n", part+1, n,
			float64(n)/eT.Seconds(), perChunk(eCPU, n), float64(n)/iT.Seconds(), perChunk(iCPU, n), ratio, first)
		embedTime, ingestTime, embedCPU, ingestCPU, chunks = embedTime+eT, ingestTime+iT, embedCPU+eCPU, ingestCPU+iCPU, chunks+n
	}
	fmt.Printf("embedding alone, the same %d chunks in the same batches: %.1f chunks/s, ragd CPU %.1f ms a chunk\n",
		chunks, float64(chunks)/embedTime.Seconds(), perChunk(embedCPU, chunks))
	fmt.Printf("ingest end to end (extract, chunk, embed, PostgreSQL, BM25 index): %.1f chunks/s, ragd CPU %.1f ms a chunk\n",
		float64(chunks)/ingestTime.Seconds(), perChunk(ingestCPU, chunks))
	fmt.Printf("ingest / embedding alone = %.3f over all parts", embedTime.Seconds()/ingestTime.Seconds())
	if len(ratios) > 1 {
		// The median first: one part measured while another process took the machine can be
		// off by a factor (seen: embedding alone at 7.7 chunks/s, then ingest at 38.9).
		m := eval.Mean(ratios)
		fmt.Printf("; by part: median %.3f, min %.3f, max %.3f, mean %.3f (95%% bootstrap interval %.3f-%.3f)",
			median(ratios), slices.Min(ratios), slices.Max(ratios), m.Mean, m.Lo, m.Hi)
	}
	fmt.Println()
	return nil
}

// timed runs f and returns its wall time and the CPU time the whole process used meanwhile
// (every thread: the model's runtime and Go's).
func timed(f func() error) (wall, cpu time.Duration, err error) {
	c0 := processCPU()
	t := time.Now()
	err = f()
	return time.Since(t), processCPU() - c0, err
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

func perChunk(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1000 / float64(n)
}
