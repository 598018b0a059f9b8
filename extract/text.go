package extract

import (
	"context"
	"strings"
)

// maxTitleLen bounds a first line that is taken for a plain text's title.
const maxTitleLen = 100

// extractText reads plain text: one paragraph block per run of non-blank lines. A first line that
// stands alone, is short and does not end like a sentence is the title, as in a text file that
// opens with "Power Outages" and a blank line.
func extractText(ctx context.Context, data []byte, lim Limits) (*Doc, error) {
	s, err := utf8Text(data)
	if err != nil {
		return nil, err
	}
	b := builder{doc: Doc{Format: Text}, lim: lim}
	paras := paragraphs(s)
	for i, para := range paras {
		if i%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if i == 0 && len(paras) > 1 && isTitleLine(para) {
			b.doc.Title = strings.TrimSpace(para)
			b.add(Heading, 1, 0, para)
			continue
		}
		b.add(Paragraph, 0, 0, para)
	}
	return b.finish()
}

func isTitleLine(para string) bool {
	t := strings.TrimSpace(para)
	return t != "" && len(t) <= maxTitleLen && !strings.Contains(t, "\n") && !strings.ContainsAny(t[len(t)-1:], ".!?,;:")
}

// paragraphs splits s on blank lines. Lines that hold only whitespace count as blank.
func paragraphs(s string) []string {
	var paras []string
	start, off := -1, 0
	for line := range strings.Lines(s) {
		switch blank := strings.TrimSpace(line) == ""; {
		case blank && start >= 0:
			paras = append(paras, s[start:off])
			start = -1
		case !blank && start < 0:
			start = off
		}
		off += len(line)
	}
	if start >= 0 {
		paras = append(paras, s[start:])
	}
	return paras
}
