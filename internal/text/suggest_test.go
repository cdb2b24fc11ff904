package text

import "testing"

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
