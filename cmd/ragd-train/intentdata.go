package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ragd/ragd/classify"
	"github.com/ragd/ragd/eval"
	"github.com/ragd/ragd/intent"
)

// Intent rows are generated from what the public conversations' own annotations say about a
// turn, never from the text alone (that would teach the classifier its own rules back):
//
//   - MTRAG (mtrag/conversations.jsonl): a turn whose Question Type is Comparative is compare;
//     one whose Multi-Turn type is Clarification is same-sources (it asks about the previous
//     answer). Follow-up turns are left out: the enrichment does not say whether they keep the
//     subject.
//   - MultiWOZ (multiwoz/val.json): user dialogue acts give each turn its domains. A turn with a
//     domain that none of the previous three user turns had is new-topic (a domain switch); a
//     turn on those domains that only informs constraints is drill-down; one that requests an
//     attribute (phone, address…) right after the system named an entity is same-sources.
//   - DSTC11 track 5 (dstc11t5/conversations.jsonl): the judged last turn asks about one
//     entity's reviews or FAQs; when the entity (from the reference file) was named earlier in
//     the conversation and the turn does not name it, the turn asks about a presented result:
//     same-sources.
//
// History is the previous user turns, at most three, as in intent_train.jsonl. A row whose
// source or text is already in intent_train.jsonl is left out (the hand label stands). Sources
// keep the labelled file's form (real:<set>:<conversation>#<turn>), so that cross-validation
// keeps a conversation's rows, hand-labelled or generated, in one fold.
type intentSources struct {
	// WOZEvery and DSTCEvery take every n-th dialogue (sorted by id), so that the task-oriented
	// sets do not outnumber the rest.
	WOZEvery, DSTCEvery int
}

var defaultIntentSources = intentSources{WOZEvery: 5, DSTCEvery: 5}

// generateIntentRows writes the generated rows to out (JSON Lines) and a summary to w.
func generateIntentRows(w io.Writer, data, out string, src intentSources) error {
	labelled, err := intent.LoadExamples(filepath.Join(data, "labels", "intent_train.jsonl"))
	if err != nil {
		return err
	}
	var rows []intent.Example
	for _, gen := range []func(string, intentSources) ([]intent.Example, error){mtragIntentRows, wozIntentRows, dstcIntentRows} {
		r, err := gen(data, src)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	seen := map[string]bool{}
	hand := map[string]intent.Label{}
	for _, r := range labelled {
		seen["src\x00"+r.Source], seen["text\x00"+r.Text] = true, true
		hand[r.Source] = r.Intent
	}
	var overlap, agree int
	kept := rows[:0]
	for _, r := range rows {
		if l, ok := hand[r.Source]; ok {
			overlap++
			if l == r.Intent {
				agree++
			}
		}
		if seen["src\x00"+r.Source] || seen["text\x00"+r.Text] {
			continue
		}
		seen["text\x00"+r.Text] = true
		kept = append(kept, r)
	}
	rows = kept
	for i := range rows {
		rows[i].ID = fmt.Sprintf("intent-gen-%04d", i+1)
	}
	if err := writeRows(out, rows); err != nil {
		return err
	}
	counts := map[string]int{}
	for _, r := range rows {
		set := strings.SplitN(r.Source, ":", 3)[1]
		counts[set+" "+string(r.Intent)]++
	}
	fmt.Fprintf(w, "%d rows written to %s; of the %d turns intent_train.jsonl labels by hand, the rules gave %d the same label (those rows are left out)\n",
		len(rows), out, overlap, agree)
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(w, "  %-32s %d\n", k, counts[k])
	}
	return nil
}

func writeRows(path string, rows []intent.Example) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// lastThree returns the last three of texts, copied.
func lastThree(texts []string) []string { return slices.Clone(texts[max(0, len(texts)-3):]) }

func mtragIntentRows(data string, _ intentSources) ([]intent.Example, error) {
	type turn struct {
		Turn        int                 `json:"turn"`
		User        string              `json:"user"`
		Enrichments map[string][]string `json:"enrichments"`
	}
	convs, err := classify.LoadJSONL[struct {
		ID    string `json:"conversation_id"`
		Turns []turn `json:"turns"`
	}](filepath.Join(data, "mtrag", "conversations.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []intent.Example
	for _, c := range convs {
		var history []string
		for _, t := range c.Turns {
			text := strings.TrimSpace(t.User)
			if len(history) > 0 {
				label, why := intent.Label(""), ""
				switch {
				case slices.Contains(t.Enrichments["Question Type"], "Comparative"):
					label, why = intent.Compare, "MTRAG Question Type: Comparative"
				case slices.Contains(t.Enrichments["Multi-Turn"], "Clarification"):
					label, why = intent.SameSources, "MTRAG Multi-Turn: Clarification"
				}
				if label != "" {
					out = append(out, intent.Example{History: lastThree(history), Text: text, Intent: label,
						Source: fmt.Sprintf("real:mtrag:%s#turn%d", c.ID, t.Turn), Note: "generated: " + why})
				}
			}
			history = append(history, text)
		}
	}
	return out, nil
}

// wozDomains returns the domains of a message's dialogue acts, "general" left out.
func wozDomains(acts map[string][][]string) []string {
	var out []string
	for act := range acts {
		if dom, _, _ := strings.Cut(act, "-"); dom != "general" && !slices.Contains(out, dom) {
			out = append(out, dom)
		}
	}
	slices.Sort(out)
	return out
}

// wozNamesEntity reports whether a system message names an entity (a Name or a train Id slot).
func wozNamesEntity(acts map[string][][]string) bool {
	for _, slots := range acts {
		for _, sv := range slots {
			if len(sv) == 2 && (sv[0] == "Name" || sv[0] == "Id") && sv[1] != "none" {
				return true
			}
		}
	}
	return false
}

func wozIntentRows(data string, src intentSources) ([]intent.Example, error) {
	dialogues, err := eval.LoadMultiWOZ(filepath.Join(data, "multiwoz", "val.json"))
	if err != nil {
		return nil, err
	}
	var out []intent.Example
	for n, d := range dialogues {
		if n%src.WOZEvery != 0 {
			continue
		}
		var history []string
		var recent [][]string // domains of the previous user turns
		took := map[intent.Label]bool{}
		for i, m := range d.Messages {
			if m.Role != "user" {
				continue
			}
			doms := wozDomains(m.Acts)
			if len(history) > 0 && len(doms) > 0 {
				var before []string
				for _, ds := range recent[max(0, len(recent)-3):] {
					before = append(before, ds...)
				}
				label, why := intent.Label(""), ""
				switch {
				case len(before) == 0:
				case slices.ContainsFunc(doms, func(d string) bool { return !slices.Contains(before, d) }):
					label, why = intent.NewTopic, "MultiWOZ domain switch to "+strings.Join(doms, "+")
				case i > 0 && wozNamesEntity(d.Messages[i-1].Acts) && hasAct(m.Acts, "Request"):
					label, why = intent.SameSources, "MultiWOZ request about the entity the system named"
				case onlyAct(m.Acts, "Inform"):
					label, why = intent.DrillDown, "MultiWOZ constraints on the same domain"
				}
				if label != "" && !took[label] { // one row of each label per dialogue
					took[label] = true
					out = append(out, intent.Example{History: lastThree(history), Text: m.Text, Intent: label,
						Source: fmt.Sprintf("real:multiwoz21:%s#%d", strings.TrimSuffix(d.ID, ".json"), i), Note: "generated: " + why})
				}
			}
			history = append(history, m.Text)
			recent = append(recent, doms)
		}
	}
	return out, nil
}

// hasAct reports whether a non-general act of the message is of the kind ("Request").
func hasAct(acts map[string][][]string, kind string) bool {
	for act := range acts {
		if dom, k, _ := strings.Cut(act, "-"); dom != "general" && k == kind {
			return true
		}
	}
	return false
}

// onlyAct reports whether every non-general act of the message is of the kind.
func onlyAct(acts map[string][][]string, kind string) bool {
	for act := range acts {
		if dom, k, _ := strings.Cut(act, "-"); dom != "general" && k != kind {
			return false
		}
	}
	return true
}

// dstcConversation is a conversation of dstc11t5/conversations.jsonl.
type dstcConversation struct {
	ID    string `json:"conversation_id"`
	Turns []struct {
		Turn   int    `json:"turn"`
		User   string `json:"user"`
		Agent  string `json:"agent"`
		TaskID string `json:"task_id"`
	} `json:"turns"`
}

// dstcEntity finds the entity a DSTC11 reference query names: "… (HOBSONS HOUSE)".
var dstcEntity = regexp.MustCompile(`\(([^()]+)\)\s*$`)

func dstcIntentRows(data string, src intentSources) ([]intent.Example, error) {
	dir := filepath.Join(data, "dstc11t5")
	refs, err := classify.LoadJSONL[struct {
		ID   string `json:"_id"`
		Text string `json:"text"`
	}](filepath.Join(dir, "dstc11t5_rewrite.jsonl"))
	if err != nil {
		return nil, err
	}
	entity := map[string]string{}
	for _, r := range refs {
		if m := dstcEntity.FindStringSubmatch(r.Text); m != nil {
			entity[r.ID] = m[1]
		}
	}
	convs, err := classify.LoadJSONL[dstcConversation](filepath.Join(dir, "conversations.jsonl"))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(convs, func(a, b dstcConversation) int { return cmp.Compare(a.ID, b.ID) })
	var out []intent.Example
	for n, c := range convs {
		if n%src.DSTCEvery != 0 || len(c.Turns) < 2 {
			continue
		}
		last := c.Turns[len(c.Turns)-1]
		ent := strings.TrimPrefix(strings.ToLower(entity[last.TaskID]), "the ")
		if ent == "" || strings.Contains(strings.ToLower(last.User), ent) {
			continue
		}
		var history []string
		named := false
		for _, t := range c.Turns[:len(c.Turns)-1] {
			history = append(history, strings.TrimSpace(t.User))
			named = named || strings.Contains(strings.ToLower(t.User+" "+t.Agent), ent)
		}
		if !named {
			continue
		}
		out = append(out, intent.Example{History: lastThree(history), Text: strings.TrimSpace(last.User), Intent: intent.SameSources,
			Source: fmt.Sprintf("real:dstc11t5:%s#turn%d", c.ID, last.Turn), Note: "generated: DSTC11 question about the entity named earlier"})
	}
	return out, nil
}
