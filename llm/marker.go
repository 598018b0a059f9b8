package llm

import (
	"slices"
	"strings"
)

// MaxHold is the most bytes a MarkerFilter holds back at any moment (plus one blank that stood
// before a held "["). It bounds how long the stream can stall on a bracket that might still
// become a citation: a citation group longer than this is committed to as a citation (see
// MarkerFilter) instead of being held whole.
const MaxHold = 64

// MarkerFilter removes citation markers that are not in a valid set from streamed text.
//
// A citation group is "[", optional white space, one or more markers separated by white space,
// commas or semicolons, optional separators, and "]"; a marker is one or more capital letters
// followed by one or more digits ("A1", "AA12"). That is a little wider than what a reader of
// the answer takes for a citation, so that nothing a reader would take for one gets through
// unchecked. A closed group whose markers are all valid is emitted as it came. A group with some
// phantom markers is rewritten with only the valid ones, joined by ", " ("[A1, X9]" becomes
// "[A1]"). A group with no valid marker vanishes, and the text around it is joined as if it had
// never been there: "claim [X9]." becomes "claim.", "claim [X9] and" becomes "claim and",
// "claim [X9][A1]" becomes "claim [A1]", and at the start of a line the blanks after it go. Only
// where joining would make a new group out of pieces does it leave "[]" instead: "[X9[Y8]]"
// becomes "[X9[]]", not "[X9]".
//
// A marker may arrive split across deltas ("[A" then "1]"), so a "[" and what follows it are held
// back while they can still become a citation group. A "[" followed by anything that cannot, such
// as "[see above]", "[1]" or "[a1]", is released at once as ordinary text, and so is a bracket
// that stops matching the grammar later ("[A1 is" is text). Only MaxHold bytes are held: a group
// that grows longer is taken to be a citation from then on, its valid markers are emitted as
// they complete and it is closed with "]" wherever it ends.
//
// Flush drops an unclosed group at the end of the stream ("claim [A1" becomes "claim"): it is
// what a model cut off mid-citation leaves behind, and half a marker helps no reader.
//
// The filter works on bytes and decides only on content, so the output never depends on how the
// text was split into deltas. Multi-byte UTF-8 text passes through unchanged: its bytes never
// take part in the ASCII grammar. A MarkerFilter is not safe for concurrent use.
type MarkerFilter struct {
	valid    map[string]bool
	phantoms []string
	seen     map[string]bool

	out     strings.Builder // what the current Write or Flush call emits
	emitted int             // bytes emitted by earlier calls
	// exposedAt is the output length right after an open bracket was released verbatim with
	// nothing after it yet that breaks its grammar ("[X9" before "[" or a blank), or -1.
	exposedAt int

	// Outside a group.
	blank     byte // a held space or tab: it goes away if the group after it vanishes
	vanished  bool // blank stood before a group that vanished: keep it only between words
	lineStart bool // nothing but vanished groups since the last newline or the start
	skipBlank bool // a group vanished at a line start: drop the blanks after it

	// Inside a group, from its "[" until it is decided.
	group bool
	pre   byte // the blank held before the "[", or 0
	// raw is the group as received, for releasing it verbatim. Once the group is committed it is
	// only the text after the last decided marker, released if the group breaks there.
	raw       []byte
	markEnd   int      // length of raw up to the end of its last complete marker
	kept      []string // valid markers of the group so far
	dropped   []string // phantom markers of the group so far
	tok       []byte   // the marker being read
	long      bool     // tok outgrew MaxHold: it cannot be valid, the rest of it is not kept
	digits    bool     // tok has reached its digits, so it is a complete marker if it ends here
	inSep     bool     // reading the separator after a complete marker
	committed bool     // the group outgrew MaxHold and is treated as a citation
	opened    bool     // committed, and its "[" has been emitted
}

// NewMarkerFilter returns a filter that keeps the markers in valid (without brackets, e.g.
// "A1") and drops every other marker. valid is read as the stream goes, not copied.
func NewMarkerFilter(valid map[string]bool) *MarkerFilter {
	return &MarkerFilter{valid: valid, seen: make(map[string]bool), lineStart: true, exposedAt: -1}
}

// Write consumes the next delta of the stream and returns the text that can be emitted now.
func (f *MarkerFilter) Write(delta string) string {
	for i := 0; i < len(delta); i++ {
		if f.group {
			f.groupByte(delta[i])
		} else {
			f.textByte(delta[i])
		}
	}
	return f.take()
}

// Flush ends the stream: it returns the text still held, except an unclosed citation group,
// which is dropped. The filter is then ready for a new stream; Phantoms keeps counting.
func (f *MarkerFilter) Flush() string {
	switch {
	case f.group && f.committed:
		// What it has emitted is a citation already; it gets its "]".
		if f.digits {
			f.endMarker()
		}
		if f.opened {
			f.out.WriteByte(']')
		}
	case f.group:
		if f.digits && !f.valid[string(f.tok)] {
			f.dropped = append(f.dropped, string(f.tok))
		}
		f.record(f.dropped...)
	case f.blank != 0 && !f.vanished:
		f.out.WriteByte(f.blank)
	}
	f.resetGroup()
	f.blank, f.vanished, f.lineStart, f.skipBlank, f.exposedAt = 0, false, true, false, -1
	return f.take()
}

// Phantoms returns the phantom markers dropped so far, in the order they first appeared, each
// once. Markers in text released verbatim ("[X9 is") are not citations and are not listed.
func (f *MarkerFilter) Phantoms() []string { return slices.Clone(f.phantoms) }

func (f *MarkerFilter) take() string {
	s := f.out.String()
	f.out.Reset()
	f.emitted += len(s)
	return s
}

// textByte handles one byte outside a group.
func (f *MarkerFilter) textByte(c byte) {
	if f.skipBlank {
		if isBlank(c) {
			return
		}
		f.skipBlank = false
	}
	switch {
	case c == '[':
		f.group, f.pre, f.blank, f.vanished = true, f.blank, 0, false
		f.raw, f.markEnd = append(f.raw[:0], c), 1
	case isBlank(c):
		// Hold one blank: if a group that vanishes follows, whether the blank stays depends on
		// what comes after the group.
		if !f.vanished {
			f.releaseBlank()
		}
		// Blanks on both sides of a vanished group would leave a double space: keep one.
		f.blank, f.vanished = c, false
	default:
		// Before punctuation or a line end, the blank of a vanished group would dangle.
		if f.vanished && (c == '\n' || c == '\r' || strings.IndexByte(closers, c) >= 0) {
			f.blank = 0
		}
		f.vanished = false
		f.releaseBlank()
		f.out.WriteByte(c)
		f.lineStart = c == '\n'
	}
}

func (f *MarkerFilter) releaseBlank() {
	if f.blank != 0 {
		f.out.WriteByte(f.blank)
		f.blank, f.lineStart = 0, false
	}
}

// groupByte handles one byte inside a group.
func (f *MarkerFilter) groupByte(c byte) {
	switch {
	case f.inSep && isSep(c):
	case f.inSep && isUpper(c):
		f.inSep = false
		f.addTok(c)
	case f.inSep && c == ']':
		f.closeGroup()
		return
	case f.inSep:
		f.breakGroup(c)
		return
	case len(f.tok) == 0 && isSpace(c): // white space after the "["
	case isUpper(c) && !f.digits, isDigit(c) && len(f.tok) > 0:
		f.addTok(c)
	case f.digits && c == ']':
		f.endMarker()
		f.closeGroup()
		return
	case f.digits && isSep(c):
		f.endMarker()
		f.inSep = true
	default:
		f.breakGroup(c)
		return
	}
	if !f.committed {
		f.raw = append(f.raw, c)
		if len(f.raw) >= MaxHold {
			f.commit()
		}
	} else if len(f.raw) < MaxHold {
		// Past this, text between markers of a committed group is lost if the group breaks
		// there; only absurd input (a run of 64 blanks or capitals) gets that far.
		f.raw = append(f.raw, c)
	}
}

func (f *MarkerFilter) addTok(c byte) {
	if len(f.tok) < MaxHold {
		f.tok = append(f.tok, c)
	} else {
		f.long = true
	}
	f.digits = isDigit(c)
}

// endMarker decides the marker just read. A committed group emits or drops it at once.
func (f *MarkerFilter) endMarker() {
	m := string(f.tok)
	ok := f.valid[m] && !f.long
	f.tok, f.digits, f.long = f.tok[:0], false, false
	switch {
	case !f.committed && ok:
		f.kept = append(f.kept, m)
	case !f.committed:
		f.dropped = append(f.dropped, m)
	case ok:
		f.openCommitted()
		f.out.WriteString(m)
	default:
		f.record(m)
	}
	if f.committed {
		f.raw = f.raw[:0]
	} else {
		f.markEnd = len(f.raw)
	}
}

// openCommitted writes what goes before the next valid marker of a committed group.
func (f *MarkerFilter) openCommitted() {
	if f.opened {
		f.out.WriteString(", ")
		return
	}
	f.writePre()
	f.out.WriteByte('[')
	f.opened = true
}

// commit stops holding a group that has grown to MaxHold bytes: it is a citation group by now in
// all but its "]", and holding more would stall the stream for the sake of a rare form.
func (f *MarkerFilter) commit() {
	f.committed = true
	f.record(f.dropped...)
	for _, m := range f.kept {
		f.openCommitted()
		f.out.WriteString(m)
	}
	f.raw = f.raw[:copy(f.raw, f.raw[f.markEnd:])]
}

// closeGroup decides a group at its "]".
func (f *MarkerFilter) closeGroup() {
	switch {
	case f.committed && f.opened:
		f.out.WriteByte(']')
		f.lineStart = false
	case f.committed || len(f.kept) == 0:
		f.vanish()
	case len(f.dropped) == 0:
		f.writePre()
		f.out.Write(f.raw)
		f.out.WriteByte(']')
		f.lineStart = false
	default:
		f.writePre()
		f.out.WriteByte('[')
		f.out.WriteString(strings.Join(f.kept, ", "))
		f.out.WriteByte(']')
		f.lineStart = false
	}
	f.record(f.dropped...)
	f.resetGroup()
}

// breakGroup handles a byte that cannot continue the group. Below MaxHold the bracket was text
// after all and goes out verbatim. A committed group is closed as the citation it was taken for,
// and the text after its last marker goes out as text.
func (f *MarkerFilter) breakGroup(c byte) {
	if f.committed {
		if f.digits {
			f.endMarker()
		}
		if f.opened {
			f.out.WriteByte(']')
			f.lineStart = false
		} else {
			f.vanish()
		}
		rest := slices.Clone(f.raw)
		f.resetGroup()
		for _, b := range rest {
			f.textByte(b)
		}
		f.textByte(c)
		return
	}
	f.writePre()
	f.out.Write(f.raw)
	f.lineStart = false
	if c == '[' || isBlank(c) {
		f.exposedAt = f.emitted + f.out.Len()
	}
	f.resetGroup()
	f.textByte(c)
}

// vanish drops a group with no valid marker. The blank before it is held again, for textByte to
// decide on once it sees what follows; at a line start the blanks after it are dropped instead.
//
// Right after an exposed bracket, dropping would join the bracket with what follows: "[X9[Y8]]"
// would become "[X9]", a phantom made from pieces. There the group leaves "[]" behind instead, an
// empty citation that keeps the two apart.
func (f *MarkerFilter) vanish() {
	switch {
	case f.exposedAt == f.emitted+f.out.Len():
		f.writePre()
		f.out.WriteString("[]")
	case f.pre != 0:
		f.blank, f.vanished = f.pre, true
	case f.lineStart:
		f.skipBlank = true
	}
	f.pre = 0
}

func (f *MarkerFilter) writePre() {
	if f.pre != 0 {
		f.out.WriteByte(f.pre)
		f.pre = 0
	}
}

func (f *MarkerFilter) record(markers ...string) {
	for _, m := range markers {
		if !f.seen[m] {
			f.seen[m] = true
			f.phantoms = append(f.phantoms, m)
		}
	}
}

func (f *MarkerFilter) resetGroup() {
	f.group, f.pre, f.committed, f.opened = false, 0, false, false
	f.raw, f.tok, f.markEnd = f.raw[:0], f.tok[:0], 0
	f.kept, f.dropped = f.kept[:0], f.dropped[:0]
	f.digits, f.inSep, f.long = false, false, false
}

// closers are the characters that follow a word without a blank: a vanished group's blank
// before them would dangle ("claim ." instead of "claim.").
const closers = ".,;:!?)]}*"

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// isSpace is white space as regular expressions' \s has it.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
func isSep(c byte) bool   { return isSpace(c) || c == ',' || c == ';' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isMarker reports whether s is a marker the filter can keep: capital letters, then digits, and
// shorter than MaxHold.
func isMarker(s string) bool {
	i := 0
	for i < len(s) && isUpper(s[i]) {
		i++
	}
	if i == 0 || i == len(s) || len(s) >= MaxHold {
		return false
	}
	for ; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
