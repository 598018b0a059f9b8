package chunk_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/chunk"
	"github.com/ragd/ragd/extract"
	"github.com/ragd/ragd/extract/pdftest"
	"github.com/ragd/ragd/token"
)

func extractFile(t *testing.T, f extract.Format, name string) *extract.Doc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "extract", name))
	require.NoError(t, err)
	return extractBytes(t, f, data)
}

func extractBytes(t *testing.T, f extract.Format, data []byte) *extract.Doc {
	t.Helper()
	doc, err := extract.Extract(context.Background(), f, data, "")
	require.NoError(t, err)
	return doc
}

// sentences returns n numbered sentences of about ten tokens each, separated by spaces.
func sentences(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("Sentence %d tells a short and plain story.", i)
	}
	return strings.Join(s, " ")
}

// split runs Split and checks what every result promises.
func split(t *testing.T, doc *extract.Doc, opt chunk.Options) []chunk.Chunk {
	t.Helper()
	chunks := chunk.Split(doc, opt)
	max := opt.WithDefaults().MaxTokens
	runes := []rune(doc.Text)
	prevStart, prevEnd := 0, 0
	for i, c := range chunks {
		require.Less(t, c.CharStart, c.CharEnd, "chunk %d", i)
		require.Equal(t, string(runes[c.CharStart:c.CharEnd]), c.Text, "chunk %d: text is not the document's text at its offsets", i)
		require.Equal(t, strings.TrimSpace(c.Text), c.Text, "chunk %d", i)
		require.NotEmpty(t, c.Text, "chunk %d", i)
		require.Equal(t, token.Count(c.Text), c.Tokens, "chunk %d", i)
		require.LessOrEqual(t, c.Tokens, max, "chunk %d", i)
		require.GreaterOrEqual(t, c.CharStart, prevStart, "chunk %d starts before the previous one", i)
		require.Greater(t, c.CharEnd, prevEnd, "chunk %d ends within the previous one", i)
		prevStart, prevEnd = c.CharStart, c.CharEnd
		if doc.Pages == 0 {
			require.Zero(t, c.PageStart, "chunk %d", i)
			require.Zero(t, c.PageEnd, "chunk %d", i)
		} else {
			require.True(t, 1 <= c.PageStart && c.PageStart <= c.PageEnd && c.PageEnd <= doc.Pages, "chunk %d pages %d-%d", i, c.PageStart, c.PageEnd)
		}
	}
	return chunks
}

func headings(chunks []chunk.Chunk) []string {
	var hs []string
	for _, c := range chunks {
		hs = append(hs, c.Heading)
	}
	return hs
}

func TestSplitHeadingPaths(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		format   extract.Format
		file     string
		headings []string
		starts   []string // each chunk's text starts with this
	}{
		{
			name:     "markdown",
			format:   extract.Markdown,
			file:     "guide.md",
			headings: []string{"Install", "Install > Linux", "Install > Linux > From source", "Install > macOS", "Usage"},
			starts:   []string{"Install\n\nragd ships", "Linux\n\nDownload", "From source\n\nYou need:", "macOS\n\nUse Homebrew", "Usage\n\n| Flag"},
		},
		{
			name:     "html",
			format:   extract.HTML,
			file:     "article.html",
			headings: []string{"", "Reciprocal rank fusion", "Reciprocal rank fusion > Choosing k"},
			starts:   []string{"Hybrid search", "Reciprocal rank fusion\n\nReciprocal rank fusion adds", "Choosing k\n\nA larger constant"},
		},
		{
			name:     "text has no headings",
			format:   extract.Text,
			file:     "notes.txt",
			headings: []string{""},
			starts:   []string{"Meeting notes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			chunks := split(t, extractFile(t, tt.format, tt.file), chunk.Options{})
			require.Equal(t, tt.headings, headings(chunks))
			for i, c := range chunks {
				require.True(t, strings.HasPrefix(c.Text, tt.starts[i]), "chunk %d: %q", i, c.Text)
			}
		})
	}
}

func TestSplitHeadingReplacesDeeperLevels(t *testing.T) {
	t.Parallel()

	doc := extractBytes(t, extract.Markdown, []byte("# A\n\na\n\n### A3\n\nb\n\n## B\n\nc\n\n#### B4\n\nd\n\n# C\n\ne\n"))
	chunks := split(t, doc, chunk.Options{})
	require.Equal(t, []string{"A", "A > A3", "A > B", "A > B > B4", "C"}, headings(chunks))
}

func TestSplitPacksBlocks(t *testing.T) {
	t.Parallel()

	var paras []string
	for i := range 40 {
		paras = append(paras, fmt.Sprintf("Paragraph %d is short.", i))
	}
	doc := extractBytes(t, extract.Text, []byte(strings.Join(paras, "\n\n")))
	chunks := split(t, doc, chunk.Options{MaxTokens: 64})

	require.Greater(t, len(chunks), 1)
	require.Less(t, len(chunks), len(paras)/4, "short paragraphs should share chunks")
	var got []string
	for i, c := range chunks {
		got = append(got, strings.Split(c.Text, "\n\n")...)
		if i < len(chunks)-1 {
			// Packing is greedy, by an estimate that counts a token for each "\n\n": the next
			// paragraph would not have fit.
			next := strings.SplitN(chunks[i+1].Text, "\n\n", 2)[0]
			gaps := strings.Count(c.Text, "\n\n") + 1
			require.Greater(t, token.Count(c.Text+"\n\n"+next)+gaps, 64)
		}
	}
	require.Equal(t, paras, got, "every paragraph once, in order, none cut")
}

func TestSplitLongBlock(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		overlap int
	}{
		{"with overlap", 16},
		{"without overlap", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			doc := extractBytes(t, extract.Text, []byte(sentences(60)))
			chunks := split(t, doc, chunk.Options{MaxTokens: 64, Overlap: tt.overlap})
			require.Greater(t, len(chunks), 5)
			require.True(t, strings.HasSuffix(chunks[len(chunks)-1].Text, "Sentence 59 tells a short and plain story."))

			runes := []rune(doc.Text)
			for i := 1; i < len(chunks); i++ {
				prev, c := chunks[i-1], chunks[i]
				require.True(t, strings.HasPrefix(c.Text, "Sentence "), "chunk %d is cut at a sentence: %q", i, c.Text)
				require.Greater(t, prev.Tokens, 64-12, "chunk %d is filled to about one sentence of MaxTokens", i-1)
				if tt.overlap < 0 {
					require.Equal(t, prev.CharEnd+1, c.CharStart, "chunk %d follows the previous one after a space", i)
					continue
				}
				require.Less(t, c.CharStart, prev.CharEnd, "chunk %d overlaps the previous one", i)
				repeated := string(runes[c.CharStart:prev.CharEnd])
				require.True(t, strings.HasSuffix(prev.Text, repeated))
				require.True(t, strings.HasPrefix(c.Text, repeated))
				// Whole sentences of about ten tokens each, closest to the overlap.
				require.InDelta(t, tt.overlap, token.Count(repeated), 5)
			}
		})
	}
}

func TestSplitUnbrokenRuns(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		text string
	}{
		{"ascii", strings.Repeat("abcdefghij", 400)},
		{"multi-byte", strings.Repeat("数据检索与生成", 300)},
		{"accents and emoji", strings.Repeat("crème brûlée 🍮 ", 300)},
		{"words without sentence ends", strings.Repeat("lorem ipsum dolor sit amet ", 300)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			doc := extractBytes(t, extract.Text, []byte(tt.text))
			chunks := split(t, doc, chunk.Options{MaxTokens: 64, Overlap: 16})
			require.Greater(t, len(chunks), 2)
			require.Zero(t, chunks[0].CharStart)
			require.Equal(t, len([]rune(doc.Text)), chunks[len(chunks)-1].CharEnd)
			for i := 1; i < len(chunks); i++ {
				require.Less(t, chunks[i].CharStart, chunks[i-1].CharEnd, "chunk %d overlaps, leaving no gap", i)
			}
		})
	}
}

// TestSplitOverlapMovesForward has a short sentence before one that nearly fills a window:
// repeating the short one must not make a window that holds nothing new, which split checks.
func TestSplitOverlapMovesForward(t *testing.T) {
	t.Parallel()

	for words := 50; words <= 64; words++ {
		long := "Then" + strings.Repeat(" word", words) + "."
		doc := extractBytes(t, extract.Markdown, []byte("# Heading\n\nShort one. "+long))
		chunks := split(t, doc, chunk.Options{MaxTokens: 64, Overlap: 16})
		require.Equal(t, len([]rune(doc.Text)), chunks[len(chunks)-1].CharEnd, "%d words", words)
	}
}

func TestSplitKeepsHeadingWithText(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		md   string
	}{
		{"long block after heading", "# Title\n\n## Section\n\n" + sentences(40)},
		{"block that fits alone but not with its heading", "# Title\n\n" + sentences(5) + "\n\n## Next heading\n\n" + sentences(6)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			doc := extractBytes(t, extract.Markdown, []byte(tt.md))
			headingTexts := map[string]bool{}
			for _, b := range doc.Blocks {
				if b.Kind == extract.Heading {
					headingTexts[b.Text] = true
				}
			}
			for i, c := range split(t, doc, chunk.Options{MaxTokens: 64, Overlap: 8}) {
				var body bool
				for _, part := range strings.Split(c.Text, "\n\n") {
					body = body || !headingTexts[part]
				}
				require.True(t, body, "chunk %d holds only headings: %q", i, c.Text)
			}
		})
	}
}

func TestSplitPages(t *testing.T) {
	t.Parallel()

	data := pdftest.New(t, "Report", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC),
		sentences(3)+"\n\n"+sentences(3),
		"",
		sentences(3),
		sentences(12))
	doc := extractBytes(t, extract.PDF, data)
	require.Equal(t, 4, doc.Pages)

	type pages struct{ start, end int }
	tests := []struct {
		maxTokens int
		want      []pages
	}{
		{256, []pages{{1, 4}}},
		{100, []pages{{1, 3}, {4, 4}, {4, 4}}},
		{40, []pages{{1, 1}, {1, 1}, {3, 3}, {4, 4}, {4, 4}, {4, 4}, {4, 4}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.maxTokens), func(t *testing.T) {
			t.Parallel()

			var got []pages
			for _, c := range split(t, doc, chunk.Options{MaxTokens: tt.maxTokens, Overlap: 8}) {
				got = append(got, pages{c.PageStart, c.PageEnd})
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestSplitCodePointOffsets(t *testing.T) {
	t.Parallel()

	doc := extractBytes(t, extract.Markdown, []byte("# Über\n\nÉté à Zürich — 数据.\n\n# Ωmega\n\n🍮 done."))
	chunks := split(t, doc, chunk.Options{})
	require.Len(t, chunks, 2)
	require.Equal(t, 0, chunks[0].CharStart)
	require.Equal(t, len([]rune("Über\n\nÉté à Zürich — 数据.")), chunks[0].CharEnd)
	require.Equal(t, chunks[0].CharEnd+2, chunks[1].CharStart)
	require.Equal(t, "Ωmega\n\n🍮 done.", chunks[1].Text)
}

func TestSplitDropsWhitespace(t *testing.T) {
	t.Parallel()

	text := " \t \n\n real text \n\n   "
	real := strings.Index(text, " real")
	doc := &extract.Doc{
		Text: text,
		Blocks: []extract.Block{
			{Kind: extract.Paragraph, Start: 0, End: 3},
			{Kind: extract.Paragraph, Start: real, End: real + len(" real text ")},
			{Kind: extract.Paragraph, Start: len(text) - 3, End: len(text)},
		},
	}
	chunks := split(t, doc, chunk.Options{})
	require.Len(t, chunks, 1)
	require.Equal(t, "real text", chunks[0].Text)

	require.Empty(t, chunk.Split(&extract.Doc{}, chunk.Options{}))
}

func TestOptions(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		opt      chunk.Options
		defaults chunk.Options
		field    string // in the Validate error, "" when valid
	}{
		{"zero means defaults", chunk.Options{}, chunk.Options{MaxTokens: 256, Overlap: 32}, ""},
		{"explicit", chunk.Options{MaxTokens: 512, Overlap: 64}, chunk.Options{MaxTokens: 512, Overlap: 64}, ""},
		{"smallest", chunk.Options{MaxTokens: 32, Overlap: 15}, chunk.Options{MaxTokens: 32, Overlap: 15}, ""},
		{"negative overlap turns it off", chunk.Options{Overlap: -1}, chunk.Options{MaxTokens: 256}, ""},
		{"max tokens too small", chunk.Options{MaxTokens: 31, Overlap: 4}, chunk.Options{MaxTokens: 31, Overlap: 4}, "max_tokens: must be at least 32, got 31"},
		{"negative max tokens", chunk.Options{MaxTokens: -5}, chunk.Options{MaxTokens: -5, Overlap: 32}, "max_tokens"},
		{"overlap of half", chunk.Options{MaxTokens: 64, Overlap: 32}, chunk.Options{MaxTokens: 64, Overlap: 32}, "overlap: must be less than half of max_tokens (32), got 32"},
		{"default overlap too large for max tokens", chunk.Options{MaxTokens: 48}, chunk.Options{MaxTokens: 48, Overlap: 32}, "overlap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			require.Equal(t, tt.defaults, tt.opt.WithDefaults())
			err := tt.opt.Validate()
			if tt.field == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ragd.ErrInvalid)
			require.ErrorContains(t, err, tt.field)
		})
	}
}

// BenchmarkSplit chunks about 1 MB of text: prose in paragraphs of a few sentences with one
// long paragraph that has to be cut into windows, and one unbroken run cut at token boundaries.
func BenchmarkSplit(b *testing.B) {
	var prose strings.Builder
	for prose.Len() < 1<<20 {
		prose.WriteString(sentences(4) + "\n\n")
		if prose.Len() > 1<<19 && prose.Len() < 1<<19+1<<10 {
			prose.WriteString(sentences(500) + "\n\n")
		}
	}
	for _, bb := range []struct {
		name string
		text string
	}{
		{"prose", prose.String()},
		{"unbroken", strings.Repeat("0123456789abcdef", 1<<16)},
	} {
		doc, err := extract.Extract(context.Background(), extract.Text, []byte(bb.text), "")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc.Text)))
			for b.Loop() {
				chunk.Split(doc, chunk.Options{})
			}
		})
	}
}
