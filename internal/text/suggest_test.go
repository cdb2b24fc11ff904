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
