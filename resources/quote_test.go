package resources

import (
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
