// Package token counts tokens with the cl100k_base BPE, loaded from data embedded in the binary, so
// budgets and chunk sizes are measured in the units an LLM bills rather than guessed from words.
package token

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/ragd/ragd/memo"
)

// Encoding is the BPE every count in ragd uses.
const Encoding = "cl100k_base"

var (
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
)

func encoding() *tiktoken.Tiktoken {
	once.Do(func() {
		// The offline loader carries the BPE ranks inside the module: no network at run time.
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		enc, err = tiktoken.GetEncoding(Encoding)
	})
	if err != nil {
		// The ranks are compiled in; failing to parse them is a build defect, not a run-time state.
		panic("token: loading " + Encoding + ": " + err.Error())
	}
	return enc
}

// Count returns the number of cl100k_base tokens in s.
//
// The BPE's pre-tokenizer (a regular expression, most of the cost) never joins a space to the
// piece before it when that piece ends in a letter, digit or other non-space character: the
// space starts the next piece, and what follows depends on nothing before it. So s counts
// exactly as the sum of its words cut before each such space ("The", " quick", " fox."), and
// words recur: each is counted once and remembered. TestCountMatchesTheEncoder checks the sum
// against the encoder on every text of the evaluation data.
//
// A word longer than longestPiece is the exception: see longestPiece.
func Count(s string) int {
	n := 0
	eachWord(s, func(w string) { n += countWord(w) })
	return n
}

// eachWord calls f with the words of s, in order, as Count cuts them: together they are s.
func eachWord(s string, f func(string)) {
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' && cuttable(s[:i]) {
			f(s[start:i])
			start = i
		}
	}
	if start < len(s) {
		f(s[start:])
	}
}

// longestPiece bounds the text the BPE encodes at once: its merges cost time quadratic in the
// length of a piece of text without spaces, so one 8 KiB "word" in a question took some 40 ms to
// count (BenchmarkCountLongWord). A longer word is counted, and encoded by Truncate, in pieces of
// at most this many bytes cut on rune boundaries, in time linear in its length; its count can
// then differ from the encoder's by a token or so per cut (a merge across the cut is not made).
// No word of the evaluation data is this long (TestCountMatchesTheEncoder).
const longestPiece = 256

// eachPiece calls f with w cut into pieces of at most longestPiece bytes.
func eachPiece(w string, f func(string)) {
	for len(w) > longestPiece {
		i := longestPiece
		for i > 1 && !utf8.RuneStart(w[i]) {
			i--
		}
		f(w[:i])
		w = w[i:]
	}
	f(w)
}

// encodeIDs encodes s as the encoder does, except for words longer than longestPiece, which are
// encoded piece by piece. Words are encoded apart from each other exactly, so runs of ordinary
// words go to the encoder whole.
func encodeIDs(s string) []int {
	e := encoding()
	var ids []int
	run, off := 0, 0 // s[run:off] is ordinary words not yet encoded
	eachWord(s, func(w string) {
		if len(w) > longestPiece {
			ids = append(ids, e.EncodeOrdinary(s[run:off])...)
			eachPiece(w, func(p string) { ids = append(ids, e.EncodeOrdinary(p)...) })
			run = off + len(w)
		}
		off += len(w)
	})
	return append(ids, e.EncodeOrdinary(s[run:])...)
}

// cuttable says whether text before a space ends in a character the pre-tokenizer never joins
// to that space: anything but white space. Letters, digits and printable ASCII are certain; other
// runes are treated as white space, which only means the text is not cut there.
func cuttable(before string) bool {
	c := before[len(before)-1]
	if c < utf8.RuneSelf {
		return c > ' ' && c < 0x7f
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// encode counts a text with the encoder itself.
func encode(s string) int { return len(encoding().EncodeOrdinary(s)) }

// words remembers the counts of short words (a corpus's common words come back at once), about
// 256k of them, some 20 MB.
var words = memo.New[int32](256 * 1024)

// longestWord is the longest text remembered: longer ones (URLs, tables, scripts without spaces)
// are rare and would fill the memo.
const longestWord = 48

func countWord(w string) int {
	if len(w) > longestPiece {
		n := 0
		eachPiece(w, func(p string) { n += encode(p) })
		return n
	}
	if len(w) > longestWord {
		return encode(w)
	}
	return int(words.Get(w, func(w string) int32 { return int32(encode(w)) }))
}

// Truncate returns the longest prefix of s that holds at most max tokens, cut on a token boundary.
func Truncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	ids := encodeIDs(s)
	if len(ids) <= max {
		return s
	}
	return encoding().Decode(ids[:max])
}

// Fit returns the longest prefix of s, cut on a token boundary and without trailing space, that
// counts at most max tokens. Decoding a prefix of tokens and encoding it again can merge
// differently at the cut, so the count is checked and the cut moved back until it holds.
func Fit(s string, max int) string {
	for n := max; n > 0; n-- {
		text := strings.TrimRight(Truncate(s, n), " \n")
		if Count(text) <= max {
			return text
		}
	}
	return ""
}
