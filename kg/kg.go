// Package kg finds the entities a text talks about and counts which of them occur together, for
// ragd's mini knowledge graph: entities that keep coming back across the turns of a conversation
// pull in their 1-hop neighbours as an extra retrieval list.
//
// There is no model here. Entities are what English text and technical writing mark by their
// shape: capitalized phrases, acronyms, code identifiers, and link targets. The rules are cheap
// (Extract runs on every chunk at ingest and on every turn) and tuned to prefer missing an entity
// over inventing one, because a wrong entity drags unrelated chunks into an answer.
package kg

import "strings"

// Kind says which rule found an entity.
type Kind string

const (
	// Proper is a proper-noun phrase: "Bank of America", "Arizona Cardinals".
	Proper Kind = "proper"
	// Acronym is a short all-capitals word: "NFL", "GDPR", "S3", "AT&T".
	Acronym Kind = "acronym"
	// Code is an identifier, a command-line flag, a file path or a `backticked` span.
	Code Kind = "code"
	// Link is a link target: an absolute URL or a relative path.
	Link Kind = "link"
)

// MaxEntities caps the entities of one text. A chunk that names more things than this is a list
// or an index, and its tail adds noise to the graph rather than meaning.
const MaxEntities = 32

// maxNameLen drops longer names: a name is a unique-index key in the store, and a name that long
// (a URL with a long query, say) is unlikely to be shared by two chunks anyway.
const maxNameLen = 256

// Entity is one thing a text mentions.
type Entity struct {
	// Name identifies the entity across texts: lower-cased, white space collapsed, a possessive
	// 's dropped; for a link the canonical URL or path (see Extract).
	Name string
	Kind Kind
	// Surface is the entity as the text first wrote it, without a possessive, for display.
	Surface string
}

// Extract returns the entities of text, each Name once, in order of first appearance, at most
// MaxEntities. The link targets of the text (as the extract package found them) come first, in
// the order given: they are the most precise entities a text has, and the cap should not cut
// them. The rules, for English prose and technical writing:
//
//   - Proper-noun phrases are runs of capitalized words, which may hold "of", "the", "de", "&"
//     (and name particles like "van") between them: "Bank of America", "Johnson & Johnson". A
//     single capitalized word that opens a sentence is left out unless the text also capitalizes
//     it mid-sentence, since every sentence starts with a capital. Function words ("The",
//     "However", "This") are never part of a phrase; at the start of a sentence, neither are
//     common imperative verbs ("Install Docker") nor a plural joined to the rest by a connector
//     ("Shares of Johnson & Johnson"). A possessive ends a phrase and is dropped. Sentences start
//     after . ! ? : (not after "Dr." or "e.g."), at a blank line, a list item, a table cell, and
//     after a short line (a title); a long line wraps into the next.
//   - Acronyms are 2 to 6 capitals, digits or "&", starting with a capital: "NFL", "S3",
//     "AT&T"; a plural "s" is dropped ("APIs" is "api"). All-capitals words in a run of more
//     than four of them are shouting, not acronyms.
//   - Code is snake_case, camelCase, PascalCase with an inner capital ("PostgreSQL"; in a
//     phrase it is a word of the name: "GitHub Actions"), dotted names ("os.path.join"),
//     `backticked` spans, --flags (without their =value) and file paths ("config/app.yaml",
//     "./run.sh", "/etc/hosts", "github.com/ragd/ragd"). Fenced code blocks are skipped: their
//     every identifier would be an entity.
//   - Links are the http(s) URLs of the text and the links given, canonicalized: scheme and host
//     lower-cased; default port, fragment, user info and a trailing slash dropped; the path and
//     query keep their case, which servers may honour. file: URLs and relative links become
//     cleaned paths; links that name no document (mailto:, javascript:, "#section") are skipped.
func Extract(text string, links []string) []Entity {
	x := extraction{out: make([]Entity, 0, 16)}
	for _, l := range links {
		if name, ok := canonicalLink(l); ok {
			x.add(name, Link, strings.TrimSpace(l))
		}
	}
	toks := tokenize(text)
	markShouting(toks)
	for i := 0; i < len(toks) && len(x.out) < MaxEntities; {
		t := &toks[i]
		switch t.class {
		case classLink:
			x.add(t.name, Link, t.text)
		case classCode:
			x.add(t.name, Code, t.text)
		case classAcronym, classRoman:
			if !t.shouted {
				x.add(t.name, Acronym, t.text)
			}
		case classCapital, classMixed:
			i = x.phrase(toks, i)
			continue
		}
		i++
	}
	return x.out
}

// extraction collects the entities of one text.
type extraction struct {
	out []Entity
	// midSentence holds the names of capitalized words seen anywhere but at a sentence start,
	// built on first use: most texts never need it.
	midSentence map[string]bool
}

// add appends an entity unless its name is empty, too long, already there, or the cap is
// reached. A linear scan is cheaper than a map for at most MaxEntities names.
func (x *extraction) add(name string, kind Kind, surface string) {
	if name == "" || len(name) > maxNameLen || len(x.out) >= MaxEntities {
		return
	}
	for _, e := range x.out {
		if e.Name == name {
			return
		}
	}
	x.out = append(x.out, Entity{Name: name, Kind: kind, Surface: surface})
}

// maxPhraseWords bounds a phrase, connectors included: a longer run of capitals is a title in
// title case or a list of names, not one entity.
const maxPhraseWords = 8

// phrase adds the proper-noun phrase that starts at toks[i] (a capitalized word) and returns the
// index of the first token after it.
func (x *extraction) phrase(toks []token, i int) int {
	last := phraseEnd(toks, i)
	next := last + 1
	// An imperative verb opening a sentence is not part of the name after it: "Install Docker
	// Desktop" names "Docker Desktop". Nor is a plural joined to a name by a connector
	// ("Shares of Johnson & Johnson"), unless the text capitalizes it elsewhere: the heads of
	// names built this way are singular ("Bank of America", "University of Chicago").
	if w := toks[i]; w.start && (starters[w.name] ||
		i < last && toks[i+1].class == classConnector && strings.HasSuffix(w.name, "s") &&
			!x.capitalizedMidSentence(toks, w.name)) {
		i++
		for i <= last && toks[i].class == classConnector {
			i++
		}
		if i > last {
			return next
		}
	}
	words := toks[i:next]
	if len(words) == 1 {
		w := words[0]
		if w.class == classMixed {
			x.add(w.name, Code, w.text)
			return next
		}
		if w.start && !x.capitalizedMidSentence(toks, w.name) {
			return next
		}
		x.add(w.name, Proper, w.text)
		return next
	}
	var name, surface strings.Builder
	n := len(words) - 1
	for _, w := range words {
		n += len(w.text)
	}
	name.Grow(n)
	surface.Grow(n)
	for j, w := range words {
		if j > 0 {
			name.WriteByte(' ')
			surface.WriteByte(' ')
		}
		name.WriteString(w.name)
		surface.WriteString(w.text)
	}
	x.add(name.String(), Proper, surface.String())
	return next
}

// phraseEnd returns the index of the last word of the phrase that starts at toks[i]: the run of
// capitalized words joined only by spaces and connectors, which may not end it.
func phraseEnd(toks []token, i int) int {
	last := i
	for k := i + 1; k < len(toks) && toks[k].join && k-i < maxPhraseWords; k++ {
		c := toks[k].class
		if c == classConnector {
			continue
		}
		// A Roman numeral continues a name it follows directly: "World War II", not "Bank of II".
		if c != classCapital && c != classMixed && (c != classRoman || last != k-1) {
			break
		}
		last = k
	}
	return last
}

// capitalizedMidSentence reports whether the text capitalizes the word (by name) somewhere other
// than at the start of a sentence, which tells a name ("Microsoft") from an ordinary word that
// happens to open a sentence ("Revenue").
func (x *extraction) capitalizedMidSentence(toks []token, name string) bool {
	if x.midSentence == nil {
		x.midSentence = make(map[string]bool)
		for _, t := range toks {
			if t.class == classCapital && !t.start {
				x.midSentence[t.name] = true
			}
		}
	}
	return x.midSentence[name]
}
