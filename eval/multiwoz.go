package eval

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// WOZDialogue is one MultiWOZ 2.1 dialogue: its messages in order (user, system, user, ...) and
// the user's goals, one per domain, as its belief states show them.
type WOZDialogue struct {
	ID       string
	Messages []WOZMessage
	// Goals are in the order they start; every dialogue with any belief state has at least one.
	Goals []WOZGoal
}

// WOZMessage is one message of a dialogue.
type WOZMessage struct {
	Role string // "user" or "assistant" (MultiWOZ's system)
	Text string
	// Acts are the message's annotated dialogue acts: "Domain-Act" (Hotel-Inform,
	// Restaurant-Request, general-thank) -> its [slot, value] pairs.
	Acts map[string][][]string
}

// WOZGoal is what the user wanted of one domain.
//
// Start is the index in Messages of the user message where the domain first got belief-state
// slots: MultiWOZ records the belief state on each system message, as it stands after the user
// message before it, so the goal starts at the user message before the first system message
// whose state has a slot of the domain filled (a semi or book slot other than "booked" whose
// value is not "" or "not mentioned"). The first goal's start is not a boundary: a boundary is
// the start of a later goal.
type WOZGoal struct {
	Domain string
	Start  int
	// Values are the domain's slots in the dialogue's final belief state, slot -> value, as
	// annotated (lower case). Slots whose value says nothing a text could contain are left out
	// (see wozValueless).
	Values map[string]string
}

// Boundaries returns the message indexes where a goal after the first starts.
func (d WOZDialogue) Boundaries() []int {
	var out []int
	for _, g := range d.Goals[min(1, len(d.Goals)):] {
		out = append(out, g.Start)
	}
	return out
}

// GoalAt returns the index of the goal message i belongs to by the gold boundaries: the last
// goal that started at or before i (0 before the first goal starts).
func (d WOZDialogue) GoalAt(i int) int {
	g := 0
	for j, goal := range d.Goals {
		if goal.Start <= i {
			g = j
		}
	}
	return g
}

// wozValueless are annotated values that no text states as such: yes/no flags (parking=yes is
// said as "free parking"), "dontcare" and "none".
var wozValueless = map[string]bool{"yes": true, "no": true, "dontcare": true, "dont care": true, "don't care": true,
	"none": true, "not mentioned": true, "": true}

// LoadMultiWOZ reads a MultiWOZ 2.1 file (the original format: a JSON object of dialogues, each
// with a goal and a log of alternating user and system turns, the system turns carrying the
// belief state in metadata). Dialogues are returned sorted by id.
func LoadMultiWOZ(path string) ([]WOZDialogue, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	var file map[string]struct {
		Log []struct {
			Text     string                     `json:"text"`
			Metadata map[string]json.RawMessage `json:"metadata"`
			Acts     map[string][][]string      `json:"dialog_act"`
		} `json:"log"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		return nil, fmt.Errorf("eval: %s is not a MultiWOZ file: %w", path, err)
	}
	if len(file) == 0 {
		return nil, fmt.Errorf("eval: %s holds no dialogue", path)
	}
	var out []WOZDialogue
	for _, id := range slices.Sorted(maps.Keys(file)) {
		d := WOZDialogue{ID: id}
		var last map[string]map[string]string
		for i, turn := range file[id].Log {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			d.Messages = append(d.Messages, WOZMessage{Role: role, Text: strings.Join(strings.Fields(turn.Text), " "), Acts: turn.Acts})
			if role != "assistant" {
				continue
			}
			state, err := wozState(turn.Metadata)
			if err != nil {
				return nil, fmt.Errorf("eval: %s message %d: %w", id, i, err)
			}
			for _, dom := range slices.Sorted(maps.Keys(state)) {
				if len(state[dom]) > 0 && !slices.ContainsFunc(d.Goals, func(g WOZGoal) bool { return g.Domain == dom }) {
					d.Goals = append(d.Goals, WOZGoal{Domain: dom, Start: i - 1})
				}
			}
			last = state
		}
		for j := range d.Goals {
			d.Goals[j].Values = map[string]string{}
			for slot, v := range last[d.Goals[j].Domain] {
				if !wozValueless[v] {
					d.Goals[j].Values[slot] = v
				}
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// wozState reads a system turn's belief state: domain -> filled slot -> value.
func wozState(meta map[string]json.RawMessage) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for dom, raw := range meta {
		var st struct {
			Book map[string]any    `json:"book"`
			Semi map[string]string `json:"semi"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("belief state of %s: %w", dom, err)
		}
		slots := map[string]string{}
		for k, v := range st.Semi {
			slots[k] = v
		}
		for k, v := range st.Book {
			if s, ok := v.(string); ok && k != "booked" {
				slots[k] = s
			}
		}
		for k, v := range slots {
			if v == "" || v == "not mentioned" {
				delete(slots, k)
			}
		}
		out[dom] = slots
	}
	return out, nil
}
