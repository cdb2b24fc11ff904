package text

import (
	"fmt"
	"strings"
	"testing"
)

// TestBulletsAreBounded: a list of any length is MaxListed lines and one "and K more".
func TestBulletsAreBounded(t *testing.T) {
	items := make([]string, 20001)
	for i := range items {
		items[i] = fmt.Sprintf("problem %d", i)
	}
	got := Bullets(items, " (fix these first)")
	if n := strings.Count(got, "\n"); n != MaxListed+1 {
		t.Errorf("%d lines, want %d", n, MaxListed+1)
	}
	if !strings.HasSuffix(got, "\n  - problem 19\n  - and 19981 more (fix these first)") {
		t.Errorf("tail: %q", got[len(got)-80:])
	}
	if got := Bullets(items[:2], " (x)"); got != "\n  - problem 0\n  - problem 1" {
		t.Errorf("a short list: %q", got)
	}
}
