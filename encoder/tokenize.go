package encoder

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/knights-analytics/hugot/backends"
	"github.com/knights-analytics/hugot/options"
	"github.com/sugarme/tokenizer"
)

// Tokenizer is hugot's Go tokenizer for a model directory. It is safe for concurrent use.
type Tokenizer struct {
	tk        *tokenizer.Tokenizer
	maxTokens int
}

// NewTokenizer loads dir/tokenizer.json through hugot's loader, so ids match what hugot's own
// pipelines feed the graph.
func NewTokenizer(m *Model) (*Tokenizer, error) {
	hm := &backends.Model{Path: m.Dir, MaxPositionEmbeddings: m.MaxPositions}
	if err := backends.LoadTokenizer(hm, &options.Options{Backend: "GO"}); err != nil {
		return nil, fmt.Errorf("%w: %s/tokenizer.json: %w", ErrModel, m.Dir, err)
	}
	if hm.Tokenizer == nil || hm.Tokenizer.GoTokenizer == nil {
		return nil, fmt.Errorf("%w: %s: no tokenizer loaded", ErrModel, m.Dir)
	}
	return &Tokenizer{tk: hm.Tokenizer.GoTokenizer.Tokenizer, maxTokens: m.MaxPositions}, nil
}

// Sequence is one tokenized input, without padding.
type Sequence struct {
	IDs   []int64
	Types []int64
}

// Encode tokenizes one text with the special tokens the model expects. The tokenizer's own
// padding is dropped (batches are padded to their longest member instead) and the sequence is cut
// to the model's maximum length.
func (t *Tokenizer) Encode(text string) (Sequence, error) {
	enc, err := t.tk.EncodeSingle(validUTF8(text), true)
	if err != nil {
		return Sequence{}, fmt.Errorf("encoder: tokenizing: %w", err)
	}
	n := 0
	for i, m := range enc.AttentionMask {
		if m != 0 {
			n = i + 1
		}
	}
	n = min(n, t.maxTokens)
	s := Sequence{IDs: make([]int64, n), Types: make([]int64, n)}
	for i := range n {
		s.IDs[i] = int64(enc.Ids[i])
		if i < len(enc.TypeIds) {
			s.Types[i] = int64(enc.TypeIds[i])
		}
	}
	return s, nil
}

// EncodePair tokenizes a (query, passage) pair the way hugot's cross-encoder pipeline does for
// BERT models: "query [SEP] passage" as one text, with token type 1 from the first [SEP] on.
func (t *Tokenizer) EncodePair(query, passage string) (Sequence, error) {
	s, err := t.Encode(query + "[SEP]" + passage)
	if err != nil {
		return s, err
	}
	return s, t.setTypes(s)
}

// Pair is EncodePair of a query and a passage already tokenized by IDs, for a caller that read
// their tokens first (the reranker's window): "[CLS] query [SEP] passage [SEP]" cut to the model's
// maximum length as the tokenizer's truncation cuts a single text (from the end, before the final
// [SEP]). TestPairIsEncodePair checks it against EncodePair.
func (t *Tokenizer) Pair(query, passage []int) (Sequence, error) {
	cls, ok1 := t.tk.TokenToId("[CLS]")
	sep, ok2 := t.tk.TokenToId("[SEP]")
	if !ok1 || !ok2 {
		return Sequence{}, fmt.Errorf("%w: tokenizer has no [CLS] or [SEP] token", ErrModel)
	}
	body := min(len(query)+1+len(passage), max(t.maxTokens-2, 0))
	s := Sequence{IDs: make([]int64, 0, body+2), Types: make([]int64, body+2)}
	s.IDs = append(s.IDs, int64(cls))
	for _, id := range query {
		s.IDs = append(s.IDs, int64(id))
	}
	s.IDs = append(s.IDs, int64(sep))
	for _, id := range passage {
		s.IDs = append(s.IDs, int64(id))
	}
	s.IDs = append(s.IDs[:1+body], int64(sep))
	return s, t.setTypes(s)
}

// setTypes gives token type 1 to every token after the first [SEP] of a pair.
func (t *Tokenizer) setTypes(s Sequence) error {
	sep, ok := t.tk.TokenToId("[SEP]")
	if !ok {
		return fmt.Errorf("%w: tokenizer has no [SEP] token", ErrModel)
	}
	for i := 1; i < len(s.IDs)-1; i++ {
		if s.IDs[i] == int64(sep) {
			for j := i + 1; j < len(s.Types); j++ {
				s.Types[j] = 1
			}
			break
		}
	}
	return nil
}

// Batches splits items into runs of at most size, grouping similar lengths so the padding of each
// run stays small. It returns, per run, indexes into lengths.
func Batches(lengths []int, size int) [][]int {
	order := make([]int, len(lengths))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return lengths[order[a]] < lengths[order[b]] })
	var out [][]int
	for len(order) > 0 {
		n := min(size, len(order))
		out = append(out, order[:n:n])
		order = order[n:]
	}
	return out
}

// RunBatched runs items through run in batches of at most size, grouped by length, and returns
// the results in the items' order. Context cancellation is checked between batches.
func RunBatched[T any](ctx context.Context, items []string, size int, run func([]string) ([]T, error)) ([]T, error) {
	lengths := make([]int, len(items))
	for i, it := range items {
		lengths[i] = len(it)
	}
	out := make([]T, len(items))
	for _, idx := range Batches(lengths, size) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := make([]string, len(idx))
		for i, j := range idx {
			batch[i] = items[j]
		}
		res, err := run(batch)
		if err != nil {
			return nil, err
		}
		if len(res) != len(idx) {
			return nil, fmt.Errorf("encoder: runtime returned %d results for %d inputs", len(res), len(idx))
		}
		for i, j := range idx {
			out[j] = res[i]
		}
	}
	return out, nil
}

// IDs returns text's token ids without special tokens, padding or the model's length cut (the
// tokenizer's own truncation, if its tokenizer.json sets one, still applies).
func (t *Tokenizer) IDs(text string) ([]int, error) {
	ids, _, err := t.Words(text)
	return ids, err
}

// Words is IDs with, for each token, whether it starts a word: the others continue the word
// before them (WordPiece's "##" pieces), so text cut at a word start reads back as its tokens.
func (t *Tokenizer) Words(text string) ([]int, []bool, error) {
	enc, err := t.tk.EncodeSingle(validUTF8(text), false)
	if err != nil {
		return nil, nil, fmt.Errorf("encoder: tokenizing: %w", err)
	}
	n := 0
	for i, m := range enc.AttentionMask {
		if m != 0 {
			n = i + 1
		}
	}
	starts := make([]bool, n)
	for i := range starts {
		// A token without a word (-1) stands alone.
		starts[i] = i == 0 || i >= len(enc.Words) || enc.Words[i] < 0 || enc.Words[i] != enc.Words[i-1]
	}
	return enc.Ids[:n:n], starts, nil
}

// Decode returns the text of ids, word pieces joined, special tokens left out.
func (t *Tokenizer) Decode(ids []int) string { return t.tk.Decode(ids, true) }

// validUTF8 replaces invalid bytes by U+FFFD: sugarme's tokenizer panics (slice bounds out of
// range) on invalid UTF-8 followed by multibyte text. Requests and PostgreSQL refuse invalid
// UTF-8 today; this keeps a future path (a file read at ingest, a new route) from crashing a
// batch.
func validUTF8(text string) string {
	if utf8.ValidString(text) {
		return text
	}
	return strings.ToValidUTF8(text, "\uFFFD")
}
