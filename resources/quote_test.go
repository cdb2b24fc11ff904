package resources

import (
	"fmt"
	"strings"
	"testing"
)

func TestQuoteIsBounded(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"gpu", `"gpu"`},
		{"a\x00b\n", `"a\x00b\n"`},
		{strings.Repeat("x", 1<<20), `"` + strings.Repeat("x", MaxQuotedValue) + `"... (1048576 bytes)`},
		{strings.Repeat("x", MaxQuotedValue-1) + "é" + "y", `"` + strings.Repeat("x", MaxQuotedValue-1) + `"... (102 bytes)`},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%.20q) = %.200s, want %.200s", c.in, got, c.want)
		}
	}
}

func TestBoundArgs(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	got := fmt.Sprintf("%q %s %v %d %v", BoundArgs([]any{long, long, []any{long}, 5, "short"})...)
	if len(got) > 3*maxUnquoted {
		t.Fatalf("message of %d bytes: %.300s", len(got), got)
	}
	for _, w := range []string{`"xxx`, "... (1048576 bytes)", "... (1048578 bytes)", " 5 short"} {
		if !strings.Contains(got, w) {
			t.Errorf("%.400s lacks %q", got, w)
		}
	}
}
