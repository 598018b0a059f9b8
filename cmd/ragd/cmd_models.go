package main

import (
	"context"
	"fmt"
	"time"

	"github.com/ragd/ragd/embed"
	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/rerank"
)

type modelsCmd struct {
	Verify modelsVerifyCmd `cmd:"" help:"Check that a model directory loads and runs, and time it."`
}

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
			return err
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
		return err
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
