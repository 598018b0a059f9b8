package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
)

// decodeJSON reads one JSON object of at most limit bytes into v, refusing unknown fields (a
// misspelt field is a client bug better reported than ignored), trailing data, and text that no
// store keeps: invalid UTF-8 (which encoding/json would silently turn into U+FFFD) and NUL
// characters, each reported with the field that holds it.
func decodeJSON(c echo.Context, v any, limit int64) error {
	r := c.Request()
	if mt, _, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType)); err != nil || mt != echo.MIMEApplicationJSON {
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "send the body as application/json")
	}
	raw, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, limit))
	if err != nil {
		return err
	}
	return decodeJSONBytes(raw, v)
}

// decodeJSONBytes is decodeJSON's work on a body already read.
func decodeJSONBytes(raw []byte, v any) error {
	if err := checkJSONText(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return ragd.Invalidf("body", "invalid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ragd.Invalidf("body", "invalid JSON: more than one value")
	}
	return nil
}

// checkJSONText walks the tokens of a JSON document and refuses the first key or string that is
// not valid UTF-8 in the raw bytes, or holds a NUL once decoded, naming the field by its path
// ("pins[2]", "meta.title"). Syntax errors are left for the decoder to report.
func checkJSONText(raw []byte) error {
	if utf8.Valid(raw) && !bytes.Contains(raw, []byte(`\u0000`)) {
		return nil // the common case: nothing to find
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		array bool
		key   string
		index int
		isKey bool // the next string in an object is a key
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			switch {
			case f.array:
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			case f.key != "":
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			}
		}
		if b.Len() == 0 {
			return "body"
		}
		return b.String()
	}
	// advance moves the enclosing container past one value.
	advance := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].isKey = true
			}
		}
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil // EOF or a syntax error, which the decoder reports
		}
		end := dec.InputOffset()
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{isKey: true})
			case '[':
				stack = append(stack, frame{array: true})
			default:
				stack = stack[:len(stack)-1]
				advance()
			}
		case string:
			n := len(stack)
			if n > 0 && !stack[n-1].array && stack[n-1].isKey {
				stack[n-1].key, stack[n-1].isKey = "", false
				if !utf8.Valid(raw[start:end]) || strings.ContainsRune(t, 0) {
					return ragd.Invalidf(path(), "a field name is not valid UTF-8 or holds a NUL character")
				}
				stack[n-1].key = t
				continue
			}
			if !utf8.Valid(raw[start:end]) {
				return ragd.Invalidf(path(), "is not valid UTF-8")
			}
			if strings.ContainsRune(t, 0) {
				return ragd.Invalidf(path(), "holds a NUL character")
			}
			advance()
		default:
			advance()
		}
	}
}

// checkText refuses a form value that is not valid UTF-8 or holds a NUL, naming its field.
func checkText(field, s string) error {
	switch {
	case !utf8.ValidString(s):
		return ragd.Invalidf(field, "is not valid UTF-8")
	case strings.ContainsRune(s, 0):
		return ragd.Invalidf(field, "holds a NUL character")
	}
	return nil
}
