// Package token counts tokens with the cl100k_base BPE, loaded from data embedded in the binary, so
// budgets and chunk sizes are measured in the units an LLM bills rather than guessed from words.
package token

import (
	"strings"
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
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
func Count(s string) int {
	if s == "" {
		return 0
	}
	return len(encoding().EncodeOrdinary(s))
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
