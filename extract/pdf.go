package extract

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ledongthuc/pdf"
)

// extractPDF reads the text layer page by page, one paragraph block at a time.
func extractPDF(ctx context.Context, data []byte, lim Limits) (doc *Doc, err error) {
	// ledongthuc/pdf panics on some malformed files rather than returning an error.
	defer func() {
		if p := recover(); p != nil {
			doc, err = nil, fmt.Errorf("%w: %v", ErrCorrupt, p)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	b := builder{doc: Doc{Format: PDF}, lim: lim}
	var firstLine string
	// Walking until a page is missing, rather than to the stated count, keeps a corrupt count
	// from spinning.
	for i := 1; ; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if lim.MaxPages > 0 && i > lim.MaxPages {
			return nil, fmt.Errorf("%w: more than %d pages", ErrTooComplex, lim.MaxPages)
		}
		if b.err != nil {
			return nil, b.err
		}
		page := r.Page(i)
		if page.V.IsNull() {
			break
		}
		b.doc.Pages = i
		for _, para := range pageParagraphs(page.Content().Text) {
			firstLine = cmp.Or(firstLine, para[0])
			b.add(Paragraph, 0, i, strings.Join(para, " "))
		}
	}
	info := r.Trailer().Key("Info")
	b.doc.Title = cmp.Or(collapse(info.Key("Title").Text()), firstLine)
	b.doc.Published = cmp.Or(pdfDate(info.Key("CreationDate").Text()), pdfDate(info.Key("ModDate").Text()))
	return b.finish()
}

// Layout thresholds, in multiples of the font size.
const (
	lineShift = 0.5 // the baseline moved: a new line
	paraGap   = 1.8 // the baseline dropped further than line spacing: a new paragraph
	wordGap   = 0.2 // blank space between glyphs that no space character covers: a word break
)

// pageParagraphs groups a page's glyphs into paragraphs of lines. ledongthuc/pdf gives one
// pdf.Text per glyph with its baseline position. Blank lines are never drawn, so paragraphs show
// only as larger vertical gaps. Text moving up the page (a new column) also starts a paragraph.
// Word spaces are usually glyphs of their own, but some producers place words apart without
// one, which shows as a horizontal gap when the font states its glyph widths.
func pageParagraphs(glyphs []pdf.Text) [][]string {
	var (
		paras [][]string
		para  []string
		line  strings.Builder
		prev  *pdf.Text
	)
	endLine := func() {
		if l := collapse(line.String()); l != "" {
			para = append(para, l)
		}
		line.Reset()
	}
	endPara := func() {
		endLine()
		if len(para) > 0 {
			paras = append(paras, para)
			para = nil
		}
	}
	for i := range glyphs {
		g := &glyphs[i]
		if strings.TrimSpace(g.S) == "" {
			line.WriteByte(' ')
			continue
		}
		if prev != nil {
			size := max(prev.FontSize, g.FontSize, 1)
			switch dy := prev.Y - g.Y; {
			case dy > paraGap*size || dy < -lineShift*size:
				endPara()
			case math.Abs(dy) > lineShift*size:
				endLine()
			case prev.W > 0 && math.Abs(g.X-(prev.X+prev.W)) > wordGap*size:
				line.WriteByte(' ')
			}
		}
		line.WriteString(g.S)
		prev = g
	}
	endPara()
	return paras
}

// pdfDate parses a PDF date, "D:YYYYMMDDHHmmSSOHH'mm'", where everything after the year may be
// left out and a missing zone means UTC. It returns nil when s is not such a date.
func pdfDate(s string) *time.Time {
	s = strings.TrimPrefix(strings.TrimSpace(s), "D:")
	n := len(s) - len(strings.TrimLeft(s, "0123456789"))
	if n < 4 || n > 14 || n%2 != 0 {
		return nil
	}
	loc := time.UTC
	if zone := strings.ReplaceAll(s[n:], "'", ""); len(zone) >= 3 && (zone[0] == '+' || zone[0] == '-') {
		h, herr := strconv.Atoi(zone[1:3])
		m, merr := strconv.Atoi(cmp.Or(zone[3:min(5, len(zone))], "0"))
		if herr != nil || merr != nil {
			return nil
		}
		offset := (h*60 + m) * 60
		if zone[0] == '-' {
			offset = -offset
		}
		loc = time.FixedZone("", offset)
	}
	t, err := time.ParseInLocation("20060102150405"[:n], s[:n], loc)
	if err != nil {
		return nil
	}
	return &t
}
