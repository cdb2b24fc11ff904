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

// EditDistance is the Levenshtein distance of a and b, in characters.
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
