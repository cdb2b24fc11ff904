package client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// TestExitCodeOfClusterErrors: the errors of a command that talked to the cluster map to one exit
// code each, through yarnrpc's typed errors or the standard library's network and deadline errors.
func TestExitCodeOfClusterErrors(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	for name, c := range map[string]struct {
		err  error
		want int
	}{
		"connection (yarnrpc)": {&yarnrpc.ConnError{Addr: "rm:8032", Op: "dial", Err: dial}, contract.ExitUnreachable},
		"wrapped dial error":   {fmt.Errorf("asking the ResourceManager: %w", dial), contract.ExitUnreachable},
		"no such host":         {fmt.Errorf("x: %w", &net.DNSError{Err: "no such host", Name: "rm"}), contract.ExitUnreachable},
		"deadline":             {fmt.Errorf("yarnrpc: getClusterNodes on rm:8032: no response: %w", context.DeadlineExceeded), contract.ExitUnreachable},
		"does not fit":         {fmt.Errorf("x: %w", &resources.PreflightError{Problems: []string{"p"}}), contract.ExitRejected},
		"remote exception":     {&yarnrpc.RemoteError{Class: "org.apache.hadoop.yarn.exceptions.YarnException", Message: "no"}, contract.ExitRejected},
		"anything else":        {errors.New("the application failed"), contract.ExitAppFailed},
		// A local file is bad input, not an unreachable cluster, whatever its errno (issue 40 §7).
		"missing local file": {fmt.Errorf("--keytab k: %w", &fs.PathError{Op: "stat", Path: "k", Err: syscall.ENOENT}), contract.ExitInvalidInput},
		"link loop":          {fmt.Errorf("x: %w", &fs.PathError{Op: "open", Path: "k", Err: syscall.ELOOP}), contract.ExitInvalidInput},
		"no permission":      {fmt.Errorf("x: %w", &fs.PathError{Op: "open", Path: "k", Err: syscall.EACCES}), contract.ExitInvalidInput},
		"not a directory":    {fmt.Errorf("x: %w", &fs.PathError{Op: "open", Path: "k/x", Err: syscall.ENOTDIR}), contract.ExitInvalidInput},
		"its own code":       {fmt.Errorf("x: %w", &ExitError{Code: contract.ExitInvalidInput, Err: errors.New("no yarn-site.xml")}), contract.ExitInvalidInput},
		"refused dial errno": {fmt.Errorf("x: %w", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), contract.ExitUnreachable},
	} {
		assert.Equal(t, c.want, ExitCode(c.err), name)
	}
}
