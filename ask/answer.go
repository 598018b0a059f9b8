package ask

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ragd/ragd/bundle"
	"github.com/ragd/ragd/llm"
)

// Answerer writes an answer grounded in a turn's facts and context bundle, streaming it, with
// citation markers checked against the facts: phantom markers are dropped and returned, never
// emitted.
type Answerer interface {
	Answer(ctx context.Context, p llm.Prompt, onDelta func(string) error) (answer string, phantoms []string, err error)
}

// CanAnswer says whether an LLM is configured.
func (p *Pipeline) CanAnswer() bool { return p.Answerer != nil }

// Answer streams an LLM's answer over a recorded turn's fact sheet to onDelta and stores it on
// the turn's assistant message. Only markers of this turn's citations survive. Without an LLM, or
// without sources to cite, the turn's answer is its fact sheet and nothing is streamed.
func (p *Pipeline) Answer(ctx context.Context, t *Turn, onDelta func(string) error) (string, []string, error) {
	if p.Answerer == nil {
		return t.Answer, nil, nil
	}
	if len(t.Sources) == 0 {
		t.Skipped["answer"] = "no sources to answer from"
		return t.Answer, nil, nil
	}
	if onDelta == nil {
		onDelta = func(string) error { return nil }
	}
	var facts []llm.Fact
	for _, s := range t.Sources {
		for _, f := range s.Facts {
			facts = append(facts, llm.Fact{Marker: f.Marker, Text: f.Text, Source: s.Title + " (" + s.DateLabel() + ")"})
		}
	}
	start := time.Now()
	answer, phantoms, err := p.Answerer.Answer(ctx, prompt(t.question, facts, t.Context.Bundle), onDelta)
	if err != nil {
		return "", nil, fmt.Errorf("ask: generating the answer: %w", err)
	}
	if err := p.Store.SetAnswer(ctx, t.AssistantMessageID, answer); err != nil {
		return "", nil, err
	}
	t.Answer = answer
	t.Timings.add("answer", time.Since(start))
	return answer, phantoms, nil
}

// prompt is what the model answers from: the turn's context bundle as built, within its budgets
// (rules and sticky invariants, task state, recent window, decisions, capsules; then the
// evidence with its markers), the question and the citable facts.
func prompt(question string, facts []llm.Fact, b bundle.Bundle) llm.Prompt {
	var context []bundle.Section
	var evidence []string
	for _, s := range b.Sections {
		if s.Name != bundle.RetrievedEvidence {
			context = append(context, s)
			continue
		}
		for _, it := range s.Items {
			evidence = append(evidence, it.Text)
		}
	}
	return llm.Prompt{Question: question, Facts: facts, Context: bundle.Render(context), Evidence: strings.Join(evidence, "\n")}
}
