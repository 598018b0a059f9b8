package ask

import (
	"context"

	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/mode"
	"github.com/ragd/ragd/token"
)

// warmTurns is a made-up conversation for Warm: a question, then a follow-up with a constraint
// and a pasted error, so that the classifiers' cue patterns run as well as their models.
var warmTurns = [2]string{
	"How do I configure the connection pool of the service?",
	"We must stay on Go 1.22 and never restart production. Now it fails with: " +
		"\"panic: runtime error: index out of range [3] with length 3\". Why?",
}

// Warm runs once through what every turn uses and the process builds on first use: the intent,
// mode and invariant classifiers (their embedded models, the word-vector table, their
// patterns), the token counter's BPE and the BM25 analyzer. A server calls it before it says
// it is ready, so that its first turn does not pay some 0.15 s for them. It reads neither the
// store nor the index's documents, and no monitor sees it.
func (p *Pipeline) Warm() {
	prev, text := warmTurns[0], warmTurns[1]
	if p.Intent != nil {
		p.Intent.Classify(IntentInput{Text: text, History: []string{prev}})
	}
	mode.Detect(p.cfg.Mode, "", text, prev, nil)
	invariant.Detect(text)
	token.Count(prev + " " + text)
	p.Index.Terms(text)
}

// WarmFocus builds the focus gazetteer of ctx's tenant, as the tenant's first turn would (some
// 0.3 s for 5,000 titles), unless it has one. A turn that arrives meanwhile waits for this
// build rather than starting its own. Once started, a build runs to its end whatever ctx says,
// as a turn's does: the turns waiting for it are not ctx's.
func (p *Pipeline) WarmFocus(ctx context.Context) error {
	if p.cfg.FocusWeight <= 0 {
		return nil // the focus is off: no turn reads a gazetteer
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := p.gazetteer(ctx)
	return err
}
