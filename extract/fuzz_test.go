package extract_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/extract"
	"github.com/ragd/ragd/extract/pdftest"
)

// fuzzLimits are small, so that the fuzzer reaches the limits' edges with small inputs.
var fuzzLimits = extract.Limits{MaxDepth: 8, MaxElements: 64, MaxPages: 4, MaxTextBytes: 4096}

// fuzzExtract checks what must hold for any input: no panic, an error only of the input kind (a
// 4xx for a client) or a consistent Doc of valid UTF-8 without NUL bytes, within the limits.
func fuzzExtract(f *testing.F, format extract.Format, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lim := range []extract.Limits{fuzzLimits, extract.DefaultLimits} {
			doc, err := extract.ExtractWithin(context.Background(), format, data, "https://example.com/a/", lim)
			if err != nil {
				if !errors.Is(err, ragd.ErrInvalid) {
					t.Fatalf("%s: error %v is not an input error", format, err)
				}
				continue
			}
			if !utf8.ValidString(doc.Text) || strings.ContainsRune(doc.Text, 0) {
				t.Fatalf("%s: text is not clean UTF-8: %q", format, doc.Text)
			}
			if len(doc.Blocks) > lim.MaxElements || len(doc.Text) > lim.MaxTextBytes {
				t.Fatalf("%s: %d blocks, %d bytes over the limits", format, len(doc.Blocks), len(doc.Text))
			}
			var joined []string
			for i, b := range doc.Blocks {
				if doc.Text[b.Start:b.End] != b.Text || b.Text == "" {
					t.Fatalf("%s: block %d is inconsistent", format, i)
				}
				joined = append(joined, b.Text)
			}
			if strings.Join(joined, "\n\n") != doc.Text {
				t.Fatalf("%s: blocks do not make the text", format)
			}
		}
	})
}

func FuzzMarkdown(f *testing.F) {
	fuzzExtract(f, extract.Markdown,
		[]byte("---\ntitle: T\ndate: 2024-01-02\n---\n# Head\n\nPara with [a link](b.html).\n\n> quote\n> > deeper\n\n- a\n  - b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n```go\ncode\n```\n"),
		[]byte(strings.Repeat(">", 100)+" deep"), []byte("* * *\n1. one\n2) two\n"), []byte("\xef\xbb\xbf# bom\r\nx"),
		// Two blocks of 4,096 bytes in all, 4,098 with the separator between them (found by
		// scripts/fuzz.sh: the limit did not count separators).
		[]byte("0\n\n"+strings.Repeat("x", 4095)))
}

func FuzzHTML(f *testing.F) {
	fuzzExtract(f, extract.HTML,
		[]byte(`<html><head><title>T</title><meta property="article:published_time" content="2024-01-02"></head><body><nav>menu</nav><article><h1>Head</h1><p>Para <a href="/x">x</a></p><ul><li>a<ul><li>b</li></ul></li></ul><table><tr><td>1</td><td>2</td></tr></table><pre>code</pre></article></body></html>`),
		[]byte(strings.Repeat("<div>", 300)), []byte("<p>caf\xe9</p>"), []byte(`<time datetime="2020-01-01">x</time>`))
}

func FuzzText(f *testing.F) {
	fuzzExtract(f, extract.Text, []byte("Title\n\nFirst paragraph.\nStill first.\n\n\nSecond."), []byte("\r\n\r\n"), []byte("x\x00y"))
}

func FuzzPDF(f *testing.F) {
	valid := pdftest.New(f, "Title", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), "Page one text.\n\nSecond paragraph.", "", "Page three.")
	fuzzExtract(f, extract.PDF, valid, []byte("%PDF-1.4\n"), valid[:len(valid)/2])
}
