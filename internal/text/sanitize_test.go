package text

import (
	"fmt"
	"strings"
	"testing"
)

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

// TestBoundArgsEscapesControls: a value printed with %s through BoundArgs shows its escape sequences
// as \x1b, not raw, short or long (issue 33 §2).
func TestBoundArgsEscapesControls(t *testing.T) {
	for _, v := range []string{"a\x1b[2J\x07b", "\x1b[2J" + strings.Repeat("x", 5000)} {
		got := fmt.Sprintf("%s|%v", BoundArgs([]any{v, v})...)
		if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `\x1b[2J`) || len(got) > 2*maxUnquoted+100 {
			t.Errorf("%q", got[:min(len(got), 200)])
		}
	}
	if got := fmt.Sprintf("%s", BoundArgs([]any{"plain \"text\"\n"})...); got != "plain \"text\"\n" {
		t.Errorf("plain text changed: %q", got)
	}
}

// TestMessageIsInertAndBounded: the last guard leaves newlines and tabs, escapes the rest, and cuts a
// 100 KB message to MaxMessage.
func TestMessageIsInertAndBounded(t *testing.T) {
	if got := Message("two\nlines\tok"); got != "two\nlines\tok" {
		t.Errorf("%q", got)
	}
	got := Message("a\x1b[2J\x07" + strings.Repeat("m", 100<<10))
	if strings.ContainsAny(got, "\x1b\x07") || len(got) > MaxMessage+100 || !strings.Contains(got, "(message of 102406 bytes cut)") {
		t.Errorf("%d bytes: %q", len(got), got[:100])
	}
}
