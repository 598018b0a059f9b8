package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ragd/ragd/embed"
	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/hub"
	"github.com/ragd/ragd/rerank"
)

type modelsCmd struct {
	Pull   modelsPullCmd   `cmd:"" help:"Download a model from the Hugging Face Hub into a model directory."`
	Verify modelsVerifyCmd `cmd:"" help:"Check that a model directory loads and runs, and time it."`
}

type modelsPullCmd struct {
	Name  string `arg:"" help:"all-MiniLM-L6-v2 (embeddings), ms-marco-MiniLM-L-6-v2 (reranking), or any repository laid out like them (owner/name), each with an optional @revision."`
	Dir   string `help:"Model directory to fill (default models/<name>)." type:"path" env:"-"`
	Hub   string `help:"The hub's URL (a mirror, say)." default:"https://huggingface.co" env:"HF_ENDPOINT"`
	Token string `help:"Hugging Face token, for gated or private repositories." env:"HF_TOKEN"`
}

// Run downloads the model, with a progress bar on a terminal, and says how to use it.
func (c modelsPullCmd) Run(ctx context.Context, a *app) error {
	m, err := hub.Resolve(c.Name)
	if err != nil {
		return err
	}
	dir := c.Dir
	if dir == "" {
		dir = filepath.Join("models", path.Base(m.Repo))
	}
	cfg := hub.Config{Endpoint: c.Hub, Token: c.Token, Logger: a.logger}
	if term.IsTerminal(int(os.Stderr.Fd())) {
		cfg.Progress = func(name string, have, size int64) io.WriteCloser {
			bar := progressbar.DefaultBytes(size, name)
			_ = bar.Set64(have)
			return bar
		}
	} else {
		cfg.Progress = func(name string, have, size int64) io.WriteCloser {
			a.logger.Info("downloading", slog.String("file", name), slog.Int64("from", have), slog.Int64("size", size))
			return nopCloser{io.Discard}
		}
	}
	res, err := hub.Pull(ctx, cfg, m, dir)
	if err != nil {
		return err
	}
	for _, f := range res.Files {
		state := "present"
		if f.Downloaded {
			state = "downloaded"
		}
		fmt.Printf("%-22s %10d bytes  sha256 %s  %s\n", f.Name, f.Size, f.SHA256, state)
	}
	role := m.Role
	if role == "" {
		if info, err := encoder.Inspect(dir); err == nil && info.IsCrossEncoder() {
			role = "rerank"
		} else {
			role = "embed"
		}
	}
	fmt.Printf("%s at commit %s is in %s (checked against the hub's digests; see %s)\nuse it with --%s-model %s\n",
		m.Repo, res.Commit, dir, hub.ManifestName, role, dir)
	return nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

type modelsVerifyCmd struct {
	Dir string `arg:"" help:"Model directory (model.onnx, tokenizer.json, config.json)." type:"path"`
}

// Run loads the model on the configured runtime, runs a small batch, and prints what it is.
func (c modelsVerifyCmd) Run(ctx context.Context, a *app) error {
	m, err := encoder.Inspect(c.Dir)
	if err != nil {
		return err
	}
	cfg := a.cfg.modelConfig(c.Dir, 8, a.logger)
	texts := []string{
		"Drop, cover and hold on until the shaking stops.",
		"Move to higher ground when a flood warning is issued.",
		"Never run a generator indoors: carbon monoxide kills.",
		"Cool a burn under running water for twenty minutes.",
	}
	start := time.Now()
	if m.IsCrossEncoder() {
		s, err := rerank.Open(cfg)
		if err != nil {
			return a.runtimeError(err)
		}
		defer s.Close()
		loaded := time.Since(start)
		t := time.Now()
		scores, err := s.Score(ctx, "what to do in an earthquake", texts)
		if err != nil {
			return err
		}
		fmt.Printf("%s: cross-encoder (%s), runtime %s, loaded in %s, %d pairs scored in %s: %v\n", m.Dir,
			m.Architecture, s.Runtime(), loaded.Round(time.Millisecond), len(texts), time.Since(t).Round(time.Millisecond), scores)
		return nil
	}
	e, err := embed.Open(cfg)
	if err != nil {
		return a.runtimeError(err)
	}
	defer e.Close()
	loaded := time.Since(start)
	t := time.Now()
	if _, err := e.Embed(ctx, texts); err != nil {
		return err
	}
	fmt.Printf("%s: embedding model (%s), dimension %d, runtime %s, loaded in %s, %d texts embedded in %s\n", m.Dir,
		m.Architecture, e.Dim(), e.Runtime(), loaded.Round(time.Millisecond), len(texts), time.Since(t).Round(time.Millisecond))
	return nil
}
