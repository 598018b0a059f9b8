package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MTRAG is one domain of the MTRAG multi-turn retrieval benchmark, or a set in its layout
// (DSTC11 track 5): its conversations (user turns in order with the agent's replies), the
// retrieval tasks in three query forms, and qrels.
type MTRAG struct {
	Domain string
	Dir    string
	// Reference says what the rewrite form is: MTRAG's rewrites were written by an LLM
	// (Mixtral 8x7B, per the MTRAG paper), DSTC11's are the last turn plus the gold entity's
	// name, a ceiling ragd cannot have at run time.
	Reference     string
	Conversations []Conversation
	// Tasks maps a query form (lastturn, questions, rewrite) to task id -> query text. Task ids
	// are "<conversation id><::><turn>".
	Tasks map[string]map[string]string
	Qrels Qrels
}

// Conversation is an MTRAG conversation.
type Conversation struct {
	ID    string
	Turns []ConversationTurn
}

// ConversationTurn is one user turn, the agent's reply, and the annotators' enrichments.
type ConversationTurn struct {
	Turn      int
	User      string
	Agent     string
	MultiTurn string // Follow-up, Clarification or N/A (the first turn)
}

// TaskID names a turn's retrieval task.
func TaskID(conversation string, turn int) string { return fmt.Sprintf("%s<::>%d", conversation, turn) }

// QueryForms are the query forms MTRAG ships, in report order.
var QueryForms = []string{"lastturn", "questions", "rewrite"}

// What a set's rewrite form is (MTRAG.Reference).
const (
	LLMRewrite      = "LLM rewrite"
	EntityReference = "entity reference (ceiling)"
)

// references names the sets whose rewrite form is not an LLM rewrite, by domain.
var references = map[string]string{"dstc11t5": EntityReference}

// LoadMTRAG reads a domain directory (…/mtrag/clapnq): <domain>_{lastturn,questions,rewrite}.jsonl,
// qrels.tsv, and the domain's conversations from conversations.jsonl in the directory or its
// parent.
func LoadMTRAG(dir string) (*MTRAG, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	m := &MTRAG{Domain: filepath.Base(abs), Dir: abs, Reference: LLMRewrite, Tasks: map[string]map[string]string{}}
	if r, ok := references[m.Domain]; ok {
		m.Reference = r
	}
	if m.Qrels, err = readQrels(filepath.Join(abs, "qrels.tsv")); err != nil {
		return nil, fmt.Errorf("eval: loading qrels: %w", err)
	}
	for _, form := range QueryForms {
		qs, err := readQueries(filepath.Join(abs, m.Domain+"_"+form+".jsonl"))
		if err != nil {
			return nil, fmt.Errorf("eval: loading %s tasks: %w", form, err)
		}
		m.Tasks[form] = map[string]string{}
		for _, q := range qs {
			m.Tasks[form][q.ID] = taskText(q.Text)
		}
	}
	path := filepath.Join(abs, "conversations.jsonl")
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join(filepath.Dir(abs), "conversations.jsonl")
	}
	if m.Conversations, err = readConversations(path, m.Domain); err != nil {
		return nil, fmt.Errorf("eval: loading conversations: %w", err)
	}
	if len(m.Conversations) == 0 {
		return nil, fmt.Errorf("eval: %s has no conversation of domain %q", path, m.Domain)
	}
	return m, nil
}

// taskText turns MTRAG's "|user|: ..." lines into the question text, one line per user turn
// joined by spaces (the questions form holds all of them).
func taskText(s string) string {
	var parts []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "|user|:"))
		if line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, " ")
}

func readConversations(path, domain string) ([]Conversation, error) {
	var out []Conversation
	err := eachLine(path, func(line []byte) error {
		var c struct {
			ID     string `json:"conversation_id"`
			Domain string `json:"domain"`
			Turns  []struct {
				Turn        int                 `json:"turn"`
				User        string              `json:"user"`
				Agent       string              `json:"agent"`
				Enrichments map[string][]string `json:"enrichments"`
			} `json:"turns"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			return fmt.Errorf("malformed JSON: %w", err)
		}
		if c.Domain != domain {
			return nil
		}
		conv := Conversation{ID: c.ID}
		for _, t := range c.Turns {
			mt := "N/A"
			if v := t.Enrichments["Multi-Turn"]; len(v) > 0 {
				mt = v[0]
			}
			conv.Turns = append(conv.Turns, ConversationTurn{Turn: t.Turn, User: t.User, Agent: t.Agent, MultiTurn: mt})
		}
		out = append(out, conv)
		return nil
	})
	return out, err
}
