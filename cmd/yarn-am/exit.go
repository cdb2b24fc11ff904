package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// exitCodesUsage is the exit-code line every client command's usage ends with (the full table is in
// docs/running.md; the codes are contract.Exit*).
const exitCodesUsage = `Exit codes: 0 ok; 1 the application failed or was killed; 2 usage (flags, arguments); 3 invalid
input (job file, keys, flink-conf, environment, a local file such as --keytab); 4 cluster unreachable or
timed out; 5 does not fit or rejected by the cluster; 130 interrupted.`

// defaultTimeout is the --timeout of every client command: long enough for submit to stage the binary
// and the job's files, short enough that a dead cluster is reported within minutes.
const defaultTimeout = 2 * time.Minute

// timeoutFlag is --timeout: a Go duration with a unit, positive.
type timeoutFlag time.Duration

func (t *timeoutFlag) String() string { return time.Duration(*t).String() }

func (t *timeoutFlag) Set(s string) error {
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
	*t = timeoutFlag(d)
	return nil
}

func registerTimeout(fs *flag.FlagSet) *timeoutFlag {
	t := timeoutFlag(defaultTimeout)
	fs.Var(&t, "timeout", "overall timeout")
	return &t
}

var (
	reUndefined = regexp.MustCompile(`(?s)^flag provided but not defined: -+(.*)$`)
	reInvalid   = regexp.MustCompile(`(?s)^invalid (boolean )?value (".*") for (?:flag )?-+([^:]+): (.*)$`)
	reNeedsArg  = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
)

// flagName renders a flag as the usage texts write it: -D, -f, -v, --timeout.
func flagName(n string) string {
	if len(n) == 1 {
		return "-" + n
	}
	return "--" + n
}

// shownFlag renders a flag name the user typed: as flagName, or quoted and cut (text.Quote) when it
// is long or holds a control character, so that an escape sequence never reaches the terminal raw.
func shownFlag(n string) string {
	if len(n) > text.MaxQuotedValue || strconv.Quote(n) != `"`+n+`"` {
		return text.Quote(n)
	}
	return flagName(n)
}

// flagError rewrites the flag package's errors in the words of the usage texts. A value of the wrong
// form says what the flag takes, from the flag's type in fs: "not true or false" for a boolean flag
// only, "not a whole number" for --tail abc, "needs a unit" for --heartbeat-fast 5
// (TestFlagErrorsSayWhatTheFlagTakes).
func flagError(fs *flag.FlagSet, err error) error {
	s := err.Error()
	if m := reUndefined.FindStringSubmatch(s); m != nil {
		// The command's own flags, for a did-you-mean (--queu: did you mean "--queue"?).
		var known []string
		if fs != nil {
			fs.VisitAll(func(f *flag.Flag) { known = append(known, flagName(f.Name)) })
		}
		return fmt.Errorf("unknown flag %s%s", shownFlag(m[1]), text.DidYouMean(flagName(m[1]), known))
	}
	if m := reInvalid.FindStringSubmatch(s); m != nil {
		boolean, value, name, msg := m[1] != "", m[2], m[3], m[4]
		if raw, err := strconv.Unquote(value); err == nil {
			value = text.Quote(raw) // bounded: a 1 MiB value gives a one-line message
		}
		if msg == "parse error" || msg == "value out of range" {
			msg = wantOf(fs, name, boolean, value, msg == "value out of range")
		}
		return fmt.Errorf("%s %s: %s", flagName(name), value, msg)
	}
	if m := reNeedsArg.FindStringSubmatch(s); m != nil {
		return fmt.Errorf("%s needs a value", flagName(m[1]))
	}
	return err
}

// wantOf says what a flag of the standard library's types takes, for a value it could not parse
// (quoted: the value as the flag package quoted it).
func wantOf(fs *flag.FlagSet, name string, boolean bool, quoted string, outOfRange bool) string {
	if boolean {
		return "not true or false"
	}
	var v any
	if fs != nil {
		if f := fs.Lookup(name); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				v = g.Get()
			}
		}
	}
	raw, _ := strconv.Unquote(quoted)
	switch v.(type) {
	case bool:
		return "not true or false"
	case int, int64:
		if outOfRange {
			return "out of range for a whole number"
		}
		return "not a whole number"
	case uint, uint64:
		if outOfRange {
			return "out of range for a whole number"
		}
		return "not a whole number of 0 or more"
	case float64:
		return "not a number"
	case time.Duration:
		if _, err := strconv.ParseFloat(raw, 64); err == nil {
			return fmt.Sprintf("needs a unit, e.g. %sms or %ss", raw, raw)
		}
		return "not a duration; write a number with a unit, e.g. 200ms, 5s, 2m"
	}
	if outOfRange {
		return "out of range"
	}
	return "not a value this flag takes"
}

// usageError prints a usage problem and the way to the usage; it returns contract.ExitUsage.
func usageError(stderr io.Writer, name string, err error) int {
	// text.Message: a value the producer echoed raw or whole still reaches the terminal inert and
	// bounded (TestBadInputs' inert rows).
	fmt.Fprintf(stderr, "yarn-am %s: %s\nRun 'yarn-am help %s' for usage.\n", name, text.Message(err.Error()), name)
	return contract.ExitUsage
}

// fail prints err behind the command's name and returns its exit code: exitCode(err) unless code is
// given (not 0).
func fail(stderr io.Writer, name string, err error, code int) int {
	fmt.Fprintf(stderr, "yarn-am %s: %s\n", name, text.Message(err.Error()))
	if code != 0 {
		return code
	}
	return exitCode(err)
}

// exitCode classifies an error of a command that talked to the cluster: unreachable (4), the cluster
// said no (5), a local file that could not be read (3: a missing --keytab or KRB5_CONFIG, a symbolic
// link loop, no permission), anything else 1. The classification uses yarnrpc's typed errors where
// they exist, else the standard library's network, deadline and file errors
// (TestExitCodeOfClusterErrors, TestBadInputs' Kerberos file rows).
func exitCode(err error) int {
	var pe *resources.PreflightError
	var re *yarnrpc.RemoteError
	var ne net.Error
	var oe *net.OpError
	var de *net.DNSError
	switch {
	case err == nil:
		return contract.ExitOK
	case errors.As(err, &pe):
		return contract.ExitRejected
	case errors.Is(err, yarnrpc.ErrConnection), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &oe), errors.As(err, &de):
		return contract.ExitUnreachable
	case localFileError(err):
		// Before the net.Error case below: a file error's syscall.Errno (ENOENT, ELOOP) has the
		// Timeout and Temporary methods, so it passes for a net.Error.
		return contract.ExitInvalidInput
	case errors.As(err, &ne):
		return contract.ExitUnreachable
	case errors.As(err, &re):
		return contract.ExitRejected
	}
	return contract.ExitAppFailed
}

// localFileError reports whether err is the os package's error about a file of this machine (the
// path is in its text): the user named a file that is missing, unreadable or a loop of links.
func localFileError(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	return errors.As(err, &pe) || errors.As(err, &le)
}

// connect loads the Hadoop configuration, logs in and connects to the ResourceManager; on failure it
// prints the problem and returns the exit code: a bad configuration directory or login input is
// invalid input (3), a cluster that cannot be reached 4.
func connect(lf loginFlags, name string, stderr io.Writer) (*client.Session, *yarnrpc.ApplicationClient, int) {
	conf, err := client.LoadConfig()
	if err != nil {
		return nil, nil, fail(stderr, name, err, contract.ExitInvalidInput)
	}
	s, err := client.Login(conf, lf.options(), stderr)
	if err != nil {
		code := exitCode(err)
		if code == contract.ExitAppFailed {
			code = contract.ExitInvalidInput
		}
		return nil, nil, fail(stderr, name, err, code)
	}
	rm, err := s.ConnectRM()
	if err != nil {
		code := exitCode(err)
		if code == contract.ExitAppFailed {
			code = contract.ExitInvalidInput // the configuration names no usable RM address
		}
		return nil, nil, fail(stderr, name, err, code)
	}
	return s, rm, 0
}
