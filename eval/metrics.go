package eval

import (
	"math"
	"slices"
)

// NDCG returns nDCG@k of ranked (doc ids, best first) against the graded judgments rel, as
// trec_eval's ndcg_cut computes it, which is what BEIR reports through pytrec_eval:
//
//	DCG@k = sum over ranks i = 0..k-1 of rel_i / log2(i+2)
//
// with linear gain, divided by the DCG@k of the ideal ranking, which orders the positive grades
// of rel from highest to lowest. Grades <= 0 gain nothing. It is 0 when rel has no positive grade
// or k < 1.
func NDCG(ranked []string, rel map[string]int, k int) float64 {
	var grades []int
	for _, g := range rel {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	if len(grades) == 0 || k < 1 {
		return 0
	}
	slices.Sort(grades)
	slices.Reverse(grades)

	var ideal float64
	for i, g := range grades[:min(k, len(grades))] {
		ideal += float64(g) / math.Log2(float64(i+2))
	}
	var dcg float64
	for i, id := range topK(ranked, k) {
		if g := rel[id]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	return dcg / ideal
}

// Recall returns Recall@k of ranked against rel: the share of the relevant docs (grade > 0) that
// appear in the first k. It is 0 when rel has no relevant doc or k < 1.
func Recall(ranked []string, rel map[string]int, k int) float64 {
	relevant := 0
	for _, g := range rel {
		if g > 0 {
			relevant++
		}
	}
	if relevant == 0 || k < 1 {
		return 0
	}
	hits := 0
	for _, id := range topK(ranked, k) {
		if rel[id] > 0 {
			hits++
		}
	}
	return float64(hits) / float64(relevant)
}

// topK returns the first k distinct ids of ranked. Callers should already pass distinct ids;
// dropping repeats here, as if the caller had, keeps a doc from gaining twice, which could push
// nDCG above 1 and recall past the number of relevant docs.
func topK(ranked []string, k int) []string {
	out := make([]string, 0, min(k, len(ranked)))
	seen := make(map[string]bool, cap(out))
	for _, id := range ranked {
		if len(out) == k {
			break
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
