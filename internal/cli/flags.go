package cli

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/internal/text"
)

// Timeout is --timeout: a Go duration with a unit, positive.
type Timeout time.Duration

func (t *Timeout) String() string { return time.Duration(*t).String() }

func (t *Timeout) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return fmt.Errorf("needs a unit, e.g. %ss or %sm", s, s)
		}
		return errors.New("not a duration; write a number with a unit, e.g. 5s, 90s, 2m")
	}
	if d <= 0 {
		return errors.New("must be positive, e.g. 5s or 2m")
	}
	*t = Timeout(d)
	return nil
}

// RegisterTimeout adds --timeout to fs with the default def.
func RegisterTimeout(fs *flag.FlagSet, def time.Duration) *Timeout {
	t := Timeout(def)
	fs.Var(&t, "timeout", "overall timeout")
	return &t
}

// Defines collects -D key=value.
type Defines []string

func (d *Defines) String() string { return strings.Join(*d, " ") }

func (d *Defines) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%s is not key=value", text.Quote(v))
	}
	if strings.ContainsAny(v, "\n\r") {
		// Read as TOML, the value would keep its first line and drop the rest without a word.
		return fmt.Errorf("the value of %s has a line break (a newline or carriage return): %s; a -D value is one line", text.Quote(strings.TrimSpace(k)), text.Quote(val))
	}
	*d = append(*d, v)
	return nil
}

// SplitJoinedDefines turns Flink-style -Dkey=value into -D key=value (up to a "--"), so both forms work.
func SplitJoinedDefines(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if strings.HasPrefix(a, "-D") && len(a) > 2 && strings.Contains(a, "=") {
			out = append(out, "-D", a[2:])
			continue
		}
		out = append(out, a)
	}
	return out
}

// Path sets *p to a flag's value, refusing an empty one: --flink-conf "" (an unset variable in a
// script) would otherwise mean "no file" without a word.
func Path(p *string) func(string) error { return NonEmpty(p, "the path of a file") }

// NonEmpty sets *p from a flag that may not be given empty: an empty value would silently mean
// "none" or "all". want says what to give ("the path of a file").
func NonEmpty(p *string, want string) func(string) error {
	return func(v string) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("empty; give " + want + ", or leave the flag out")
		}
		*p = v
		return nil
	}
}

// CheckDir refuses a directory flag (stop's --savepoint, savepoint's --dir) that no framework can
// write to: it is a directory as a URI (file:///tmp/savepoints, hdfs:///savepoints) or an absolute
// path.
func CheckDir(flag, v string) error {
	if v == "" {
		return nil
	}
	shown := Short(v)
	switch {
	case len(v) > 4096:
		return fmt.Errorf("%s %q: longer than 4096 bytes", flag, shown)
	case strings.TrimSpace(v) != v || strings.ContainsAny(v, "\n\r\x00"):
		return fmt.Errorf("%s %q: a space at an end, a line break or NUL; want a directory as a URI (file:///tmp/savepoints) or an absolute path", flag, shown)
	case strings.HasPrefix(v, "/"):
		return nil
	}
	if scheme, rest, ok := strings.Cut(v, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, "/:") && strings.Trim(rest, "/") != "" {
		return nil
	}
	return fmt.Errorf("%s %q: not a URI or an absolute path; want a directory the JobManager can write, e.g. file:///tmp/savepoints", flag, shown)
}

// Short bounds an argument shown in a message.
func Short(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
