package extract_test

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/extract"
)

// The upload that ran for minutes: a megabyte of nested blockquotes. It is refused before the
// parser sees it, by the depth bound.
func TestNestedMarkdownIsRefused(t *testing.T) {
	t.Parallel()
	for name, data := range map[string][]byte{
		"one line of 1M '>'":   bytes.Repeat([]byte(">"), 1<<20),
		"'> ' nested per line": nestedQuotes(1 << 20),
		"nested list markers":  bytes.Repeat([]byte("- "), 1<<19),
		"indented list":        indentedList(1 << 20),
	} {
		_, err := extract.Extract(context.Background(), extract.Markdown, data, "")
		require.ErrorIs(t, err, extract.ErrTooComplex, name)
		require.ErrorIs(t, err, ragd.ErrInvalid, name)
	}
	// Real documents nest a few levels; the bound is far above them.
	doc, err := extract.Extract(context.Background(), extract.Markdown, []byte("> quoted\n> > twice\n\n- a\n  - b\n    - c\n"), "")
	require.NoError(t, err)
	require.NotEmpty(t, doc.Blocks)
}

// nestedQuotes is about n bytes of lines each one '>' deeper than the one before.
func nestedQuotes(n int) []byte {
	var b bytes.Buffer
	for d := 1; b.Len() < n; d++ {
		b.WriteString(strings.Repeat("> ", d))
		b.WriteString("x\n")
	}
	return b.Bytes()
}

func indentedList(n int) []byte {
	var b bytes.Buffer
	for d := 0; b.Len() < n; d++ {
		b.WriteString(strings.Repeat("  ", d))
		b.WriteString("- x\n")
	}
	return b.Bytes()
}

// A megabyte nested just under the bound parses (goldmark is linear in the file once the depth is
// bounded), and a megabyte of HTML nested past its bound is refused.
func TestBoundedNestingStillParses(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	for b.Len() < 1<<20 {
		for d := 1; d <= extract.DefaultLimits.MaxDepth; d++ {
			b.WriteString(strings.Repeat(">", d) + " quoted text\n")
		}
		b.WriteString("\nparagraph\n\n")
	}
	doc, err := extract.Extract(context.Background(), extract.Markdown, b.Bytes(), "")
	require.NoError(t, err)
	require.NotEmpty(t, doc.Text)

	deep := strings.Repeat("<div>", 300) + "text"
	_, err = extract.Extract(context.Background(), extract.HTML, []byte(deep), "")
	require.ErrorIs(t, err, extract.ErrTooComplex)
	// Deeper still, the HTML parser's own bound (512 open elements) refuses it first.
	deep = strings.Repeat("<div>", 1<<17) + "text"
	_, err = extract.Extract(context.Background(), extract.HTML, []byte(deep), "")
	require.ErrorIs(t, err, ragd.ErrInvalid)

	many := "<html><body>" + strings.Repeat("<p>a</p>", extract.DefaultLimits.MaxElements+1) + "</body></html>"
	_, err = extract.Extract(context.Background(), extract.HTML, []byte(many), "")
	require.ErrorIs(t, err, extract.ErrTooComplex)
}

// countdown is a context that ends after its Err has been asked n times: a request cancelled in
// the middle of a parse, at a point the test chooses without any clock.
type countdown struct {
	context.Context
	left  atomic.Int64
	calls atomic.Int64
}

func newCountdown(n int64) *countdown {
	c := &countdown{Context: context.Background()}
	c.left.Store(n)
	return c
}

func (c *countdown) Err() error {
	c.calls.Add(1)
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// Cancellation stops extraction in the middle of the parse, and the error is the context's.
func TestExtractionStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	var md bytes.Buffer
	for i := 0; md.Len() < 4<<20; i++ {
		md.WriteString("> a line of a long quoted paragraph that goes on\n")
	}
	ctx := newCountdown(5)
	_, err := extract.Extract(ctx, extract.Markdown, md.Bytes(), "")
	require.ErrorIs(t, err, context.Canceled)
	// The parser checks every 256 lines: it saw the cancellation on its sixth check, about 1,500
	// lines into the 90,000, and asked no more (one check before and one after the parse).
	require.LessOrEqual(t, ctx.calls.Load(), int64(8))

	var text bytes.Buffer
	for text.Len() < 4<<20 {
		text.WriteString("a paragraph\n\n")
	}
	ctx = newCountdown(3)
	_, err = extract.Extract(ctx, extract.Text, text.Bytes(), "")
	require.ErrorIs(t, err, context.Canceled)
	require.LessOrEqual(t, ctx.calls.Load(), int64(3+4), "it stopped within a few checks of the cancellation")

	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, f := range []extract.Format{extract.Markdown, extract.Text, extract.HTML, extract.PDF} {
		_, err := extract.Extract(done, f, []byte("# x\n\ny"), "")
		require.ErrorIs(t, err, context.Canceled, f)
	}
}

// A paragraph is one line to the reader's checks, and goldmark's link parser scans to its end
// for every "](" left open: "[a](" repeated costs n squared (16 KB 0.5 s, 64 KB 6 s; 800 KB posted
// to ragd serve was still parsing 7 minutes later), so the inline parse itself sees the
// cancellation.
func TestLinkHeavyParagraphStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	line := []byte(strings.Repeat("[a](", 1<<12))
	ctx := newCountdown(5)
	_, err := extract.Extract(ctx, extract.Markdown, line, "")
	require.ErrorIs(t, err, context.Canceled)
	require.LessOrEqual(t, ctx.calls.Load(), int64(8), "it stopped within a few inline checks of the cancellation")

	// A megabyte of it, from a request already gone, ends at once.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = extract.Extract(done, extract.Markdown, []byte(strings.Repeat("[a](", 1<<18)), "")
	require.ErrorIs(t, err, context.Canceled)

	// Links still parse.
	doc, err := extract.Extract(context.Background(), extract.Markdown, []byte("See [the guide](https://example.com/guide) and *this*."), "")
	require.NoError(t, err)
	require.Equal(t, []string{"https://example.com/guide"}, doc.Links)
}

func TestNULIsRefusedInText(t *testing.T) {
	t.Parallel()
	for _, f := range []extract.Format{extract.Markdown, extract.Text, extract.HTML} {
		_, err := extract.Extract(context.Background(), f, []byte("hello\x00world"), "")
		require.ErrorIs(t, err, extract.ErrNUL, f)
		require.ErrorIs(t, err, ragd.ErrInvalid, f)
		require.ErrorContains(t, err, "at byte 5", f)
	}
}
