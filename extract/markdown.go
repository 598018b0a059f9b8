package extract

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// md parses CommonMark plus GitHub tables, which docs use for reference material, and stops
// inside a paragraph when the parse's context ends (checkpoint).
var md = goldmark.New(goldmark.WithExtensions(extension.Table),
	goldmark.WithParserOptions(parser.WithInlineParsers(util.Prioritized(checkpoint{}, 0))))

// extractMarkdown keeps each block's Markdown source as its text: it reads well and keeps the
// text close to the file. Only heading marks are dropped, since the block kind carries them.
func extractMarkdown(ctx context.Context, data []byte, base *url.URL, lim Limits) (doc *Doc, err error) {
	s, err := utf8Text(data)
	if err != nil {
		return nil, err
	}
	meta, body := frontMatter(s)
	src := []byte(body)
	// goldmark's block parser revisits every open container on every line: nesting n deep over n
	// lines costs n squared (a megabyte of ">" ran for minutes). Bounding the depth first keeps
	// the parse linear in the file.
	if d, line := markdownDepth(src); lim.MaxDepth > 0 && d > lim.MaxDepth {
		return nil, fmt.Errorf("%w: line %d nests %d containers deep, over the limit of %d", ErrTooComplex, line, d, lim.MaxDepth)
	}
	defer func() {
		if p := recover(); p != nil {
			stop, ok := p.(canceled)
			if !ok {
				panic(p)
			}
			doc, err = nil, stop.err
		}
	}()
	pc := parser.NewContext()
	pc.Set(ctxKey, ctx)
	root := md.Parser().Parse(&ctxReader{Reader: text.NewReader(src), ctx: ctx}, parser.WithContext(pc))
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	b := builder{doc: Doc{Format: Markdown, Title: meta["title"], Published: parseDate(meta["date"])}, lim: lim}
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.Heading:
			b.add(Heading, n.Level, 0, lines(n, src))
			if b.doc.Title == "" && n.Level == 1 {
				b.doc.Title = collapse(lines(n, src))
			}
		case *ast.Paragraph:
			b.add(Paragraph, 0, 0, lines(n, src))
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			b.add(Code, 0, 0, lines(n, src))
		case *ast.List:
			b.add(List, 0, 0, span(n, src))
		case *east.Table:
			b.add(Table, 0, 0, span(n, src))
		case *ast.HTMLBlock, *ast.ThematicBreak:
			// Markup, not text.
		default:
			b.add(Paragraph, 0, 0, span(n, src))
		}
	}

	l := newLinks(base)
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n := n.(type) {
		case *ast.Link:
			if entering {
				l.add(string(n.Destination))
			}
		case *ast.AutoLink:
			if entering && n.AutoLinkType == ast.AutoLinkURL {
				l.add(string(n.URL(src)))
			}
		}
		return ast.WalkContinue, nil
	})
	b.doc.Links = l.list
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.finish()
}

// canceled carries ctx's error out of goldmark's parser, which takes no context.
type canceled struct{ err error }

// ctxKey holds the parse's context.Context in goldmark's parser context, for checkpoint.
var ctxKey = parser.NewContextKey()

// checkpoint is an inline parser that parses nothing: it runs first at every character an
// inline parser starts on and stops the parse once its context has ended. Inline parsing goes
// through a paragraph without reading lines (ctxReader), and goldmark's link parser scans to the
// end of the paragraph for every "](" left open: a line of "[a](" repeated costs n squared (64 KB
// took 6 s; 800 KB posted to ragd serve still ran 7 minutes later), past --ingest-timeout and
// the client's leaving.
type checkpoint struct{}

func (checkpoint) Trigger() []byte { return []byte{'[', ']', '!', '<', '`', '*', '_'} }

func (checkpoint) Parse(_ ast.Node, _ text.Reader, pc parser.Context) ast.Node {
	if ctx, ok := pc.Get(ctxKey).(context.Context); ok {
		if err := ctx.Err(); err != nil {
			panic(canceled{err})
		}
	}
	return nil
}

// ctxReader is the parser's line reader, checking ctx every few hundred lines so that a
// cancelled request stops the parse instead of running it to its end.
type ctxReader struct {
	text.Reader
	ctx   context.Context
	lines int
}

func (r *ctxReader) AdvanceLine() {
	if r.lines++; r.lines%256 == 0 {
		if err := r.ctx.Err(); err != nil {
			panic(canceled{err})
		}
	}
	r.Reader.AdvanceLine()
}

// markdownDepth returns the deepest container nesting any line of src opens or continues, and
// that line (from 1): blockquote marks and list markers at the start of the line, and
// indentation, which continues list items (two columns a level, a lower bound of what a parser
// keeps open).
func markdownDepth(src []byte) (depth, line int) {
	n := 0
	for l := range bytes.Lines(src) {
		n++
		d, indent := 0, 0
		for i := 0; i < len(l); {
			switch c := l[i]; {
			case c == ' ':
				indent++
				i++
			case c == '\t':
				indent += 4
				i++
			case c == '>':
				d++
				i++
			case (c == '-' || c == '+' || c == '*') && i+1 < len(l) && (l[i+1] == ' ' || l[i+1] == '\t'):
				d++
				i += 2
			case c >= '0' && c <= '9':
				j := i
				for j < len(l) && j-i < 9 && l[j] >= '0' && l[j] <= '9' {
					j++
				}
				if j+1 < len(l) && (l[j] == '.' || l[j] == ')') && (l[j+1] == ' ' || l[j+1] == '\t') {
					d++
					i = j + 2
					continue
				}
				i = len(l)
			default:
				i = len(l)
			}
		}
		if d += indent / 2; d > depth {
			depth, line = d, n
		}
	}
	return depth, line
}

// lines returns the source from a leaf block's first line to its last. For headings and fenced
// code that excludes the marks and fences.
func lines(n ast.Node, src []byte) string {
	l := n.Lines()
	if l.Len() == 0 {
		return ""
	}
	return string(src[l.At(0).Start:l.At(l.Len()-1).Stop])
}

// span returns the source of a container block from its start to the end of the line holding
// its last text, so that list markers and table pipes stay in.
func span(n ast.Node, src []byte) string {
	start, stop := n.Pos(), 0
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || c.Type() != ast.TypeBlock {
			return ast.WalkContinue, nil
		}
		if l := c.Lines(); l.Len() > 0 {
			if start < 0 {
				start = l.At(0).Start
			}
			stop = max(stop, l.At(l.Len()-1).Stop)
		}
		return ast.WalkContinue, nil
	})
	if start < 0 || stop <= start {
		return ""
	}
	if i := bytes.IndexByte(src[stop-1:], '\n'); i >= 0 {
		stop += i - 1
	} else {
		stop = len(src)
	}
	return string(src[start:stop])
}

// frontMatter splits YAML front matter, "---" lines around "key: value" lines at the top of the
// file, from the body. It returns the top-level scalar values by lower-case key; nested values
// are ignored, since only the title and date are read.
func frontMatter(s string) (map[string]string, string) {
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return nil, s
	}
	meta := make(map[string]string)
	off := 0
	for line := range strings.Lines(rest) {
		off += len(line)
		line = strings.TrimRight(line, " \t\n")
		if line == "---" || line == "..." {
			return meta, rest[off:]
		}
		k, v, ok := strings.Cut(line, ":")
		if ok && k != "" && k == strings.TrimSpace(k) {
			meta[strings.ToLower(k)] = unquote(strings.TrimSpace(v))
		}
	}
	// Without a closing line it was a thematic break, not front matter.
	return nil, s
}

// unquote removes matching single or double quotes around a YAML scalar.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}
