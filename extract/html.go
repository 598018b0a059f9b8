package extract

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// extractHTML finds the main content with go-readability, a port of Firefox's reader view, and
// walks it so that headings, paragraphs, lists, code and tables stay apart. The parsed tree is
// measured before anything walks it: the walks recurse, and readability's cost grows with the
// element count.
func extractHTML(ctx context.Context, data []byte, base *url.URL, lim Limits) (*Doc, error) {
	s, err := htmlText(data)
	if err != nil {
		return nil, err
	}
	root, err := html.Parse(strings.NewReader(s))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if err := measure(ctx, root, lim); err != nil {
		return nil, err
	}
	parser := readability.NewParser()
	parser.MaxElemsToParse = lim.MaxElements
	art, err := parser.ParseDocument(root, base)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := newHTMLWalker(base, lim)
	if err == nil && art.Node != nil {
		w.read(art.Node)
	}
	if len(w.b.doc.Blocks) == 0 && w.b.err == nil {
		// No article: take the whole body, less the page furniture.
		w = newHTMLWalker(base, lim)
		if body := find(root, atom.Body); body != nil {
			w.read(body)
		}
	}
	doc := &w.b.doc
	doc.Title = cmp.Or(art.Title(), firstText(root, atom.Title), firstText(root, atom.H1))
	doc.Published = cmp.Or(articleTime(art.PublishedTime()), articleTime(art.ModifiedTime()), timeDatetime(root))
	doc.Links = w.links.list
	return w.b.finish()
}

// articleTime is readability's date, or nil when the page gave none.
func articleTime(t time.Time, err error) *time.Time {
	if err != nil || t.IsZero() {
		return nil
	}
	return &t
}

// measure refuses a tree deeper or larger than lim, walking it without recursion, and stops when
// ctx ends.
func measure(ctx context.Context, root *html.Node, lim Limits) error {
	type item struct {
		n     *html.Node
		depth int
	}
	stack := []item{{root, 0}}
	elements := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.n.Type == html.ElementNode {
			if elements++; elements%4096 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
		}
		switch {
		case lim.MaxDepth > 0 && it.depth > 4*lim.MaxDepth:
			// Pages nest deeper than prose does: wrappers of wrappers. Four times the Markdown
			// bound still keeps the recursive walks shallow.
			return fmt.Errorf("%w: elements nest more than %d deep", ErrTooComplex, 4*lim.MaxDepth)
		case lim.MaxElements > 0 && elements > lim.MaxElements:
			return fmt.Errorf("%w: more than %d elements", ErrTooComplex, lim.MaxElements)
		}
		for c := it.n.FirstChild; c != nil; c = c.NextSibling {
			stack = append(stack, item{c, it.depth + 1})
		}
	}
	return nil
}

// htmlText decodes data as UTF-8, or else as the charset the page declares. Browsers read
// undeclared non-UTF-8 pages as windows-1252, and so does this.
func htmlText(data []byte) (string, error) {
	s, err := utf8Text(data)
	if err == nil || errors.Is(err, ErrNUL) {
		return s, err
	}
	enc, name, _ := charset.DetermineEncoding(data, "")
	if name == "utf-8" {
		return "", err
	}
	s, derr := enc.NewDecoder().String(string(data))
	if derr != nil {
		return "", fmt.Errorf("%w: decoding %s: %w", ErrCorrupt, name, derr)
	}
	return s, nil
}

var (
	// skipped elements hold no readable text, or only page furniture. Readability keeps the
	// furniture of short pages, where it falls back to taking most of the body.
	skipped = newAtomSet(atom.Head, atom.Script, atom.Style, atom.Noscript, atom.Template,
		atom.Svg, atom.Math, atom.Iframe, atom.Object, atom.Canvas, atom.Button, atom.Select,
		atom.Textarea, atom.Nav, atom.Header, atom.Footer, atom.Aside, atom.Form)
	// blocks break the surrounding text into separate paragraphs.
	blocks = newAtomSet(atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body,
		atom.Center, atom.Details, atom.Dialog, atom.Dd, atom.Div, atom.Dl, atom.Dt, atom.Fieldset,
		atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.Header, atom.Hgroup, atom.Hr,
		atom.Li, atom.Main, atom.Nav, atom.Section, atom.Summary, atom.Td, atom.Th, atom.Tr)
	lists    = newAtomSet(atom.Ul, atom.Ol)
	headings = map[atom.Atom]int{atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6}
)

type atomSet map[atom.Atom]bool

func newAtomSet(as ...atom.Atom) atomSet {
	s := make(atomSet, len(as))
	for _, a := range as {
		s[a] = true
	}
	return s
}

func (s atomSet) has(a atom.Atom) bool { return s[a] }

// htmlWalker turns an element tree into blocks.
type htmlWalker struct {
	b      builder
	links  *links
	inline strings.Builder // text outside any block element so far, such as text right in a <div>
}

func newHTMLWalker(base *url.URL, lim Limits) *htmlWalker {
	return &htmlWalker{b: builder{doc: Doc{Format: HTML}, lim: lim}, links: newLinks(base)}
}

// read turns the content under n into blocks and links.
func (w *htmlWalker) read(n *html.Node) {
	w.walk(n)
	w.flush()
	w.collectLinks(n)
}

func (w *htmlWalker) walk(n *html.Node) {
	for c := range n.ChildNodes() {
		switch a := tag(c); {
		case c.Type == html.TextNode:
			w.inline.WriteString(c.Data)
		case c.Type != html.ElementNode || skipped[a]:
		case a == atom.Br:
			w.inline.WriteByte('\n')
		case headings[a] > 0:
			w.flush()
			w.b.add(Heading, headings[a], 0, collapse(textOf(c, skipped.has)))
		case a == atom.P:
			w.flush()
			w.b.add(Paragraph, 0, 0, collapse(textOf(c, skipped.has)))
		case a == atom.Pre:
			w.flush()
			w.b.add(Code, 0, 0, textOf(c, skipped.has))
		case lists[a]:
			w.flush()
			var sb strings.Builder
			w.list(c, "", &sb)
			w.b.add(List, 0, 0, sb.String())
		case a == atom.Table:
			w.flush()
			w.b.add(Table, 0, 0, w.table(c))
		case blocks[a]:
			w.flush()
			w.walk(c)
			w.flush()
		default:
			w.walk(c)
		}
	}
}

// flush turns the pending inline text into a paragraph.
func (w *htmlWalker) flush() {
	w.b.add(Paragraph, 0, 0, collapse(w.inline.String()))
	w.inline.Reset()
}

// collectLinks records the targets of the anchors under n.
func (w *htmlWalker) collectLinks(n *html.Node) {
	for c := range n.ChildNodes() {
		a := tag(c)
		if c.Type != html.ElementNode || skipped[a] {
			continue
		}
		if a == atom.A {
			w.links.add(attr(c, "href"))
		}
		w.collectLinks(c)
	}
}

// list writes one line per item, with nested lists indented under their item.
func (w *htmlWalker) list(n *html.Node, indent string, sb *strings.Builder) {
	own := func(a atom.Atom) bool { return skipped[a] || lists[a] }
	ordered := tag(n) == atom.Ol
	i := 0
	for li := range n.ChildNodes() {
		if tag(li) != atom.Li {
			continue
		}
		i++
		marker := "- "
		if ordered {
			marker = strconv.Itoa(i) + ". "
		}
		sb.WriteString(indent + marker + collapse(textOf(li, own)) + "\n")
		for c := range li.ChildNodes() {
			if lists[tag(c)] {
				w.list(c, indent+"  ", sb)
			}
		}
	}
}

// table writes one line per row, cells separated by " | ".
func (w *htmlWalker) table(n *html.Node) string {
	var rows []string
	for tr := range n.Descendants() {
		if tag(tr) != atom.Tr {
			continue
		}
		var cells []string
		for td := range tr.ChildNodes() {
			if a := tag(td); a == atom.Td || a == atom.Th {
				cells = append(cells, collapse(textOf(td, skipped.has)))
			}
		}
		rows = append(rows, strings.Join(cells, " | "))
	}
	return strings.Join(rows, "\n")
}

// textOf returns the text under n, leaving out the elements that skip reports. Block elements
// end with a space so that their words do not run together.
func textOf(n *html.Node, skip func(atom.Atom) bool) string {
	if n == nil {
		return ""
	}
	var sb strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		for c := range n.ChildNodes() {
			switch a := tag(c); {
			case c.Type == html.TextNode:
				sb.WriteString(c.Data)
			case c.Type != html.ElementNode || skip(a):
			case a == atom.Br:
				sb.WriteByte('\n')
			default:
				rec(c)
				if blocks[a] {
					sb.WriteByte(' ')
				}
			}
		}
	}
	rec(n)
	return sb.String()
}

// firstText returns the text of the first element of kind a under n, or "".
func firstText(n *html.Node, a atom.Atom) string {
	return collapse(textOf(find(n, a), skipped.has))
}

// find returns the first element of kind a under n, or nil.
func find(n *html.Node, a atom.Atom) *html.Node {
	for c := range n.Descendants() {
		if tag(c) == a {
			return c
		}
	}
	return nil
}

// tag returns the element's kind by name. Readability renames elements (h1 to h2, div to p)
// without updating DataAtom.
func tag(n *html.Node) atom.Atom {
	if n.Type != html.ElementNode {
		return 0
	}
	return atom.Lookup([]byte(n.Data))
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// timeDatetime returns the first <time datetime> date of the page, which blogs without
// article:published_time use for the post date.
func timeDatetime(root *html.Node) *time.Time {
	for n := range root.Descendants() {
		if tag(n) == atom.Time {
			if t := parseDate(attr(n, "datetime")); t != nil {
				return t
			}
		}
	}
	return nil
}
