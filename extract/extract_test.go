package extract_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/extract"
	"github.com/ragd/ragd/extract/pdftest"
)

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "extract", name))
	require.NoError(t, err)
	return data
}

func date(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &t
}

// shape describes a block by kind, level and page, which is what most cases care about.
func shape(b extract.Block) string {
	s := string(b.Kind)
	if b.Level > 0 {
		s += "/" + string(rune('0'+b.Level))
	}
	if b.Page > 0 {
		s += "@" + string(rune('0'+b.Page))
	}
	return s
}

// requireConsistent checks what every Doc promises: blocks are the text's pieces, in order,
// trimmed, and joined by blank lines.
func requireConsistent(t *testing.T, doc *extract.Doc) {
	t.Helper()
	var joined []string
	for i, b := range doc.Blocks {
		require.Equal(t, doc.Text[b.Start:b.End], b.Text, "block %d", i)
		require.Equal(t, strings.TrimSpace(b.Text), b.Text, "block %d", i)
		require.NotEmpty(t, b.Text, "block %d", i)
		joined = append(joined, b.Text)
	}
	require.Equal(t, strings.Join(joined, "\n\n"), doc.Text)
}

func TestExtract(t *testing.T) {
	t.Parallel()

	created := time.Date(2024, 3, 5, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		format    extract.Format
		data      []byte
		base      string
		title     string
		shapes    []string
		pages     int
		published *time.Time
		links     []string
		contains  []string // substrings of Text
		excludes  []string // substrings that must not be in Text
		text      string   // the whole Text, when set
	}{
		{
			name:   "markdown with front matter",
			format: extract.Markdown,
			data:   testdata(t, "guide.md"),
			base:   "https://docs.example.com/guide/install.md",
			title:  "Installing ragd",
			shapes: []string{
				"heading/1", "paragraph", "heading/2", "paragraph", "code", "heading/3", "paragraph",
				"list", "heading/2", "paragraph", "heading/1", "table", "paragraph",
			},
			published: date("2024-05-17T00:00:00Z"),
			links: []string{
				"https://example.com/releases",
				"https://brew.sh",
				"https://docs.example.com/guide/config.md",
			},
			contains: []string{
				"Install\n\nragd ships as a single binary.",
				"curl -LO https://example.com/ragd.tar.gz\ntar xzf ragd.tar.gz",
				"- Go 1.26 or newer\n- PostgreSQL with pgvector\n  - version 0.7 or newer",
				"| `--addr` | listen address   |",
				"\n\nUsage\n\n",
			},
			excludes: []string{"title:", "tags:", "# Install", "```", "====="},
		},
		{
			name:      "markdown title from first h1 without base",
			format:    extract.Markdown,
			data:      []byte("Intro line.\n\n## Early\n\n# Real Title #\n\n> Quoted [x](../x.md) and [y](https://y.test/#top).\n\n<div>raw html</div>\n\n***\n"),
			title:     "Real Title",
			shapes:    []string{"paragraph", "heading/2", "heading/1", "paragraph"},
			links:     []string{"https://y.test/"},
			text:      "Intro line.\n\nEarly\n\nReal Title\n\n> Quoted [x](../x.md) and [y](https://y.test/#top).",
			published: nil,
		},
		{
			name:   "markdown thematic break is not front matter",
			format: extract.Markdown,
			data:   []byte("---\ntitle: no\n"),
			shapes: []string{"paragraph"},
			text:   "title: no",
			title:  "",
		},
		{
			name:      "html article",
			format:    extract.HTML,
			data:      testdata(t, "article.html"),
			base:      "https://blog.example.com/posts/hybrid",
			title:     "Tuning Hybrid Search",
			shapes:    []string{"paragraph", "heading/2", "paragraph", "list", "heading/3", "paragraph", "code", "table"},
			published: date("2024-03-05T09:30:00Z"),
			links:     []string{"https://blog.example.com/blog/bm25-basics", "https://example.org/rrf.pdf"},
			contains: []string{
				"Hybrid search combines lexical scoring with dense vectors. Each retriever catches",
				"- Pick k around sixty.\n- Fetch more candidates than you return.",
				"score(d) = sum 1 / (k + rank(d))",
				"k | Recall@10\n10 | 0.71\n60 | 0.78",
			},
			excludes: []string{"Home", "About us", "Sponsored", "Copyright", "analytics", "tracking", "font-family"},
		},
		{
			name:      "html short page without article",
			format:    extract.HTML,
			data:      []byte(`<html><head><title>Tiny</title></head><body><nav><a href="/a">Menu</a></nav><div>Short <b>note</b> with <a href="b.html#x">a link</a>.<br>Next line.</div><ol><li>one<ul><li>inner</li></ul></li><li>two</li></ol><footer>Footer</footer></body></html>`),
			base:      "https://x.test/dir/page.html",
			title:     "Tiny",
			shapes:    []string{"paragraph", "list"},
			links:     []string{"https://x.test/dir/b.html"},
			text:      "Short note with a link. Next line.\n\n1. one\n  - inner\n2. two",
			published: nil,
		},
		{
			name:      "html time element and declared legacy charset",
			format:    extract.HTML,
			data:      []byte("<html><head><meta charset=\"iso-8859-1\"></head><body><h1>Caf\xe9</h1><p><time datetime=\"2023-11-02T08:00:00Z\">Nov 2</time> cr\xe8me br\xfbl\xe9e</p></body></html>"),
			title:     "Café",
			shapes:    []string{"heading/2", "paragraph"},
			published: date("2023-11-02T08:00:00Z"),
			text:      "Café\n\nNov 2 crème brûlée",
		},
		{
			name:   "text",
			format: extract.Text,
			data:   testdata(t, "notes.txt"),
			shapes: []string{"paragraph", "paragraph", "paragraph"},
			text: "Meeting notes\nRetrieval sync, week 12\n\n" +
				"We agreed to keep chunk windows at 256 tokens.\nOverlap stays at 32 tokens.\n\n" +
				"Open question: should PDF pages ever be merged?",
		},
		{
			name:   "text with CRLF, BOM and whitespace-only lines",
			format: extract.Text,
			data:   []byte("\uFEFFfirst  \r\nsecond\r\n \t \r\nthird\rfourth\n"),
			shapes: []string{"paragraph", "paragraph"},
			text:   "first\nsecond\n\nthird\nfourth",
		},
		{
			name:   "pdf",
			format: extract.PDF,
			data: pdftest.New(t, "Quarterly Report", created,
				"Revenue grew on page one.\nThis line wraps onto the same paragraph.\n\nA second paragraph on page one.",
				"",
				"Costs fell on page three."),
			title:     "Quarterly Report",
			shapes:    []string{"paragraph@1", "paragraph@1", "paragraph@3"},
			pages:     3,
			published: &created,
			text: "Revenue grew on page one. This line wraps onto the same paragraph.\n\n" +
				"A second paragraph on page one.\n\nCosts fell on page three.",
		},
		{
			name:      "pdf title from first line",
			format:    extract.PDF,
			data:      pdftest.New(t, "", created, "", "Annual Summary\nBody text follows."),
			title:     "Annual Summary",
			shapes:    []string{"paragraph@2"},
			pages:     2,
			published: &created,
			text:      "Annual Summary Body text follows.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			doc, err := extract.Extract(context.Background(), tt.format, tt.data, tt.base)
			require.NoError(t, err)
			requireConsistent(t, doc)
			require.Equal(t, tt.format, doc.Format)
			require.Equal(t, tt.title, doc.Title)
			var shapes []string
			for _, b := range doc.Blocks {
				shapes = append(shapes, shape(b))
			}
			require.Equal(t, tt.shapes, shapes)
			require.Equal(t, tt.pages, doc.Pages)
			if tt.published == nil {
				require.Nil(t, doc.Published)
			} else {
				require.NotNil(t, doc.Published)
				require.True(t, tt.published.Equal(*doc.Published), "published %v, want %v", doc.Published, tt.published)
			}
			require.Equal(t, tt.links, doc.Links)
			for _, s := range tt.contains {
				require.Contains(t, doc.Text, s)
			}
			for _, s := range tt.excludes {
				require.NotContains(t, doc.Text, s)
			}
			if tt.text != "" {
				require.Equal(t, tt.text, doc.Text)
			}
		})
	}
}

func TestExtractErrors(t *testing.T) {
	t.Parallel()

	valid := pdftest.New(t, "", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), "Some text.")
	garbled := append([]byte(nil), valid...)
	copy(garbled[len(garbled)/3:], strings.Repeat("\x00garbage", 8))

	tests := []struct {
		name    string
		format  extract.Format
		data    []byte
		base    string
		want    error  // besides ragd.ErrInvalid
		message string // part of the error message
	}{
		{"invalid UTF-8 text", extract.Text, testdata(t, "invalid-utf8.txt"), "", extract.ErrInvalidUTF8, "invalid UTF-8 at byte 37"},
		{"invalid UTF-8 markdown", extract.Markdown, []byte("# Hi\n\xc3("), "", extract.ErrInvalidUTF8, "at byte 5"},
		{"invalid UTF-8 in declared UTF-8 html", extract.HTML, []byte("<meta charset=utf-8><p>\xff</p>"), "", extract.ErrInvalidUTF8, "at byte 23"},
		{"whitespace text", extract.Text, testdata(t, "blank.txt"), "", extract.ErrEmpty, "no text"},
		{"empty markdown", extract.Markdown, nil, "", extract.ErrEmpty, "no text"},
		{"front matter only", extract.Markdown, []byte("---\ntitle: x\n---\n\n<!-- nothing -->\n"), "", extract.ErrEmpty, "no text"},
		{"html without text", extract.HTML, []byte("<html><body><script>x()</script><nav>Menu</nav></body></html>"), "", extract.ErrEmpty, "no text"},
		{"pdf without text layer", extract.PDF, pdftest.New(t, "Scan", time.Now(), "", ""), "", extract.ErrEmpty, "no text"},
		{"unknown format", extract.Format("docx"), []byte("x"), "", extract.ErrUnknownFormat, "extract docx: unknown format"},
		{"truncated pdf", extract.PDF, valid[:len(valid)/2], "", extract.ErrCorrupt, "extract pdf: corrupt file"},
		{"garbled pdf", extract.PDF, garbled, "", extract.ErrCorrupt, "corrupt file"},
		{"not a pdf", extract.PDF, []byte("%PDF-1.4\nhello\n%%EOF\n"), "", extract.ErrCorrupt, "corrupt file"},
		{"bad base URL", extract.HTML, []byte("<p>x</p>"), "http://[::1", ragd.ErrInvalid, "base_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			doc, err := extract.Extract(context.Background(), tt.format, tt.data, tt.base)
			require.Nil(t, doc)
			require.ErrorIs(t, err, tt.want)
			require.ErrorIs(t, err, ragd.ErrInvalid)
			require.ErrorContains(t, err, tt.message)
		})
	}
}

// TestExtractPDFDamage overwrites slices of a valid PDF all along its length: the PDF library
// panics on some of these, and Extract must turn every panic into an error.
func TestExtractPDFDamage(t *testing.T) {
	t.Parallel()

	valid := pdftest.New(t, "Title", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), "Page one text.", "Page two text.")
	for _, junk := range []string{"\x00\x00\x00\x00", "<< /Type /Pages /Count 99999 >>", "] ] ] ) ) >> >>", "9999999999 0 R"} {
		for i := 0; i+len(junk) <= len(valid); i += 7 {
			data := append([]byte(nil), valid...)
			copy(data[i:], junk)
			doc, err := extract.Extract(context.Background(), extract.PDF, data, "")
			if err != nil {
				require.ErrorIs(t, err, ragd.ErrInvalid, "junk %q at %d", junk, i)
				continue
			}
			requireConsistent(t, doc)
		}
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name        string
		file        string
		contentType string
		data        string
		want        extract.Format
	}{
		{"markdown extension", "README.md", "", "", extract.Markdown},
		{"long markdown extension, upper case", "notes.MARKDOWN", "", "", extract.Markdown},
		{"text extension", "a/b/notes.txt", "", "", extract.Text},
		{"text extension, long", "notes.text", "", "", extract.Text},
		{"html extension", "index.html", "", "", extract.HTML},
		{"htm extension", "index.HTM", "", "", extract.HTML},
		{"pdf extension", "paper.pdf", "", "", extract.PDF},
		{"extension wins over content type", "paper.pdf", "text/html", "<html>", extract.PDF},
		{"content type with charset", "", "text/html; charset=UTF-8", "", extract.HTML},
		{"markdown content type", "upload", "text/markdown; charset=utf-8", "", extract.Markdown},
		{"plain content type", "", "text/plain", "", extract.Text},
		{"pdf content type", "", "application/pdf", "", extract.PDF},
		{"content type wins over sniffing", "", "text/plain", "%PDF-1.7", extract.Text},
		{"sniffed pdf", "blob", "application/octet-stream", "%PDF-1.4\n...", extract.PDF},
		{"sniffed doctype", "", "", "\uFEFF  <!DOCTYPE html><html>", extract.HTML},
		{"sniffed html tag", "", "", "\n<HTML lang=en>", extract.HTML},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			got, err := extract.Detect(tt.file, tt.contentType, []byte(tt.data))
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestDetectUnknown(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct{ file, contentType, data string }{
		{"report.docx", "", "PK\x03\x04"},
		{"", "image/png", "\x89PNG"},
		{"", "not a content type", "plain words"},
		{"", "", ""},
	} {
		_, err := extract.Detect(tt.file, tt.contentType, []byte(tt.data))
		require.ErrorIs(t, err, extract.ErrUnknownFormat)
		require.ErrorIs(t, err, ragd.ErrInvalid)
		require.False(t, errors.Is(err, extract.ErrEmpty))
	}
}

func TestTextTitleLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, title string
	}{
		{"Power Outages\n\nKeep freezers closed.", "Power Outages"},
		{"Power Outages\n\nKeep freezers closed.\n\nUse flashlights.", "Power Outages"},
		{"Keep freezers closed.\n\nUse flashlights.", ""}, // a sentence, not a title
		{"Power Outages", ""},                           // the only paragraph is the text
		{"Power\nOutages\n\nKeep freezers closed.", ""}, // two lines are a paragraph
		{"Notes:\n\nKeep freezers closed.", ""},         // a lead-in, not a title
		{strings.Repeat("x", 101) + "\n\nKeep freezers closed.", ""},
	} {
		doc, err := extract.Extract(context.Background(), extract.Text, []byte(tc.in), "")
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.title, doc.Title, tc.in)
		if tc.title != "" {
			require.Equal(t, extract.Heading, doc.Blocks[0].Kind)
			require.Equal(t, 1, doc.Blocks[0].Level)
		}
	}
}
