package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/cli"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// defaultTimeout is the --timeout of every client command: long enough for submit to stage the binary
// and the job's files, short enough that a dead cluster is reported within minutes.
const defaultTimeout = 2 * time.Minute

func registerTimeout(fs *flag.FlagSet) *cli.Timeout { return cli.RegisterTimeout(fs, defaultTimeout) }

// parseCommand parses a command's flags and positional arguments (cli.Parse). With --help it prints
// usage and returns exit code 0; on a problem it prints it and the way to the usage and returns
// contract.ExitUsage. ok is true when the command should go on.
func parseCommand(fs *flag.FlagSet, args []string, name, usage string, want int, what string, stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	pos, err := cli.Parse(fs, args, name, want, what)
	if err == flag.ErrHelp {
		fmt.Fprintln(stdout, strings.TrimSpace(usage))
		return nil, 0, false
	}
	if err != nil {
		return nil, usageError(stderr, name, err), false
	}
	return pos, 0, true
}

// usageError prints a usage problem and the way to the usage; it returns contract.ExitUsage.
func usageError(stderr io.Writer, name string, err error) int {
	// text.Message: a value the producer echoed raw or whole still reaches the terminal inert and
	// bounded (TestBadInputs' inert rows).
	fmt.Fprintf(stderr, "yarn-am %s: %s\nRun 'yarn-am help %s' for usage.\n", name, text.Message(err.Error()), name)
	return contract.ExitUsage
}

// fail prints err behind the command's name and returns its exit code: client.ExitCode(err) unless
// code is given (not 0).
func fail(stderr io.Writer, name string, err error, code int) int {
	fmt.Fprintf(stderr, "yarn-am %s: %s\n", name, text.Message(err.Error()))
	if code != 0 {
		return code
	}
	return client.ExitCode(err)
}

// connect is client.Connect for a command: on failure it prints the problem and returns the exit code.
func connect(lf loginFlags, name string, stderr io.Writer) (*client.Session, *yarnrpc.ApplicationClient, int) {
	s, rm, err := client.Connect(lf.options(), stderr)
	if err != nil {
		return nil, nil, fail(stderr, name, err, 0)
	}
	return s, rm, 0
}
