package text

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxQuotedValue bounds a user's value echoed in a message: a 1 MiB value in a job file, -D or a
// Flink configuration gives a one-line error, not a 1 MiB one (TestQuoteIsBounded).
const MaxQuotedValue = 100

// Cut returns the longest prefix of s of at most n bytes that does not split a character: a value
// cut for a message stays valid UTF-8 (TestCutKeepsCharactersWhole). Callers add their own mark
// ("...", "... (N bytes)") when len(s) > n.
func Cut(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Quote quotes a value the user gave (job file, -D, Flink configuration, environment, flag) for a
// message: Go-quoted, so control characters and NUL bytes show as escapes, and cut to its first
// MaxQuotedValue bytes at a character boundary, with the full length said.
func Quote(s string) string {
	if len(s) <= MaxQuotedValue {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(Cut(s, MaxQuotedValue)), len(s))
}

// BoundArgs returns the arguments of a message with every long string (and every other value whose
// text is long) replaced by one that prints a bounded prefix: %q as Quote does (MaxQuotedValue bytes),
// %s and %v the first maxUnquoted bytes followed by "... (N bytes)" (our own texts, lists of valid
// keys, stay whole below that), with control characters as escapes. Errors are kept: they bound their own values. The message builders of
// the job file and the Flink configuration pass their arguments through it, so no format string can
// echo a 1 MiB value (TestBoundArgs).
func BoundArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a
		switch v := a.(type) {
		case error, int, int32, int64, uint, uint32, uint64, float64, bool:
		case string:
			if len(v) > MaxQuotedValue || hasControl(v) {
				out[i] = bounded(v)
			}
		default:
			if s := fmt.Sprint(v); len(s) > MaxQuotedValue || hasControl(s) {
				out[i] = bounded(s)
			}
		}
	}
	return out
}

// maxUnquoted bounds a value printed with %s or %v by BoundArgs.
const maxUnquoted = 1024

// bounded is a long value in a message (BoundArgs).
type bounded string

func (b bounded) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		io.WriteString(f, Quote(string(b)))
		return
	}
	s := string(b)
	if len(s) <= maxUnquoted {
		io.WriteString(f, escaped(s))
		return
	}
	fmt.Fprintf(f, "%s... (%d bytes)", escaped(Cut(s, maxUnquoted)), len(s))
}

// hasControl says whether s holds a byte a terminal would act on: a control character other than
// newline and tab (an escape sequence starts with ESC), DEL, or a C1 control.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			return true
		}
	}
	return false
}

// escaped is s with its control characters written as Go escapes (\x1b, \a), the rest as it is: a
// value printed with %s keeps its look but cannot drive the terminal (TestBoundArgsEscapesControls).
func escaped(s string) string {
	if !hasControl(s) {
		return s
	}
	q := strconv.Quote(s)
	return strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
}

// MaxMessage bounds a whole error message printed to a terminal: however many values a message
// echoes, it stays a screenful (TestMessageIsInertAndBounded).
const MaxMessage = 8 << 10

// Message is the last guard before an error message reaches a terminal: control characters other
// than newline and tab written as escapes (\x1b), and the whole cut to MaxMessage bytes with its
// length said. The values in a message are bounded where they are put in (Quote, BoundArgs); this
// catches what a producer missed (issue 33 §2).
func Message(s string) string {
	if len(s) > MaxMessage {
		s = fmt.Sprintf("%s... (message of %d bytes cut)", Cut(s, MaxMessage), len(s))
	}
	return escaped(s)
}
