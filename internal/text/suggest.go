package text

import (
	"strings"
	"unicode/utf8"
)

// DidYouMean returns ` (did you mean "x"?)` for the candidate closest to s (case ignored), or "" when
// none is close: within a third of s's length, and at least 2 edits. A candidate whose length alone
// puts it out of reach is not compared: a 100 KiB key costs no more than a short one
// (TestDidYouMeanComparesNoCandidateOutOfReach).
func DidYouMean(s string, candidates []string) string {
	limit := utf8.RuneCountInString(s) / 3
	if limit < 2 {
		limit = 2
	}
	ls, n := strings.ToLower(s), utf8.RuneCountInString(s)
	best, bestD := "", -1
	for _, c := range candidates {
		// The distance is at least the difference of the lengths (in characters).
		if gap := n - utf8.RuneCountInString(c); gap > limit || -gap > limit {
			continue
		}
		d := EditDistance(ls, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > limit {
		return ""
	}
	return ` (did you mean "` + best + `"?)`
}

// Within reports whether a and b are at most max edits apart (Levenshtein, in characters), at a cost
// bounded by the shorter string and max, never by the longer one: strings whose lengths alone differ by
// more than max are not compared, and only the band of max cells either side of the diagonal is
// computed. A user's 1 MiB key asked whether it is a typo of a 20-character one costs a length count, where
// EditDistance would cost 20 million cells (TestWithinOfAHugeKeyAllocatesNothing).
func Within(a, b string, limit int) bool {
	if limit < 0 {
		return false
	}
	na, nb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	if na-nb > limit || nb-na > limit {
		return false
	}
	ra, rb := []rune(a), []rune(b)
	// Row i keeps only the cells j with |i-j| <= limit; a cell outside the band, and any larger value,
	// stands as past (limit+1): whether the end is within the limit is all that is asked.
	past := limit + 1
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = min(j, past)
	}
	for i := 1; i <= len(ra); i++ {
		lo, hi := max(1, i-limit), min(len(rb), i+limit)
		cur[lo-1] = past
		if lo == 1 {
			cur[0] = min(i, past)
		}
		best := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			up := past // prev[j] lies outside row i-1's band
			if j <= i-1+limit {
				up = prev[j]
			}
			cur[j] = min(up+1, cur[j-1]+1, prev[j-1]+cost, past)
			best = min(best, cur[j])
		}
		if best > limit {
			return false // every alignment passes through this row
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)] <= limit
}

// EditDistance is the Levenshtein distance of a and b, in characters. Its cost is the product of the
// lengths: where one of them is a user's value, ask Within instead.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
