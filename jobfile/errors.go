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
	var b strings.Builder
	fmt.Fprintf(&b, "job file %s has %d problems:", e.Path, len(e.Problems))
	for i, p := range e.Problems {
		if i == MaxProblemsListed {
			fmt.Fprintf(&b, "\n  - and %d more (fix these and run check again)", len(e.Problems)-i)
			break
		}
		b.WriteString("\n  - ")
		b.WriteString(p)
	}
	return b.String()
}

// MaxProblemsListed bounds the problems one message lists: a file of thousands of unknown keys gives a
// message of a screen, ending "and K more", not of megabytes (TestJobErrorListIsBounded).
const MaxProblemsListed = 20

// SyntaxError is a job file that is not TOML at all. It is reported alone: nothing else in the file
// can be judged.
type SyntaxError struct {
	Path string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("job file %s is not valid TOML: line %d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("job file %s is not valid TOML: %s", e.Path, e.Msg)
}

// sprintf and errorf format a message about the job file with every value bounded
// (text.BoundArgs): a 1 MiB value gives a short message.
func sprintf(format string, args ...any) string {
	return fmt.Sprintf(format, text.BoundArgs(args)...)
}

func errorf(format string, args ...any) error {
	return fmt.Errorf(format, text.BoundArgs(args)...)
}
