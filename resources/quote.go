package resources

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxQuotedValue bounds a user's value echoed in a message: a 1 MiB value in a job file, -D or a
// Flink configuration gives a one-line error, not a 1 MiB one (TestQuoteIsBounded).
const MaxQuotedValue = 100

// Quote quotes a value the user gave (job file, -D, Flink configuration, environment, flag) for a
// message: Go-quoted, so control characters and NUL bytes show as escapes, and cut to its first
// MaxQuotedValue bytes at a character boundary, with the full length said.
func Quote(s string) string {
	if len(s) <= MaxQuotedValue {
		return strconv.Quote(s)
	}
	cut := MaxQuotedValue
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
