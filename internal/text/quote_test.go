package text

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

func TestCutKeepsCharactersWhole(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"}, // é is 2 bytes: not split
		{"日本", 5, "日"}, // 3-byte characters
		{"日本", 6, "日本"},
		{"x", 0, ""},
		{"x", -1, ""},
	} {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
