package resources

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/yarn-am/yarn-am/internal/proc"
	"github.com/yarn-am/yarn-am/internal/startfail"
	"github.com/yarn-am/yarn-am/internal/text"
)

// DefaultDiscoveryTimeout bounds a discovery program when no timeout is configured.
const DefaultDiscoveryTimeout = 60 * time.Second

// maxStderr is how much of a discovery program's stderr goes into an error (the end is kept: that is
// where the reason usually is).
const maxStderr = 4096

// MaxDiscoveryOutput bounds what is read from a discovery program, on stdout and on stderr each: the
// contract is one line of ids, and a program that prints more is broken (a 200 MB line once cost ~930 MB
// of memory). A program that exceeds it is killed (with its process group) and discovery fails.
const MaxDiscoveryOutput = 64 << 10

// maxQuoted bounds a program's output quoted in an error message.
const maxQuoted = 200

// IDRule says which ids a driver accepts from a discovery program: every id on the first line of stdout
// must satisfy Valid and no id may appear twice, else discovery fails with the output quoted and Describe
// (what valid output looks like) in the error. Canon, when set, gives an id's canonical form: ids are
// compared (and returned) in it, so "00" and "0" are one GPU index (TestGPUIndexesCompareAsNumbers).
type IDRule struct {
	Valid    func(id string) bool
	Describe string
	Canon    func(id string) string
}

// NumericCanon is the Canon of rules whose ids are non-negative decimal numbers (GPU indexes): leading
// zeros dropped, so "007" is "7" and "00" is "0". Anything else is returned as it is.
func NumericCanon(id string) string {
	if id == "" || strings.Trim(id, "0123456789") != "" {
		return id
	}
	if t := strings.TrimLeft(id, "0"); t != "" {
		return t
	}
	return "0"
}

// execIDRe is the id syntax of the exec driver: what fits an environment variable, a file name and a
// device path without quoting.
var execIDRe = regexp.MustCompile(`^[A-Za-z0-9_.:/-]{1,256}$`)

// ExecIDRule is the id syntax of the exec driver (and the default of RunDiscovery): 1 to 256 characters
// of [A-Za-z0-9_.:/-], distinct.
var ExecIDRule = IDRule{
	Valid:    execIDRe.MatchString,
	Describe: "distinct ids of 1 to 256 characters from A-Z a-z 0-9 _ . : / -, comma-separated on the first line, e.g. 0,1 or fpga0,fpga1",
}

// DiscoveryError says why a discovery program did not deliver: it carries the program's stderr.
type DiscoveryError struct {
	Path   string
	Args   []string
	Amount int
	Reason string // "exited with status 3", "timed out after 1m0s", "printed 1 id(s), 2 needed"
	Stderr string // the program's stderr (trimmed, control characters removed; the last 4 KiB at most)
}

// Error names the program, the reason and the stderr.
func (e *DiscoveryError) Error() string {
	argv := append([]string{e.Path, strconv.Itoa(e.Amount)}, e.Args...)
	s := fmt.Sprintf("discovery program %s %s", strings.Join(quoteAll(argv), " "), e.Reason)
	if e.Stderr != "" {
		s += "; stderr: " + e.Stderr
	} else {
		s += "; stderr was empty"
	}
	return s
}

// RunDiscovery is RunDiscoveryWith with ExecIDRule.
func RunDiscovery(ctx context.Context, path string, amount int, args string, timeout time.Duration) ([]string, error) {
	return RunDiscoveryWith(ctx, path, amount, args, timeout, ExecIDRule)
}

// RunDiscoveryWith is RunDiscoveryResult returning only the ids.
func RunDiscoveryWith(ctx context.Context, path string, amount int, args string, timeout time.Duration, rule IDRule) ([]string, error) {
	res, err := RunDiscoveryResult(ctx, path, amount, args, timeout, rule)
	if err != nil {
		return nil, err
	}
	return res.IDs, nil
}

// DiscoveryResult is what a successful discovery program delivered.
type DiscoveryResult struct {
	// IDs are the first amount ids of the first stdout line (canonical per the rule's Canon).
	IDs []string
	// Printed is every id of the first line (canonical), amount or more.
	Printed []string
	// More holds the stdout lines after the first (at most maxMoreLines), for drivers that define any
	// (the GPU driver's "uuids=" line).
	More []string
	// Notes are what the program said on stderr (non-empty lines, control characters removed) and what
	// the runner had to do about it, such as killing a child that held its output: warnings to log.
	Notes []string
}

// maxMoreLines bounds DiscoveryResult.More.
const maxMoreLines = 16

// RunDiscoveryResult runs `path amount args...` per the discovery contract (## Contracts in
// docs/design.md). args is split as a shell would (SplitArgs); empty args add no argument. The first
// line of stdout holds comma-separated ids, blanks ignored; every id must satisfy rule (CheckIDs).
// Fewer ids than amount, an id rule broken, more than MaxDiscoveryOutput bytes on stdout or stderr, a
// non-zero exit or running past timeout (<= 0 means DefaultDiscoveryTimeout) is a *DiscoveryError
// carrying the program's stderr. The program runs in its own process group, which is killed when the
// program is done (a background child it left behind included), on timeout, on too much output, or
// when ctx ends. A child that still holds the program's stdout or stderr after that (one that left the
// group with setsid) is found through /proc and killed with its process group and session; what the
// program printed before it exited 0 is kept, and the result's Notes say what was killed. A path
// without '/' that does not exist in the working directory is looked up in PATH.
func RunDiscoveryResult(ctx context.Context, path string, amount int, args string, timeout time.Duration, rule IDRule) (*DiscoveryResult, error) {
	argv, err := SplitArgs(args)
	if err != nil {
		return nil, err
	}
	if amount <= 0 {
		return nil, fmt.Errorf("resources: discovery amount %d: must be at least 1", amount)
	}
	if timeout <= 0 {
		timeout = DefaultDiscoveryTimeout
	}
	prog := path
	if !strings.Contains(path, "/") {
		if _, err := os.Stat(path); err == nil {
			prog = "./" + path
		}
	}
	if strings.Contains(prog, "/") {
		if _, err := os.Stat(prog); err != nil {
			abs, _ := filepath.Abs(prog)
			return nil, fmt.Errorf("resources: discovery program %q does not exist (resolved to %s): %w", path, abs, err)
		}
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command(prog, append([]string{strconv.Itoa(amount)}, argv...)...)
	overflow := make(chan string, 2)
	stdout := &capBuffer{max: MaxDiscoveryOutput, name: "stdout", overflow: overflow}
	stderr := &capBuffer{max: MaxDiscoveryOutput, name: "stderr", overflow: overflow}
	// internal/proc's group runner: Wait returns when the program exits, whoever else holds its
	// output, and whatever it left running is killed.
	run, err := proc.RunGroup(ctx, cmd, stdout, stderr, overflow)
	if err != nil {
		// A script whose interpreter is missing fails with "no such file or directory" although the
		// script is there: say which part is missing (TestDiscoveryStartFailureSaysWhy).
		if se := (*startfail.Error)(nil); errors.As(startfail.Explain(cmd.Path, err), &se) {
			return nil, fmt.Errorf("resources: cannot start discovery program %s", se)
		}
		return nil, fmt.Errorf("resources: starting discovery program %s: %s", text.Quote(path), text.Sanitize(text.Cut(err.Error(), 1024)))
	}
	werr, overflowed := run.Err, run.Stopped
	var notes []string
	for _, h := range run.Holders {
		notes = append(notes, fmt.Sprintf("the discovery program had exited, but %s still held its output; killed it: a discovery program must not leave children behind (docs/gpus.md#discovery-script-contract)", h))
	}
	if run.Held {
		notes = append(notes, "the discovery program's output was still held open by a process that could not be killed; what it printed before that is used")
	}

	derr := &DiscoveryError{Path: path, Args: argv, Amount: amount, Stderr: tail(stderr.String())}
	switch {
	case overflowed != "":
		derr.Reason = fmt.Sprintf("printed more than %d KiB on %s and was killed (the contract is one line of comma-separated ids on stdout)", MaxDiscoveryOutput>>10, overflowed)
		return nil, derr
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		derr.Reason = fmt.Sprintf("timed out after %s", timeout)
		return nil, derr
	case ctx.Err() != nil:
		derr.Reason = "was cancelled: " + ctx.Err().Error()
		return nil, derr
	case werr != nil:
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			derr.Reason = "failed: " + ee.ProcessState.String()
		} else {
			derr.Reason = "failed: " + werr.Error()
		}
		return nil, derr
	}
	lines := strings.SplitN(stdout.String(), "\n", maxMoreLines+2)
	line := strings.TrimRight(lines[0], "\r")
	ids := ParseDiscoveryOutput(line)
	if msg := CheckIDs(ids, rule); msg != "" {
		derr.Reason = fmt.Sprintf("printed %s: %s; valid output: %s%s", QuoteOutput(line), msg, rule.Describe, CRNote(lines[0]))
		return nil, derr
	}
	if len(ids) < amount {
		derr.Reason = fmt.Sprintf("printed %d id(s) (%s) but %d are needed%s", len(ids), QuoteOutput(line), amount, CRNote(lines[0]))
		return nil, derr
	}
	if rule.Canon != nil {
		for i, id := range ids {
			ids[i] = rule.Canon(id)
		}
	}
	res := &DiscoveryResult{IDs: ids[:amount:amount], Printed: ids}
	for _, l := range lines[1:min(len(lines), maxMoreLines+1)] {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			res.More = append(res.More, l)
		}
	}
	for _, l := range strings.Split(tail(stderr.String()), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			res.Notes = append(res.Notes, l)
		}
	}
	res.Notes = append(res.Notes, notes...)
	return res, nil
}

// CheckIDs returns "" when every id satisfies rule.Valid and none appears twice (compared in rule.Canon's
// form when set), else what is wrong with the first id that does not (quoted with QuoteOutput).
func CheckIDs(ids []string, rule IDRule) string {
	seen := make(map[string]string, len(ids))
	for _, id := range ids {
		if rule.Valid != nil && !rule.Valid(id) {
			return fmt.Sprintf("%s is not a valid id", QuoteOutput(id))
		}
		key := id
		if rule.Canon != nil {
			key = rule.Canon(id)
		}
		if first, dup := seen[key]; dup {
			if first != id {
				return fmt.Sprintf("%s and %s are the same id", QuoteOutput(first), QuoteOutput(id))
			}
			return fmt.Sprintf("%s appears twice", QuoteOutput(id))
		}
		seen[key] = id
	}
	return ""
}

// CRNote says in words that a program's output s holds a carriage return, for the end of a message
// about it: "" when it holds none. A \r is invisible on a terminal, and an id or a line that looks
// right but is refused is, more often than not, a script written on Windows or a tool run through
// one (TestDiscoveryOutputSaysCarriageReturn).
func CRNote(s string) string {
	if !strings.Contains(s, "\r") {
		return ""
	}
	return "; the output holds a carriage return (\\r): print lines that end in \\n alone, not Windows line ends (\\r\\n) or a lone \\r"
}

// QuoteOutput quotes a program's output for an error message: control characters removed but for a
// carriage return inside it, which stays as \r (CRNote says it in words), at most 200 bytes (cut at a
// character boundary, with the full length said).
func QuoteOutput(s string) string {
	clean := strings.Map(func(r rune) rune {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\r') {
			return -1
		}
		return r
	}, strings.TrimRight(s, "\r\n"))
	if len(clean) <= maxQuoted {
		return strconv.Quote(clean)
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(text.Cut(clean, maxQuoted)), len(s))
}

// stripControl removes control characters (and invalid UTF-8) from s; keepNewlines keeps \n and \t.
func stripControl(s string, keepNewlines bool) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || (unicode.IsControl(r) && !(keepNewlines && (r == '\n' || r == '\t'))) {
			return -1
		}
		return r
	}, s)
}

// capBuffer keeps at most max bytes; the first write past max reports its name on overflow (once) and
// the rest is dropped, so a runaway program costs at most max bytes of memory.
type capBuffer struct {
	max      int
	name     string
	overflow chan<- string
	buf      bytes.Buffer
	full     bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	if c.full {
		return len(p), nil
	}
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:room])
		c.full = true
		c.overflow <- c.name
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

func (c *capBuffer) String() string { return c.buf.String() }

// ParseDiscoveryOutput returns the ids on the first line of a discovery program's stdout:
// comma-separated, surrounding spaces trimmed, blank items ignored.
func ParseDiscoveryOutput(stdout string) []string {
	var ids []string
	for _, f := range strings.Split(firstLine(stdout), ",") {
		if f = strings.TrimSpace(f); f != "" {
			ids = append(ids, f)
		}
	}
	return ids
}

func firstLine(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	if sc.Scan() {
		return strings.TrimRight(sc.Text(), "\r")
	}
	return ""
}

func tail(s string) string {
	s = strings.TrimSpace(stripControl(s, true))
	if len(s) > maxStderr {
		cut := len(s) - maxStderr
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		s = "..." + s[cut:]
	}
	return s
}

// SplitArgs splits s into arguments as a POSIX shell would, without expansions: whitespace separates,
// single quotes keep everything literally, double quotes keep whitespace and honour \" \\ \$ \`, a
// backslash outside quotes escapes the next character. "" gives no arguments; an unterminated quote
// is an error.
func SplitArgs(s string) ([]string, error) {
	var (
		args  []string
		cur   strings.Builder
		inArg bool
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\'':
			inArg = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, fmt.Errorf("resources: arguments %q: unterminated single quote", s)
			}
			cur.WriteString(string(rs[i+1 : j]))
			i = j
		case c == '"':
			inArg = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`\n", rs[j+1]) {
					j++
					if rs[j] != '\n' {
						cur.WriteRune(rs[j])
					}
					continue
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, fmt.Errorf("resources: arguments %q: unterminated double quote", s)
			}
			i = j
		case c == '\\':
			if i+1 == len(rs) {
				return nil, fmt.Errorf("resources: arguments %q: ends with a lone backslash", s)
			}
			i++
			if rs[i] != '\n' {
				cur.WriteRune(rs[i])
				inArg = true
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

func quoteAll(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			out[i] = a
		}
	}
	return out
}
