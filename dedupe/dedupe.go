// Package dedupe decides which of a turn's retrieved chunks are the same source, so that the
// rest of the turn treats each source once.
//
// It runs on the union of the chunks the retrievers found, before fusion. Fusion adds up the
// votes an item gets from each ranked list; if the same passage arrives as two chunks (the same
// chunk reached twice, the same text published in two documents, or neighbouring windows of one
// document), their votes would be split between the twins and each would rank lower than the
// passage deserves, and the fact sheet would show the same passage twice. Grouping first lets
// fusion vote for the group and cite it once, through its strongest member.
//
// Membership is transitive: if a is the same source as b and b as c, all three form one group,
// even when a and c share nothing directly.
package dedupe

import (
	"cmp"
	"crypto/sha256"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/uuid"

	"github.com/ragd/ragd/fold"
)

// Reasons a group gives for merging its members.
const (
	// ReasonSameKey: the members are the same passage by Key, usually one chunk reached twice.
	ReasonSameKey = "same-key"
	// ReasonSameText: the members have the same normalized text, possibly in different documents.
	ReasonSameText = "same-text"
	// ReasonOverlap: the members' character or page ranges in one document version overlap.
	ReasonOverlap = "overlap"
	// ReasonAdjacent: the members are neighbouring chunks (ordinals one apart) of one document
	// version whose ranges do not overlap.
	ReasonAdjacent = "adjacent"
)

// Item is one retrieved chunk, with what dedupe needs to know about it.
type Item struct {
	ChunkID int64
	DocID   uuid.UUID
	Version int
	Ordinal int // position of the chunk in its document version, from 0
	// PageStart and PageEnd are 1-based and inclusive; both 0 when the document has no pages.
	PageStart, PageEnd int
	// CharStart and CharEnd are code point offsets into the version's text, end exclusive.
	CharStart, CharEnd int
	Text               string
	// Strength orders members within a group and groups among themselves: higher is stronger
	// (the caller passes, for example, the best rank-based vote). Ties go to the lower ChunkID.
	Strength float64
}

// Group is a set of items that are the same source.
type Group struct {
	// Keep is the chunk id of the strongest member: the one whose text represents the group.
	Keep int64
	// Members holds every member's chunk id once: Keep first, then by strength descending.
	Members []int64
	// PageStart and PageEnd span the pages of the members in Keep's document version (min start,
	// max end); 0, 0 when that version has no pages.
	PageStart, PageEnd int
	// CharStart and CharEnd span the character ranges of the members in Keep's document version.
	// Members of other documents (text twins) are left out: their offsets count in another text.
	CharStart, CharEnd int
	// Reasons names the rules that joined members, sorted and each once. A rule that only
	// confirms what an earlier rule joined is not named: rules count in the order same-key,
	// same-text, overlap, adjacent, so a chunk reached twice says only "same-key".
	// It is nil for a group of one chunk seen once.
	Reasons []string
}

// Key returns the canonical key of the passage an item covers: document id, version and location,
// where the location is the page range for paged documents ("p3-4", or "p3" for one page) and
// the chunk ordinal otherwise ("c7"). Two items with the same key are the same passage.
func Key(it Item) string {
	loc := "c" + strconv.Itoa(it.Ordinal)
	if start, end, ok := pages(it); ok {
		loc = "p" + strconv.Itoa(start)
		if end != start {
			loc += "-" + strconv.Itoa(end)
		}
	}
	return it.DocID.String() + "/v" + strconv.Itoa(it.Version) + "/" + loc
}

// Groups partitions items into groups of the same source. Items join one group when
//
//  1. they have the same Key ("same-key");
//  2. their texts are equal after normalization (lower-cased, runs of white space collapsed,
//     punctuation and space trimmed at both ends), even across documents ("same-text");
//     items whose text normalizes to nothing never match this way;
//  3. they are in the same document and version and their character ranges overlap, or both
//     are paged and their page ranges overlap ("overlap"), or their ordinals are one apart
//     ("adjacent"). Different versions of a document are never joined by this rule.
//
// Items with the same ChunkID are one chunk: the strongest occurrence stands for it and the
// group says "same-key". They are assumed to carry the same chunk's fields.
//
// Groups come strongest first by their Keep's strength, ties by lower Keep. The result does not
// depend on the order of items.
func Groups(items []Item) []Group {
	items, repeated := uniqueChunks(items)
	if len(items) == 0 {
		return nil
	}
	// From here on items are in canonical order (strongest first), which makes every later
	// "first" mean "strongest" and keeps the output independent of the input order.
	slices.SortFunc(items, stronger)

	sets := newUnionFind(len(items))
	reasons := make([]uint8, len(items)) // bit set of reasons, kept at each set's root
	for i, it := range items {
		if repeated[it.ChunkID] {
			reasons[i] |= 1 << sameKey
		}
	}
	join := func(a, b int, r reason) {
		if ra, rb, joined := sets.union(a, b); joined {
			reasons[ra] |= reasons[rb] | 1<<r
		}
	}

	joinEqual(items, func(it Item) (string, bool) { return Key(it), true }, sameKey, join)
	joinEqual(items, textHashes(), sameText, join)
	for r := overlap; r <= adjacent; r++ {
		for i := range items {
			for j := i + 1; j < len(items); j++ {
				if related(items[i], items[j]) == r {
					join(i, j, r)
				}
			}
		}
	}

	return collect(items, sets, reasons)
}

// reason is a rule of Groups, in the order the rules apply.
type reason uint8

const (
	none reason = iota
	sameKey
	sameText
	overlap
	adjacent
)

var reasonNames = [...]string{
	sameKey:  ReasonSameKey,
	sameText: ReasonSameText,
	overlap:  ReasonOverlap,
	adjacent: ReasonAdjacent,
}

// uniqueChunks returns a copy of items with one item per ChunkID, the strongest, and the ids
// that occurred more than once. The copy keeps Groups from reordering the caller's slice.
func uniqueChunks(items []Item) ([]Item, map[int64]bool) {
	out := make([]Item, 0, len(items))
	at := make(map[int64]int, len(items))
	var repeated map[int64]bool
	for _, it := range items {
		i, seen := at[it.ChunkID]
		if !seen {
			at[it.ChunkID] = len(out)
			out = append(out, it)
			continue
		}
		if repeated == nil {
			repeated = map[int64]bool{}
		}
		repeated[it.ChunkID] = true
		if it.Strength > out[i].Strength {
			out[i] = it
		}
	}
	return out, repeated
}

// stronger orders items by strength descending, then by chunk id.
func stronger(a, b Item) int {
	if c := cmp.Compare(b.Strength, a.Strength); c != 0 {
		return c
	}
	return cmp.Compare(a.ChunkID, b.ChunkID)
}

// joinEqual joins every item to the first earlier item with the same key, for the keys key
// reports as usable.
func joinEqual[K comparable](items []Item, key func(Item) (K, bool), r reason, join func(a, b int, r reason)) {
	first := make(map[K]int, len(items))
	for i, it := range items {
		k, ok := key(it)
		if !ok {
			continue
		}
		if j, seen := first[k]; seen {
			join(j, i, r)
		} else {
			first[k] = i
		}
	}
}

// related says which part of rule 3 relates a and b, or none. Overlap wins over adjacency so
// that a group of overlapping windows says "overlap" even though their ordinals are also
// neighbours.
func related(a, b Item) reason {
	if a.DocID != b.DocID || a.Version != b.Version {
		return none
	}
	if a.CharStart < b.CharEnd && b.CharStart < a.CharEnd {
		return overlap
	}
	as, ae, aPaged := pages(a)
	bs, be, bPaged := pages(b)
	if aPaged && bPaged && as <= be && bs <= ae {
		return overlap
	}
	if a.Ordinal-b.Ordinal == 1 || b.Ordinal-a.Ordinal == 1 {
		return adjacent
	}
	return none
}

// pages returns an item's page range with a missing or inverted end read as the start page, and
// whether the item is paged at all.
func pages(it Item) (start, end int, ok bool) {
	if it.PageStart <= 0 {
		return 0, 0, false
	}
	return it.PageStart, max(it.PageEnd, it.PageStart), true
}

// textHashes returns a function giving, item after item, the hash of its normalized text; ok is
// false when nothing is left to compare. A hash instead of the text itself keeps the map small;
// SHA-256 so that a collision can never merge two different passages. The normalized text is
// hashed at once, so one buffer serves every item.
func textHashes() func(Item) ([sha256.Size]byte, bool) {
	var norm []byte
	return func(it Item) (sum [sha256.Size]byte, ok bool) {
		norm = appendNormal(norm[:0], it.Text)
		if len(norm) == 0 {
			return sum, false
		}
		return sha256.Sum256(norm), true
	}
}

// normalize lower-cases s, collapses each run of white space to one space and trims white space
// and punctuation at both ends, so that re-published copies of a passage compare equal whatever
// their line wrapping, capitalization or final full stop.
func normalize(s string) string { return string(appendNormal(nil, s)) }

// appendNormal appends normalize(s) to b.
func appendNormal(b []byte, s string) []byte {
	return fold.AppendWords(b, strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }))
}

// collect turns the sets into groups. A set's root is its lowest index, which in canonical
// order is its strongest member: its Keep. Walking items in that order makes groups come out
// in Keep order and members in strength order.
func collect(items []Item, sets unionFind, reasons []uint8) []Group {
	var groups []Group
	byRoot := make(map[int]int, len(items)) // root -> index in groups
	for i, it := range items {
		root := sets.find(i)
		if root == i {
			byRoot[i] = len(groups)
			start, end, _ := pages(it)
			groups = append(groups, Group{
				Keep:      it.ChunkID,
				PageStart: start, PageEnd: end,
				CharStart: it.CharStart, CharEnd: it.CharEnd,
				Reasons: reasonList(reasons[i]),
			})
		} else {
			widen(&groups[byRoot[root]], it, items[root])
		}
		g := &groups[byRoot[root]]
		g.Members = append(g.Members, it.ChunkID)
	}
	return groups
}

// widen extends g's page and character spans by it when it is in the same document version as
// keep; offsets in other documents say nothing about keep's text.
func widen(g *Group, it, keep Item) {
	if it.DocID != keep.DocID || it.Version != keep.Version {
		return
	}
	if start, end, ok := pages(it); ok {
		if g.PageStart == 0 {
			g.PageStart, g.PageEnd = start, end
		} else {
			g.PageStart, g.PageEnd = min(g.PageStart, start), max(g.PageEnd, end)
		}
	}
	g.CharStart, g.CharEnd = min(g.CharStart, it.CharStart), max(g.CharEnd, it.CharEnd)
}

// reasonList names the reasons in a bit set, sorted.
func reasonList(bits uint8) []string {
	var out []string
	for r := sameKey; r <= adjacent; r++ {
		if bits&(1<<r) != 0 {
			out = append(out, reasonNames[r])
		}
	}
	slices.Sort(out)
	return out
}

// unionFind is a disjoint-set forest over indexes 0..n-1.
type unionFind []int

func newUnionFind(n int) unionFind {
	uf := make(unionFind, n)
	for i := range uf {
		uf[i] = i
	}
	return uf
}

// find returns the root of i's set, halving the path on the way.
func (uf unionFind) find(i int) int {
	for uf[i] != i {
		uf[i] = uf[uf[i]]
		i = uf[i]
	}
	return i
}

// union joins the sets of a and b. It returns the surviving root, the absorbed root, and false
// when a and b were already in one set. The lower index survives, so a set's root is its
// strongest member in canonical order.
func (uf unionFind) union(a, b int) (root, absorbed int, joined bool) {
	ra, rb := uf.find(a), uf.find(b)
	if ra == rb {
		return ra, rb, false
	}
	if rb < ra {
		ra, rb = rb, ra
	}
	uf[rb] = ra
	return ra, rb, true
}
