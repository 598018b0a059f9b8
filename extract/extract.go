// Package extract turns the raw bytes of one file into plain text with structure: the text itself,
// its blocks (headings, paragraphs, code, lists, tables) with byte offsets, and the metadata the
// source states about itself (title, publication date, links). Chunking works on the result.
package extract

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/url"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ragd/ragd"
)

// Format is the kind of source a Doc was extracted from.
type Format string

// Formats that Extract understands.
const (
	Markdown Format = "markdown"
	Text     Format = "text"
	HTML     Format = "html"
	PDF      Format = "pdf"
)

// BlockKind says what a block of text is.
type BlockKind string

// Block kinds. Blockquotes and other containers become paragraphs.
const (
	Heading   BlockKind = "heading"
	Paragraph BlockKind = "paragraph"
	Code      BlockKind = "code"  // a code block, without its fences
	List      BlockKind = "list"  // a whole list, one item per line, nested lists indented
	Table     BlockKind = "table" // a whole table, one row per line
)

// Block is one structural unit of a Doc's text.
type Block struct {
	Kind  BlockKind
	Level int    // heading level 1-6, 0 for other kinds
	Text  string // equal to Doc.Text[Start:End]
	Start int    // byte offset into Doc.Text
	End   int    // byte offset into Doc.Text, exclusive
	Page  int    // 1-based page for PDF, 0 for formats without pages
}

// Doc is the text of one file and what the file says about itself.
type Doc struct {
	Format Format
	// Title is the front-matter title or first level-1 heading for Markdown, the article title
	// for HTML, the Info title or first line for PDF, and "" when the source has none.
	Title string
	// Text is the whole extracted text: the blocks' texts joined by "\n\n".
	Text   string
	Blocks []Block
	Pages  int // number of pages for PDF, counting pages without text; 0 for other formats
	// Published is when the source says it was published, or else last updated; nil if it does
	// not say.
	Published *time.Time
	// Links are the absolute http, https and file targets the content links to, without
	// fragments, in order of first appearance. Relative targets count only when a base URL
	// resolves them.
	Links []string
}

// Errors that Extract and Detect return, wrapped. Each also matches ragd.ErrInvalid, since
// sending the same file again fails the same way.
var (
	// ErrUnknownFormat: the format cannot be told, or is not one of the Formats.
	ErrUnknownFormat error = invalidError("unknown format")
	// ErrEmpty: nothing is left after extraction, as with a whitespace-only file or a scanned
	// PDF without a text layer.
	ErrEmpty error = invalidError("no text")
	// ErrInvalidUTF8: a text format is not UTF-8; the message gives the first bad byte's offset.
	ErrInvalidUTF8 error = invalidError("invalid UTF-8")
	// ErrCorrupt: the file is damaged or is not in the format it was read as.
	ErrCorrupt error = invalidError("corrupt file")
	// ErrNUL: a text format holds a NUL byte, which no text store keeps; the message gives its
	// offset.
	ErrNUL error = invalidError("contains a NUL byte")
	// ErrTooComplex: the file nests deeper, or holds more elements, pages or text, than Limits
	// allow. Such files are refused before the work that would grow with them.
	ErrTooComplex error = invalidError("too complex")
)

// Limits bound the work and memory of extracting one file, whatever its bytes. Real documents
// stay far below them; a crafted one (a megabyte of nested blockquotes, which makes a Markdown
// parser quadratic, or a deep tree that would exhaust the stack) is refused up front.
type Limits struct {
	// MaxDepth is the deepest nesting of Markdown containers (blockquotes, list items) or HTML
	// elements.
	MaxDepth int
	// MaxElements is the most HTML elements, or Markdown blocks, of one file.
	MaxElements int
	// MaxPages is the most PDF pages read.
	MaxPages int
	// MaxTextBytes is the most extracted text.
	MaxTextBytes int
}

// DefaultLimits are the limits Extract applies.
var DefaultLimits = Limits{MaxDepth: 64, MaxElements: 200_000, MaxPages: 5_000, MaxTextBytes: 32 << 20}

// invalidError is a sentinel that is also ragd.ErrInvalid.
type invalidError string

func (e invalidError) Error() string { return string(e) }

// Is makes errors.Is(err, ragd.ErrInvalid) true for every invalidError.
func (e invalidError) Is(target error) bool { return target == ragd.ErrInvalid }

var extensions = map[string]Format{
	".md": Markdown, ".markdown": Markdown,
	".txt": Text, ".text": Text,
	".html": HTML, ".htm": HTML,
	".pdf": PDF,
}

var contentTypes = map[string]Format{
	"text/markdown":         Markdown,
	"text/x-markdown":       Markdown,
	"text/plain":            Text,
	"text/html":             HTML,
	"application/xhtml+xml": HTML,
	"application/pdf":       PDF,
}

// Detect names the format of a file from its name's extension, else its content type, else its
// first bytes. Names and content types may be empty.
func Detect(name, contentType string, data []byte) (Format, error) {
	if f, ok := extensions[strings.ToLower(filepath.Ext(name))]; ok {
		return f, nil
	}
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		if f, ok := contentTypes[mt]; ok {
			return f, nil
		}
	}
	if bytes.HasPrefix(data, []byte("%PDF-")) {
		return PDF, nil
	}
	head := bytes.ToLower(bytes.TrimSpace(bytes.TrimPrefix(data[:min(len(data), 512)], bom)))
	if bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html")) {
		return HTML, nil
	}
	return "", fmt.Errorf("%w: name %q, content type %q", ErrUnknownFormat, name, contentType)
}

// Extract reads data as format f within DefaultLimits. baseURL, when not empty, resolves
// relative links. It stops with ctx's error soon after ctx ends, parsing included.
func Extract(ctx context.Context, f Format, data []byte, baseURL string) (*Doc, error) {
	return ExtractWithin(ctx, f, data, baseURL, DefaultLimits)
}

// ExtractWithin is Extract with other limits.
func ExtractWithin(ctx context.Context, f Format, data []byte, baseURL string, lim Limits) (*Doc, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var base *url.URL
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil {
			return nil, ragd.Invalidf("base_url", "%v", err)
		}
		base = u
	}
	var (
		doc *Doc
		err error
	)
	switch f {
	case Text:
		doc, err = extractText(ctx, data, lim)
	case Markdown:
		doc, err = extractMarkdown(ctx, data, base, lim)
	case HTML:
		doc, err = extractHTML(ctx, data, base, lim)
	case PDF:
		doc, err = extractPDF(ctx, data, lim)
	default:
		err = ErrUnknownFormat
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("extract %s: %w", f, err)
	}
	return doc, nil
}

var bom = []byte("\uFEFF")

// utf8Text checks that data is UTF-8 without NUL bytes and returns it without a byte order mark
// and with every line ending as "\n".
func utf8Text(data []byte) (string, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return "", fmt.Errorf("%w at byte %d", ErrNUL, i)
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return "", fmt.Errorf("%w at byte %d", ErrInvalidUTF8, i)
		}
		i += n
	}
	s := string(bytes.TrimPrefix(data, bom))
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"), nil
}

// builder assembles a Doc block by block, so that offsets and separators stay consistent, and
// stops at the limits: over them, the first error is kept and later blocks are dropped.
type builder struct {
	doc  Doc
	text strings.Builder
	lim  Limits
	err  error
}

// add appends a block, trimmed of surrounding space and of trailing space on each line. Blocks
// that are empty after trimming are dropped. NUL bytes (which a PDF's text layer can hold) are
// removed: no text store keeps them.
func (b *builder) add(kind BlockKind, level, page int, text string) {
	if b.err != nil {
		return
	}
	text = strings.TrimSpace(trimLines(strings.ReplaceAll(text, "\x00", "")))
	if text == "" {
		return
	}
	sep := ""
	if b.text.Len() > 0 {
		sep = "\n\n"
	}
	switch {
	case b.lim.MaxElements > 0 && len(b.doc.Blocks) >= b.lim.MaxElements:
		b.err = fmt.Errorf("%w: more than %d blocks", ErrTooComplex, b.lim.MaxElements)
		return
	case b.lim.MaxTextBytes > 0 && b.text.Len()+len(sep)+len(text) > b.lim.MaxTextBytes:
		// The separator counts: the limit is on the Doc's Text.
		b.err = fmt.Errorf("%w: more than %d bytes of text", ErrTooComplex, b.lim.MaxTextBytes)
		return
	}
	b.text.WriteString(sep)
	start := b.text.Len()
	b.text.WriteString(text)
	b.doc.Blocks = append(b.doc.Blocks, Block{Kind: kind, Level: level, Start: start, End: b.text.Len(), Page: page})
}

// finish returns the Doc, or the error that stopped it, or ErrEmpty when no block has text.
func (b *builder) finish() (*Doc, error) {
	if b.err != nil {
		return nil, b.err
	}
	if len(b.doc.Blocks) == 0 {
		return nil, ErrEmpty
	}
	b.doc.Text = b.text.String()
	for i := range b.doc.Blocks {
		// Slicing shares Text's memory instead of holding a second copy of every block.
		blk := &b.doc.Blocks[i]
		blk.Text = b.doc.Text[blk.Start:blk.End]
	}
	return &b.doc, nil
}

// trimLines removes trailing spaces and tabs from every line of s.
func trimLines(s string) string {
	if !strings.Contains(s, " \n") && !strings.Contains(s, "\t\n") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// collapse replaces every run of whitespace in s with one space and trims the ends.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// dateLayouts are the date forms that front matter and <time datetime> use in practice.
var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
}

// parseDate reads s in one of dateLayouts; times without a zone are taken as UTC.
func parseDate(s string) *time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return &t
		}
	}
	return nil
}

// links collects absolute link targets in order of first appearance, without duplicates.
type links struct {
	base *url.URL
	seen map[string]bool
	list []string
}

func newLinks(base *url.URL) *links {
	l := &links{base: base, seen: make(map[string]bool)}
	if base != nil {
		// Marking the document's own URL as seen drops links back to the document itself.
		l.seen[defragment(*base)] = true
	}
	return l
}

// maxLinks bounds the links kept of one document: they feed the knowledge graph, which needs few.
const maxLinks = 1000

// add resolves href against the base URL and keeps it when it points at a web page or a file.
func (l *links) add(href string) {
	if len(l.list) >= maxLinks {
		return
	}
	u, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return
	}
	if l.base != nil {
		u = l.base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file" {
		return
	}
	s := defragment(*u)
	if !l.seen[s] {
		l.seen[s] = true
		l.list = append(l.list, s)
	}
}

func defragment(u url.URL) string {
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}
