// Package chunk splits an extracted document into windows of tokens that follow its structure:
// blocks of one section are packed together while they fit, a heading starts a new chunk, and
// only a block too long for a chunk of its own is cut, at sentence boundaries where it can be.
package chunk

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/extract"
	"github.com/ragd/ragd/token"
)

// Defaults for Options.
const (
	DefaultMaxTokens = 256
	DefaultOverlap   = 32
)

// minMaxTokens keeps chunks large enough to carry a heading and a sentence.
const minMaxTokens = 32

// Options tune how Split sizes chunks.
type Options struct {
	// MaxTokens bounds a chunk's cl100k_base tokens, the heading lines inside it included. Zero
	// means DefaultMaxTokens.
	MaxTokens int
	// Overlap is about how many tokens a window repeats from the end of the previous one when a
	// block too long for one chunk is cut, so that text near a cut keeps some context. Zero means
	// DefaultOverlap; a negative value turns overlap off.
	Overlap int
}

// WithDefaults returns o with zero fields set to their defaults and a negative Overlap set to 0.
func (o Options) WithDefaults() Options {
	if o.MaxTokens == 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	switch {
	case o.Overlap == 0:
		o.Overlap = DefaultOverlap
	case o.Overlap < 0:
		o.Overlap = 0
	}
	return o
}

// Validate reports whether o, with defaults applied, makes usable windows. The error matches
// ragd.ErrInvalid.
func (o Options) Validate() error {
	o = o.WithDefaults()
	if o.MaxTokens < minMaxTokens {
		return ragd.Invalidf("max_tokens", "must be at least %d, got %d", minMaxTokens, o.MaxTokens)
	}
	if o.Overlap >= o.MaxTokens/2 {
		return ragd.Invalidf("overlap", "must be less than half of max_tokens (%d), got %d", o.MaxTokens/2, o.Overlap)
	}
	return nil
}

// Chunk is a window of a document's text.
type Chunk struct {
	Heading string // heading path such as "Install > Linux", "" when none
	// Text is the document's text from the chunk's first block, or block part, to its last.
	Text string
	// PageStart and PageEnd are the 1-based, inclusive pages the text comes from; 0 without pages.
	PageStart int
	PageEnd   int
	// CharStart and CharEnd are Unicode code point offsets of Text in Doc.Text, end exclusive.
	CharStart int
	CharEnd   int
	Tokens    int // token.Count(Text), at most MaxTokens
}

// Split cuts doc into chunks in document order. Options are taken with defaults applied; a
// MaxTokens below the minimum that Validate enforces is raised to it.
func Split(doc *extract.Doc, opt Options) []Chunk {
	opt = opt.WithDefaults()
	opt.MaxTokens = max(opt.MaxTokens, minMaxTokens)
	s := splitter{doc: doc, opt: opt, runes: runeCounter{s: doc.Text}}
	for _, b := range doc.Blocks {
		s.block(b)
	}
	s.flush()
	return s.chunks
}

// span is a block, or part of one, trimmed of surrounding space.
type span struct {
	start, end int // byte offsets into Doc.Text
	page       int
	tokens     int
	heading    bool
}

// window is a run of spans that makes one chunk.
type window struct {
	spans  []span
	tokens int // exact count of the window's text
}

type splitter struct {
	doc    *extract.Doc
	opt    Options
	path   [6]string // heading text by level, "" where unset
	cur    []span    // spans packed into the next chunk
	est    int       // tokens of cur by spans and gaps, an upper bound in practice
	runes  runeCounter
	chunks []Chunk
}

func (s *splitter) block(b extract.Block) {
	if b.Start < 0 || b.End > len(s.doc.Text) || b.Start > b.End {
		return
	}
	text := s.doc.Text[b.Start:b.End]
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return
	}
	start := b.Start + strings.Index(text, trimmed)
	sp := span{start: start, end: start + len(trimmed), page: b.Page, tokens: token.Count(trimmed), heading: b.Kind == extract.Heading}
	if sp.heading {
		if s.hasBody() {
			s.flush()
		}
		level := min(max(b.Level, 1), len(s.path))
		s.path[level-1] = ragd.ClipTitle(strings.Join(strings.Fields(trimmed), " "))
		clear(s.path[level:])
	}
	if s.fits(sp) {
		s.push(sp)
		return
	}
	// A chunk of headings only keeps packing, so that a heading is never left alone.
	if s.hasBody() {
		s.flush()
	}
	if s.fits(sp) {
		s.push(sp)
		return
	}
	// Too long even for a chunk of its own: cut it into windows, the first of which takes the
	// pending headings, and keep the last open for the blocks that follow.
	limit := max(s.opt.MaxTokens-s.est-1, s.opt.MaxTokens/2)
	units := slices.Concat(s.cur, s.units(sp, limit))
	ws := s.windows(units, s.opt.Overlap)
	for _, w := range ws[:len(ws)-1] {
		s.emit(w)
	}
	last := ws[len(ws)-1]
	s.cur, s.est = last.spans, last.tokens
}

func (s *splitter) hasBody() bool {
	for _, sp := range s.cur {
		if !sp.heading {
			return true
		}
	}
	return false
}

func (s *splitter) fits(sp span) bool {
	if len(s.cur) == 0 {
		return sp.tokens <= s.opt.MaxTokens
	}
	return s.est+s.gap(s.cur[len(s.cur)-1], sp)+sp.tokens <= s.opt.MaxTokens
}

func (s *splitter) push(sp span) {
	if len(s.cur) > 0 {
		s.est += s.gap(s.cur[len(s.cur)-1], sp)
	}
	s.cur = append(s.cur, sp)
	s.est += sp.tokens
}

// gap estimates the tokens that the text between two spans adds. A single space joins the
// next word's token; anything else, such as the "\n\n" between blocks, takes about one.
func (s *splitter) gap(a, b span) int {
	if between := s.doc.Text[a.end:b.start]; between == "" || between == " " {
		return 0
	}
	return 1
}

// flush emits the packed spans. The estimate is an upper bound in practice, so this is one
// chunk; windows still checks the exact count.
func (s *splitter) flush() {
	if len(s.cur) == 0 {
		return
	}
	for _, w := range s.windows(s.cur, 0) {
		s.emit(w)
	}
	s.cur, s.est = nil, 0
}

// windows packs units greedily into windows of at most MaxTokens. Each window after the first
// repeats whole units from the end of the previous one, which keeps windows starting at
// sentences: as many as come closest to overlap tokens while the window can still take the
// unit that did not fit in the previous one. Every unit must fit a window by itself.
func (s *splitter) windows(units []span, overlap int) []window {
	var ws []window
	for i := 0; i < len(units); {
		j, est := i+1, units[i].tokens
		for j < len(units) && est+s.gap(units[j-1], units[j])+units[j].tokens <= s.opt.MaxTokens {
			est += s.gap(units[j-1], units[j]) + units[j].tokens
			j++
		}
		n := token.Count(s.text(units[i:j]))
		for n > s.opt.MaxTokens && j-i > 1 {
			j--
			n = token.Count(s.text(units[i:j]))
		}
		ws = append(ws, window{spans: units[i:j], tokens: n})
		if j == len(units) {
			break
		}
		k, repeated, reach := j, 0, units[j].tokens
		for k-1 > i {
			u := units[k-1]
			reach += u.tokens + s.gap(u, units[k])
			if repeated+u.tokens/2 >= overlap || reach > s.opt.MaxTokens {
				break
			}
			k--
			repeated += u.tokens
		}
		i = k
	}
	return ws
}

func (s *splitter) text(spans []span) string {
	return s.doc.Text[spans[0].start:spans[len(spans)-1].end]
}

func (s *splitter) emit(w window) {
	first, last := w.spans[0], w.spans[len(w.spans)-1]
	c := Chunk{
		Text:      s.text(w.spans),
		PageStart: first.page,
		PageEnd:   first.page,
		CharStart: s.runes.at(first.start),
		CharEnd:   s.runes.at(last.end),
		Tokens:    w.tokens,
	}
	for _, sp := range w.spans {
		c.PageStart = min(c.PageStart, sp.page)
		c.PageEnd = max(c.PageEnd, sp.page)
	}
	var path []string
	for _, h := range s.path {
		if h != "" {
			path = append(path, h)
		}
	}
	c.Heading = strings.Join(path, " > ")
	s.chunks = append(s.chunks, c)
}

// units cuts a span into sentences, and sentences of more than limit tokens into pieces.
func (s *splitter) units(sp span, limit int) []span {
	// Pieces the size of the overlap let windows over a long run repeat about Overlap tokens.
	size := limit
	if s.opt.Overlap > 0 {
		size = min(size, s.opt.Overlap)
	}
	var us []span
	for _, r := range sentences(s.doc.Text[sp.start:sp.end]) {
		u := span{start: sp.start + r[0], end: sp.start + r[1], page: sp.page, tokens: sp.tokens}
		if u.start != sp.start || u.end != sp.end {
			u.tokens = token.Count(s.doc.Text[u.start:u.end])
		}
		if u.tokens <= limit {
			us = append(us, u)
			continue
		}
		us = append(us, s.cut(u, size)...)
	}
	return us
}

// cut splits u into pieces of at most n tokens at token boundaries, moved back to a space when
// one is near.
func (s *splitter) cut(u span, n int) []span {
	// token.Truncate encodes all it is given: hand it about one and a half pieces' worth of text,
	// by the unit's own bytes per token, rather than all the rest. A prefix that holds fewer
	// than n tokens just makes a shorter piece.
	prefix := n*(u.end-u.start)/max(u.tokens, 1)*3/2 + utf8.UTFMax
	var ps []span
	for start := u.start; start < u.end; {
		end := runeStart(s.doc.Text, min(u.end, start+prefix))
		end = start + len(token.Truncate(s.doc.Text[start:end], n))
		// A token can end inside a multi-byte character.
		end = runeStart(s.doc.Text, end)
		if i := strings.LastIndexFunc(s.doc.Text[start:end], unicode.IsSpace); i > (end-start)/2 {
			end = start + i
		}
		if end <= start {
			_, size := utf8.DecodeRuneInString(s.doc.Text[start:])
			end = start + size
		}
		if piece := strings.TrimSpace(s.doc.Text[start:end]); piece != "" {
			p := start + strings.Index(s.doc.Text[start:end], piece)
			ps = append(ps, span{start: p, end: p + len(piece), page: u.page, tokens: token.Count(piece)})
		}
		start = end
	}
	return ps
}

// runeStart moves i back to the start of the character it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// sentences returns the byte ranges of the sentences and lines of s, without the space around
// them. A sentence ends with '.', '!' or '?', and any closing quotes or brackets, before a space.
func sentences(s string) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range s {
		if !unicode.IsSpace(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && (r == '\n' || endsSentence(s[start:i])) {
			end := start + len(strings.TrimRightFunc(s[start:i], unicode.IsSpace))
			out = append(out, [2]int{start, end})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}

func endsSentence(s string) bool {
	s = strings.TrimRight(s, `"')]”’»`)
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(".!?。！？…", r)
}

// runeCounter converts byte offsets into code point offsets. Chunks come in document order and
// overlap little, so counting from the last offset asked keeps the total work linear.
type runeCounter struct {
	s    string
	b, r int // the last byte offset asked and its code point offset
}

func (c *runeCounter) at(b int) int {
	if b >= c.b {
		c.r += utf8.RuneCountInString(c.s[c.b:b])
	} else {
		c.r -= utf8.RuneCountInString(c.s[b:c.b])
	}
	c.b = b
	return c.r
}
