package main

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"time"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/chunk"
	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/llm"
	"github.com/ragd/ragd/mode"
)

// Config is every setting of ragd, read from flags and RAGD_* environment variables (the flag
// --data-dir is RAGD_DATA_DIR). Defaults are the product spec's numbers.
type Config struct {
	DataDir     string `help:"Directory for the private PostgreSQL cluster and the BM25 index." default:"./ragd-data" type:"path"`
	DatabaseURL string `help:"PostgreSQL URL. Empty runs a private cluster inside the data directory." name:"database-url"`
	Schema      string `help:"PostgreSQL schema holding ragd's tables (default public)."`
	IndexDir    string `help:"BM25 index directory (default <data-dir>/index)." type:"path"`

	EmbedModel  string `help:"Directory of the sentence-embedding model (ONNX). Empty disables vector search." type:"path"`
	RerankModel string `help:"Directory of the cross-encoder model (ONNX). Empty skips reranking." type:"path"`
	Runtime     string `help:"Model runtime: auto (ONNX Runtime if its library loads, else pure Go), onnxruntime or go." default:"auto" enum:"auto,onnxruntime,go"`
	ORTLibrary  string `help:"Path of libonnxruntime.so; empty searches the loader path and /usr/local/lib." name:"ort-library"`
	EmbedBatch  int    `help:"Texts per embedding run (16 measured fastest on ONNX Runtime, 2 cores)." default:"16"`
	RerankBatch int    `help:"Pairs per cross-encoder run (8 measured fastest on ONNX Runtime, 2 cores)." default:"8"`
	Threads     int    `help:"ONNX Runtime threads; 0 uses every core."`

	LLMURL     string        `help:"Base URL of an OpenAI-compatible chat API (e.g. http://localhost:11434/v1). Empty: answers are the fact sheet." name:"llm-url"`
	LLMModel   string        `help:"Model name for --llm-url." name:"llm-model"`
	LLMAPIKey  string        `help:"API key for --llm-url." name:"llm-api-key"`
	LLMTimeout time.Duration `help:"Longest an answer may take." default:"60s" name:"llm-timeout"`

	ChunkTokens  int `help:"Largest chunk, in cl100k_base tokens." default:"256"`
	ChunkOverlap int `help:"Tokens repeated between windows of a long block." default:"32"`
	FreshK       int `help:"Chunks each retriever (BM25, vector) returns every turn." default:"40" name:"fresh-k"`
	RRFK         int `help:"Reciprocal rank fusion constant (ranks count from 1)." default:"60" name:"rrf-k"`

	CarryTau      float64  `help:"Re-score (0..1) a carried source needs to enter a turn." default:"0.2"`
	CarryDecay    float64  `help:"Carry score multiplier for every turn a source is not used." default:"0.7"`
	CarryIdle     int      `help:"Turns without use after which a carried source is dropped." default:"3"`
	CarryCap      int      `help:"Most carried sources entering one turn." default:"10"`
	CarryWeight   float64  `help:"Weight of the carried list in fusion on drill-down turns." default:"0.01"`
	ReferWeight   float64  `help:"Weight of the carried list on turns that refer to earlier sources (compare, same-sources)." default:"0.3"`
	ContextWeight float64  `help:"Weight of the context search (the question plus the telling words of the previous turn and of carried sources' titles); negative turns it off." default:"0.5"`
	ContextTerms  int      `help:"Words the context search adds to the question." default:"3"`
	Rules         []string `help:"A rule every context bundle carries (after the sticky invariants); repeat for more." name:"rule"`
	ControlRatio  float64  `help:"Share of new conversations given GENERAL budgets whatever their mode (the A/B control arm); the rest get their mode's budgets." default:"0"`
	ModeThreshold float64  `help:"Mode classifier confidence under which the mode is GENERAL." default:"0.7"`

	KG            bool    `help:"Use the mini knowledge graph: entities recorded at ingest, their neighbours' chunks fused when entities repeat across turns." name:"kg"`
	AnaphoraBoost float64 `help:"Context search weight multiplier for questions that lean on the conversation (pronouns, very short)." default:"2"`

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
	// The packages read 0 as "use the default"; from a flag, 0 is a mistake to report.
	for flag, v := range map[string]int{"--chunk-tokens": c.ChunkTokens, "--fresh-k": c.FreshK, "--rrf-k": c.RRFK} {
		if v < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", flag, v))
		}
	}
	if err := c.chunkOptions().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--chunk-tokens/--chunk-overlap: %w", err))
	}
	if err := c.askConfig().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--fresh-k/--rrf-k: %w", err))
	}
	if c.LLMURL != "" {
		if err := c.llmConfig().WithDefaults().Validate(); err != nil {
			errs = append(errs, fmt.Errorf("--llm-*: %w", err))
		}
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
	modeCfg := mode.DefaultConfig()
	modeCfg.Threshold = c.ModeThreshold
	return ask.Config{Mode: modeCfg, Rules: c.Rules, ControlRatio: c.ControlRatio, FreshK: c.FreshK, RRFK: c.RRFK, CarryWeight: c.CarryWeight, ReferWeight: c.ReferWeight, ContextWeight: c.ContextWeight, ContextTerms: c.ContextTerms, AnaphoraBoost: c.AnaphoraBoost, Graph: c.KG,
		Carry: carry.Config{Tau: c.CarryTau, Decay: c.CarryDecay, MaxIdle: c.CarryIdle, Cap: c.CarryCap}}.WithDefaults()
}

func (c *Config) ingestConfig(logger *slog.Logger) ingest.Config {
	return ingest.Config{Chunk: c.chunkOptions(), Graph: c.KG, Logger: logger}
}

func (c *Config) modelConfig(dir string, batch int, logger *slog.Logger) encoder.Config {
	threads := c.Threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	return encoder.Config{Dir: dir, Runtime: encoder.Runtime(c.Runtime), ORTLibrary: c.ORTLibrary,
		BatchSize: batch, Threads: threads, Logger: logger}
}

func (c *Config) llmConfig() llm.Config {
	return llm.Config{BaseURL: c.LLMURL, Model: c.LLMModel, APIKey: c.LLMAPIKey, Timeout: c.LLMTimeout}
}

func (c *Config) clusterDir() string { return filepath.Join(c.DataDir, "postgres") }
func (c *Config) indexDir() string {
	if c.IndexDir != "" {
		return c.IndexDir
	}
	return filepath.Join(c.DataDir, "index")
}
