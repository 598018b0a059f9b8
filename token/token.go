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
func Count(s string) int {
	n, start := 0, 0
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' && cuttable(s[:i]) {
			n += countWord(s[start:i])
			start = i
		}
	}
	if start < len(s) {
		n += countWord(s[start:])
	}
	return n
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
	e := encoding()
	ids := e.EncodeOrdinary(s)
	if len(ids) <= max {
		return s
	}
	return e.Decode(ids[:max])
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
