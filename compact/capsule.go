package compact

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ragd/ragd/token"
)

// Capsule methods (ragd.Capsule's Method).
const (
	Extractive = "extractive"
	LLM        = "llm"
)

// Summarizer summarizes a finished goal's messages into a capsule's text of at most maxTokens.
// The LLM summarizer is one; Extract is the default, with no model.
type Summarizer interface {
	Summarize(ctx context.Context, goal []Message, maxTokens int) (string, error)
}

// maxNames is how many distinct names a capsule keeps, and maxPerKey how many distinct values of
// any other key: the latest ones, which is where a goal settles on its choice.
const (
	maxNames  = 3
	maxPerKey = 2
)

// Extract is the structured extractive summary of a finished goal, in at most maxTokens tokens
// (nothing for maxTokens < 1):
//
//	goal (turns 3-6): book table pasta palace italian | 2 people 19:00 friday
//	settled: name=Pasta Palace; people=2; time=18:30 / 19:00; day=friday; ref=X7GA2; status=booked
//
// The first line is what the user asked for: each user message of the goal without its
// function words and small talk (see compress), in order. The second holds the values the goal
// settled, from every message of the goal (see Values): the latest two values of each key, latest
// last, the latest few names, the reference codes, and whether the request was achieved. When the summary is too long, the request line is cut, then values
// from the oldest.
func Extract(goal []Message, maxTokens int) string {
	if maxTokens < 1 || len(goal) == 0 {
		return ""
	}
	var vals []Value
	for _, m := range goal {
		vals = append(vals, Values(m.Text)...)
	}
	settled := settle(vals)
	// The request line says what the settled values do not repeat; names stay whole.
	said := map[string]bool{}
	for _, v := range settled {
		if v.Key == KeyName {
			continue // a name's words stay with the rest of the name
		}
		for _, w := range words(v.Text) {
			said[w] = true
		}
	}
	var asked []string
	for _, m := range goal {
		if m.Role != "user" {
			continue
		}
		var kept []string
		for _, w := range strings.Fields(compress(m.Text)) {
			if !said[w] {
				kept = append(kept, w)
			}
		}
		if len(kept) > 0 {
			asked = append(asked, strings.Join(kept, " "))
		}
	}
	head := fmt.Sprintf("goal (turns %d-%d): ", goal[0].Turn, goal[len(goal)-1].Turn)
	render := func(asked string, settled []Value) string {
		var b strings.Builder
		b.WriteString(head)
		b.WriteString(asked)
		if len(settled) > 0 {
			b.WriteString("\nsettled: ")
			for i, v := range settled {
				if i > 0 {
					b.WriteString("; ")
				}
				b.WriteString(v.Key + "=" + v.Text)
			}
		}
		return b.String()
	}
	request := strings.Join(asked, " | ")
	text := render(request, settled)
	if token.Count(text) <= maxTokens {
		return text
	}
	// Values first: they are what a later turn is most likely to need verbatim.
	room := maxTokens - token.Count(render("", settled))
	if room > 0 {
		return render(token.Fit(request, room), settled)
	}
	for len(settled) > 0 && token.Count(render("", settled)) > maxTokens {
		settled = settled[1:]
	}
	return token.Fit(render("", settled), maxTokens)
}

// settle groups values by key, in the order of each key's last statement, keeping the last
// maxPerKey distinct values of a key (maxNames of names) and every reference code: a value the
// assistant proposed after the one the user asked for ("18:45 is taken; 19:45?") is kept beside
// it rather than guessed between.
func settle(vals []Value) []Value {
	type group struct {
		key  string
		vals []string
		last int
	}
	var groups []*group
	at := map[string]*group{}
	for i, v := range vals {
		g := at[v.Key]
		if g == nil {
			g = &group{key: v.Key}
			at[v.Key] = g
			groups = append(groups, g)
		}
		g.vals = slices.DeleteFunc(g.vals, func(o string) bool { return strings.EqualFold(o, v.Text) })
		g.vals = append(g.vals, v.Text)
		g.last = i
	}
	slices.SortStableFunc(groups, func(a, b *group) int { return a.last - b.last })
	var out []Value
	for _, g := range groups {
		keep := maxPerKey
		switch g.key {
		case KeyName:
			keep = maxNames
		case KeyRef:
			keep = len(g.vals)
		}
		out = append(out, Value{Key: g.key, Text: strings.Join(g.vals[max(len(g.vals)-keep, 0):], " / ")})
	}
	return out
}

// Extractor is Extract as a Summarizer.
type Extractor struct{}

// Summarize returns Extract(goal, maxTokens).
func (Extractor) Summarize(_ context.Context, goal []Message, maxTokens int) (string, error) {
	return Extract(goal, maxTokens), nil
}

// Outcomes lists what msgs (a goal so far) achieved: for each message that reports a request
// achieved or failed, the values it states, as "turn 2: name=Pasta Palace; people=2;
// ref=PP4521X; status=booked".
func Outcomes(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		if !achieved.MatchString(m.Text) && !failed.MatchString(m.Text) {
			continue
		}
		vals := Values(m.Text)
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = v.Key + "=" + v.Text
		}
		out = append(out, fmt.Sprintf("turn %d: %s", m.Turn, strings.Join(parts, "; ")))
	}
	return out
}
