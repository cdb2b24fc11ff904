package jobfile

import (
	"fmt"
	"strings"

	"github.com/yarn-am/yarn-am/internal/text"
)

// JobError lists every problem found in a job file, so the user fixes them in one pass.
type JobError struct {
	Path     string
	Problems []string
}

func (e *JobError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("job file %s: %s", e.Path, e.Problems[0])
	}
	// At most text.MaxListed of them: a file of thousands of unknown keys gives a message of a screen,
	// ending "and K more", not of megabytes (TestJobErrorListIsBounded).
	return fmt.Sprintf("job file %s has %d problems:", e.Path, len(e.Problems)) +
		text.Bullets(e.Problems, " (fix these and run check again)")
}

// SyntaxError is a job file that is not TOML at all. It is reported alone: nothing else in the file
// can be judged.
type SyntaxError struct {
	Path string
	Line int
	// Key is the key written on Line, dotted ("taskexecutor.instances"), when one is: the TOML
	// library's message names only the value.
	Key string
	Msg string
}

func (e *SyntaxError) Error() string {
	// The library's message may quote a piece of the file: each long word of it is cut (the words
	// around it say what is wrong), and nothing in it reaches the terminal as a control byte
	// (TestSyntaxErrorIsBoundedAndInert).
	words := strings.Split(text.Sanitize(e.Msg), " ")
	for i, w := range words {
		if len(w) > text.MaxQuotedValue {
			words[i] = fmt.Sprintf("%s... (%d bytes)", text.Cut(w, text.MaxQuotedValue), len(w))
		}
	}
	msg := strings.Join(words, " ")
	switch {
	case e.Line > 0 && e.Key != "":
		return fmt.Sprintf("job file %s is not valid TOML: line %d: %s: %s%s", e.Path, e.Line, e.Key, msg, rangeHint(e.Msg))
	case e.Line > 0:
		return fmt.Sprintf("job file %s is not valid TOML: line %d: %s", e.Path, e.Line, msg)
	}
	return fmt.Sprintf("job file %s is not valid TOML: %s", e.Path, msg)
}

// rangeHint says what the TOML library would have accepted for a number it found out of range.
func rangeHint(msg string) string {
	switch {
	case strings.HasSuffix(msg, "out of range for int64"):
		return " (a whole number is from -9223372036854775808 to 9223372036854775807)"
	case strings.HasSuffix(msg, "out of range for float64"):
		return " (a number is at most about 1.8e308)"
	case strings.HasPrefix(msg, "invalid datetime"):
		return " (a date is YYYY-MM-DD, a time HH:MM:SS, both RFC 3339)"
	}
	return ""
}

// sprintf and errorf format a message about the job file with every value bounded
// (text.BoundArgs): a 1 MiB value gives a short message.
func sprintf(format string, args ...any) string {
	return fmt.Sprintf(format, text.BoundArgs(args)...)
}

func errorf(format string, args ...any) error {
	return fmt.Errorf(format, text.BoundArgs(args)...)
}
