package text

import (
	"fmt"
	"strings"
	"testing"
)

func TestDidYouMean(t *testing.T) {
	cands := []string{"submit", "status", "kill"}
	for in, want := range map[string]string{
		"sbumit": ` (did you mean "submit"?)`,
		"STATUS": ` (did you mean "status"?)`,
		"xyzzy":  "",
	} {
		if got := DidYouMean(in, cands); got != want {
			t.Errorf("DidYouMean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := DidYouMean("x", nil); got != "" {
		t.Errorf("no candidates: %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"gpu", "gpu", 0}, {"gpu", "gpus", 1}, {"kitten", "sitting", 3}, {"é", "e", 1}} {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// A 100 KiB unknown key is compared with no candidate: each is out of reach by its length alone (the
// comparisons, each allocating, made TestBadInputs' hostile rows take seconds under -race). Counted
// in allocations: one lower-cased copy of the key, whatever the number of candidates.
func TestDidYouMeanComparesNoCandidateOutOfReach(t *testing.T) {
	huge := strings.Repeat("d", 100<<10)
	candidates := make([]string, 500)
	for i := range candidates {
		candidates[i] = fmt.Sprintf("taskexecutor.key-%d", i)
	}
	allocs := testing.AllocsPerRun(3, func() { _ = DidYouMean(huge, candidates) })
	if allocs > 2 {
		t.Errorf("%.0f allocations for 500 candidates out of reach: each was compared", allocs)
	}
	if got := DidYouMean("taskexecutor.key-7x", candidates); got != ` (did you mean "taskexecutor.key-7"?)` {
		t.Errorf("a near candidate: %q", got)
	}
}

// Within agrees with EditDistance on every pair and limit of a small alphabet's short strings, band
// edges and early exits included.
func TestWithinAgreesWithEditDistance(t *testing.T) {
	words := []string{"", "a", "b", "ab", "ba", "aab", "abb", "bab", "abab", "baba", "aabb", "bbaa", "abcab", "cabba", "é", "éa", "aé"}
	for _, a := range words {
		for _, b := range words {
			d := EditDistance(a, b)
			for limit := -1; limit <= 6; limit++ {
				if got, want := Within(a, b, limit), d <= limit; got != want {
					t.Errorf("Within(%q, %q, %d) = %v, want %v (distance %d)", a, b, limit, got, want, d)
				}
			}
		}
	}
}

// A 1 MiB key asked whether it is within 2 edits of a short one is refused by its length, before any
// copy or table (counted in allocations: EditDistance's four, one of them 4 MiB, made each of
// TestMessagesAreBounded's huge -D keys cost seconds under -race); two long strings a few edits apart
// cost a band, not a square.
func TestWithinOfAHugeKeyAllocatesNothing(t *testing.T) {
	huge := strings.Repeat("9", 1<<20)
	if allocs := testing.AllocsPerRun(3, func() { _ = Within(huge, "external-resources", 2) }); allocs != 0 {
		t.Errorf("%.0f allocations for a key out of reach by its length", allocs)
	}
	long := huge[:64<<10]
	if !Within(long, long[:len(long)-2]+"xy", 2) || Within(long, "x"+long[:len(long)-3]+"yz", 2) {
		t.Error("two 64 KiB strings: 2 edits apart must be within 2, 3 apart must not")
	}
}
