package extract

import (
	"testing"
	"time"

	"github.com/ledongthuc/pdf"
	"github.com/stretchr/testify/require"
)

func TestPDFDate(t *testing.T) {
	t.Parallel()

	tests := []struct {
		in   string
		want string // RFC 3339, "" for nil
	}{
		{"D:20240305103000Z", "2024-03-05T10:30:00Z"},
		{"D:20240305103000", "2024-03-05T10:30:00Z"},
		{"D:20240305103000+05'30'", "2024-03-05T10:30:00+05:30"},
		{"D:20240305103000-08'00", "2024-03-05T10:30:00-08:00"},
		{"D:20240305103000+01", "2024-03-05T10:30:00+01:00"},
		{"20240305", "2024-03-05T00:00:00Z"},
		{"D:2024", "2024-01-01T00:00:00Z"},
		{"", ""},
		{"D:202", ""},
		{"D:20241305", ""},
		{"March 5, 2024", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()

			got := pdfDate(tt.in)
			if tt.want == "" {
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			require.Equal(t, tt.want, got.Format(time.RFC3339))
		})
	}
}

// TestPageParagraphs covers layouts that fpdf does not produce: word gaps without space glyphs,
// as TJ-kerned text from TeX shows them, and text that moves up the page.
func TestPageParagraphs(t *testing.T) {
	t.Parallel()

	// glyphs lays s out on one baseline from x, each glyph 6 wide (w 0 means no widths known).
	glyphs := func(s string, x, y, w float64) []pdf.Text {
		var out []pdf.Text
		for _, r := range s {
			out = append(out, pdf.Text{FontSize: 10, X: x, Y: y, W: w, S: string(r)})
			x += 6
		}
		return out
	}
	var page []pdf.Text
	page = append(page, glyphs("Two", 10, 700, 6)...)
	page = append(page, glyphs("words", 40, 700, 6)...)              // a 12-unit gap: a word break
	page = append(page, glyphs("next", 10, 688, 6)...)               // 12 lower: same paragraph
	page = append(page, glyphs("Apart", 10, 650, 6)...)              // 38 lower: a new paragraph
	page = append(page, glyphs("Column", 300, 700, 0)...)            // up the page: a new paragraph
	page = append(page, glyphs(" two", 336, 700, 0)...)              // a space glyph separates words
	page = append(page, pdf.Text{FontSize: 10, X: 0, Y: 0, S: "\n"}) // whitespace only: ignored

	require.Equal(t, [][]string{{"Two words", "next"}, {"Apart"}, {"Column two"}}, pageParagraphs(page))
	require.Empty(t, pageParagraphs(nil))
}
