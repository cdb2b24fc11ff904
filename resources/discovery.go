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
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultDiscoveryTimeout bounds a discovery program when no timeout is configured.
const DefaultDiscoveryTimeout = 60 * time.Second

// maxStderr is how much of a discovery program's stderr goes into an error (the end is kept: that is
// where the reason usually is).
const maxStderr = 4096

// DiscoveryError says why a discovery program did not deliver: it carries the program's stderr.
type DiscoveryError struct {
	Path   string
	Args   []string
	Amount int
	Reason string // "exited with status 3", "timed out after 1m0s", "printed 1 id(s), 2 needed"
	Stderr string // the program's stderr (trimmed; the last 4 KiB at most)
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

// RunDiscovery runs `path amount args...` per the discovery contract (DESIGN.md §6) and returns the
// first amount ids. args is split as a shell would (SplitArgs); empty args add no argument. The first
// line of stdout holds comma-separated ids, blanks ignored. Fewer ids than amount, a non-zero exit or
// running past timeout (<= 0 means DefaultDiscoveryTimeout) is a *DiscoveryError carrying the
// program's stderr. The program runs in its own process group, which is killed on timeout or when ctx
// ends. A path without '/' that does not exist in the working directory is looked up in PATH.
func RunDiscovery(ctx context.Context, path string, amount int, args string, timeout time.Duration) ([]string, error) {
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
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A grandchild that inherited the pipes must not keep us waiting once the group is killed.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("resources: starting discovery program %q: %w", path, err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case <-done:
		}
	}()
	werr := cmd.Wait()
	close(done)

	derr := &DiscoveryError{Path: path, Args: argv, Amount: amount, Stderr: tail(stderr.String())}
	switch {
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
	ids := ParseDiscoveryOutput(stdout.String())
	if len(ids) < amount {
		derr.Reason = fmt.Sprintf("printed %d id(s) (%q) but %d are needed", len(ids), firstLine(stdout.String()), amount)
		return nil, derr
	}
	return ids[:amount], nil
}

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
	s = strings.TrimSpace(s)
	if len(s) > maxStderr {
		s = "..." + s[len(s)-maxStderr:]
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
