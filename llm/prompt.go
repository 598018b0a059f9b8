package llm

import (
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Fact is one citable fact given to the model.
type Fact struct {
	// Marker is the citation marker without brackets, as in the fact sheet: "A1", "AA12".
	Marker string
	// Text is the fact itself.
	Text string
	// Source names where the fact comes from, for the model's context: the document title and,
	// when known, its date. It may be empty.
	Source string
}

// systemPrompt is sent with every answer. It is short because it is paid for on every turn, and
// it shows the exact marker form so that the model copies it rather than inventing its own.
const systemPrompt = "Answer the question using only the numbered facts you are given. " +
	"Cite every claim with the marker of the fact that supports it, in square brackets exactly as given, " +
	"for example [A1] or [A1][B2]. Never invent markers. " +
	"If the facts do not answer the question, say so briefly. " +
	"Answer in the language of the question."

// Messages builds the chat prompt: a system message with the rules (answer only from the facts,
// cite every claim with the markers as given, never invent markers, say briefly when the facts do
// not answer), then a user message with one fact per line, in the given order, and the question.
// The same input always gives the same messages, so prompts can be cached and compared.
func Messages(question string, facts []Fact) []openai.ChatCompletionMessage {
	var b strings.Builder
	b.WriteString("Facts:\n")
	if len(facts) == 0 {
		b.WriteString("(none)\n")
	}
	for _, f := range facts {
		b.WriteString("[")
		b.WriteString(f.Marker)
		b.WriteString("] ")
		// Line breaks inside a fact would make it read as several; one line per fact keeps
		// each marker next to the whole of its text.
		if src := oneLine(f.Source); src != "" {
			b.WriteString("(")
			b.WriteString(src)
			b.WriteString(") ")
		}
		b.WriteString(oneLine(f.Text))
		b.WriteString("\n")
	}
	b.WriteString("\nQuestion: ")
	b.WriteString(strings.TrimSpace(question))
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: systemPrompt},
		{Role: openai.ChatMessageRoleUser, Content: b.String()},
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
