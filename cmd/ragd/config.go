package main

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/chunk"
	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/ingest"
)

// Config is every setting of ragd, read from flags and RAGD_* environment variables (the flag
// --data-dir is RAGD_DATA_DIR). Defaults are the product spec's numbers.
type Config struct {
	DataDir     string `help:"Directory for the private PostgreSQL cluster and the BM25 index." default:"./ragd-data" type:"path"`
	DatabaseURL string `help:"PostgreSQL URL. Empty runs a private cluster inside the data directory." name:"database-url"`
	Schema      string `help:"PostgreSQL schema holding ragd's tables (default public)."`

	EmbedModel  string `help:"Directory of the sentence-embedding model (ONNX). Empty disables vector search." type:"path"`
	RerankModel string `help:"Directory of the cross-encoder model (ONNX). Empty skips reranking." type:"path"`
	Runtime     string `help:"Model runtime: auto (ONNX Runtime if its library loads, else pure Go), onnxruntime or go." default:"auto" enum:"auto,onnxruntime,go"`
	ORTLibrary  string `help:"Path of libonnxruntime.so; empty searches the loader path and /usr/local/lib." name:"ort-library"`
	EmbedBatch  int    `help:"Texts per embedding run." default:"32"`
	RerankBatch int    `help:"Pairs per cross-encoder run." default:"16"`
	Threads     int    `help:"ONNX Runtime threads; 0 uses every core."`

	ChunkTokens  int `help:"Largest chunk, in cl100k_base tokens." default:"256"`
	ChunkOverlap int `help:"Tokens repeated between windows of a long block." default:"32"`
	FreshK       int `help:"Chunks each retriever (BM25, vector) returns every turn." default:"40" name:"fresh-k"`
	RRFK         int `help:"Reciprocal rank fusion constant (ranks count from 1)." default:"60" name:"rrf-k"`

	Listen    string `help:"HTTP listen address." default:"127.0.0.1:8080"`
	LogLevel  string `help:"Log level." default:"info" enum:"debug,info,warn,error"`
	LogFormat string `help:"Log format." default:"text" enum:"text,json"`
}

// Validate checks what the per-package validators cannot see, and runs them, so a bad setting
// is refused at start-up with the flag's name rather than failing later.
func (c *Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty"))
	}
	if c.EmbedBatch < 1 || c.RerankBatch < 1 {
		errs = append(errs, errors.New("--embed-batch and --rerank-batch must be at least 1"))
	}
	if c.Threads < 0 {
		errs = append(errs, errors.New("--threads must not be negative"))
	}
	if err := c.chunkOptions().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--chunk-tokens/--chunk-overlap: %w", err))
	}
	if err := c.askConfig().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--fresh-k/--rrf-k: %w", err))
	}
	return errors.Join(errs...)
}

func (c *Config) chunkOptions() chunk.Options {
	overlap := c.ChunkOverlap
	if overlap == 0 {
		overlap = -1 // chunk.Options reads 0 as "default"; the flag's 0 means none
	}
	return chunk.Options{MaxTokens: c.ChunkTokens, Overlap: overlap}
}

func (c *Config) askConfig() ask.Config {
	return ask.Config{FreshK: c.FreshK, RRFK: c.RRFK}.WithDefaults()
}

func (c *Config) ingestConfig(logger *slog.Logger) ingest.Config {
	return ingest.Config{Chunk: c.chunkOptions(), Logger: logger}
}

func (c *Config) modelConfig(dir string, batch int, logger *slog.Logger) encoder.Config {
	threads := c.Threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	return encoder.Config{Dir: dir, Runtime: encoder.Runtime(c.Runtime), ORTLibrary: c.ORTLibrary,
		BatchSize: batch, Threads: threads, Logger: logger}
}

func (c *Config) clusterDir() string { return filepath.Join(c.DataDir, "postgres") }
func (c *Config) indexDir() string   { return filepath.Join(c.DataDir, "index") }
