package extract

import "strings"

// extractText reads plain text: one paragraph block per run of non-blank lines.
func extractText(data []byte) (*Doc, error) {
	s, err := utf8Text(data)
	if err != nil {
		return nil, err
	}
	b := builder{doc: Doc{Format: Text}}
	for _, para := range paragraphs(s) {
		b.add(Paragraph, 0, 0, para)
	}
	return b.finish()
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
