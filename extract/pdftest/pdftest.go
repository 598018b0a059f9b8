// Package pdftest writes small PDFs for tests, so that no binary fixtures need to be committed.
package pdftest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"
)

// New returns an A4 PDF with one page per entry of pages, in 12pt Helvetica. Paragraphs within
// a page are separated by blank lines; an empty entry makes a blank page. The title, unless
// empty, and created go into the document information dictionary.
func New(t testing.TB, title string, created time.Time, pages ...string) []byte {
	t.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	if title != "" {
		f.SetTitle(title, true)
	}
	// fpdf would write the current time for a zero date, so pass a fixed one for stable output.
	f.SetCreationDate(created)
	f.SetModificationDate(created)
	f.SetFont("Helvetica", "", 12)
	for _, page := range pages {
		f.AddPage()
		if strings.TrimSpace(page) != "" {
			f.MultiCell(0, 6, page, "", "", false)
		}
	}
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		t.Fatalf("pdftest: writing PDF: %v", err)
	}
	return buf.Bytes()
}
