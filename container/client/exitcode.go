package client

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// ExitError is an error with the exit code a command ends with for it, where the error's kind alone
// does not say it (a configuration directory that cannot be used is invalid input, whatever failed).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode classifies an error of a command that talked to the cluster (docs/running.md#exit-codes):
// an ExitError's own code; unreachable (4), the cluster said no (5), a local file that could not be
// read (3: a missing --keytab or KRB5_CONFIG, a symbolic link loop, no permission), anything else 1.
// The classification uses yarnrpc's typed errors where they exist, else the standard library's
// network, deadline and file errors (TestExitCodeOfClusterErrors, cmd/yarn-am's TestBadInputs'
// Kerberos file rows).
func ExitCode(err error) int {
	var xe *ExitError
	var pe *resources.PreflightError
	var re *yarnrpc.RemoteError
	var ne net.Error
	var oe *net.OpError
	var de *net.DNSError
	switch {
	case err == nil:
		return contract.ExitOK
	case errors.As(err, &xe):
		return xe.Code
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
