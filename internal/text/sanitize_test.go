package text

import "testing"

// TestSanitizeLeavesNoControlByte: the cases container/client's TestSanitize covers in full, here for
// the leaf's own users (the job file's syntax errors, discovery output).
func TestSanitizeLeavesNoControlByte(t *testing.T) {
	for in, want := range map[string]string{
		"plain, ünïcode":           "plain, ünïcode",
		"\x1b[2Jcleared\x07":       "cleared",
		"a\rb\x00c\n":              "abc\n",
		"\x1b]52;c;ZWNobw==\x07ok": "ok",
		"bad \xff byte":            "bad \uFFFD byte",
	} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}
