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

// Prompt is what an answer is written from: the question, the facts it may cite, and the turn's
// context bundle.
type Prompt struct {
	Question string
	// Facts are the citable facts: their markers are the only ones an answer keeps.
	Facts []Fact
	// Context is the turn's context bundle without its evidence, rendered: rules and sticky
	// invariants, task state, the recent window, decisions and capsules of earlier goals, each
	// already cut to its budget. It may be empty.
	Context string
	// Evidence is the bundle's evidence section, rendered: the facts with their markers and the
	// passages they cite, cut to its budget. Empty lists Facts instead.
	Evidence string
}

// systemPrompt is sent with every answer. It is short because it is paid for on every turn, and
// it shows the exact marker form so that the model copies it rather than inventing its own.
const systemPrompt = "Answer the question using only the numbered facts you are given. " +
	"Cite every claim with the marker of the fact that supports it, in square brackets exactly as given, " +
	"for example [A1] or [A1][B2]. Never invent markers. " +
	"If the facts do not answer the question, say so briefly. " +
	"Answer in the language of the question."

// contextIntro introduces the conversation's context in the system message: its rules and
// constraints bind the answer as much as the instructions above.
const contextIntro = "\n\nThe conversation so far, as kept for this turn. Its rules and constraints " +
	"(must, must not, corrections) bind your answer; earlier goals appear as short capsules.\n\n"

// Messages builds the chat prompt: a system message with the rules (answer only from the facts,
// cite every claim with the markers as given, never invent markers, say briefly when the facts do
// not answer) followed by the conversation's context when there is one, then a user message with
// the evidence (the bundle's, or one fact per line in the given order) and the question. The same
// prompt always gives the same messages, so prompts can be cached and compared.
func Messages(p Prompt) []openai.ChatCompletionMessage {
	system := systemPrompt
	if c := strings.TrimSpace(p.Context); c != "" {
		system += contextIntro + c
	}
	var b strings.Builder
	if e := strings.TrimSpace(p.Evidence); e != "" {
		b.WriteString("Evidence:\n")
		b.WriteString(e)
		b.WriteString("\n")
	} else {
		b.WriteString("Facts:\n")
		if len(p.Facts) == 0 {
			b.WriteString("(none)\n")
		}
		for _, f := range p.Facts {
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
	}
	b.WriteString("\nQuestion: ")
	b.WriteString(strings.TrimSpace(p.Question))
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: system},
		{Role: openai.ChatMessageRoleUser, Content: b.String()},
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
