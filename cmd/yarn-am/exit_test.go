package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		"refused dial errno": {fmt.Errorf("x: %w", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), contract.ExitUnreachable},
	} {
		assert.Equal(t, c.want, exitCode(c.err), name)
	}
}

// TestUnreachableClusterExits4: a valid job checked against a ResourceManager port nothing listens on
// exits 4 (unreachable), within its --timeout and some seconds.
func TestUnreachableClusterExits4(t *testing.T) {
	port := closedPort(t)
	conf := t.TempDir()
	site := fmt.Sprintf("<configuration><property><name>yarn.resourcemanager.address</name><value>127.0.0.1:%d</value></property></configuration>", port)
	require.NoError(t, os.WriteFile(filepath.Join(conf, "yarn-site.xml"), []byte(site), 0o644))
	t.Setenv("HADOOP_CONF_DIR", conf)
	job := filepath.Join(t.TempDir(), "job.toml")
	require.NoError(t, os.WriteFile(job, []byte(okJob), 0o644))
	for _, args := range [][]string{{"check", job, "--timeout", "2s"}, {"list", "--timeout", "2s"}, {"cluster", "--timeout", "2s"}} {
		start := time.Now()
		_, errs, code := runCmd(args...)
		assert.Equal(t, contract.ExitUnreachable, code, "%v: %s", args, errs)
		assert.Less(t, time.Since(start), 30*time.Second, "%v gives up within its timeout and some seconds", args)
	}
}

func TestTimeoutFlag(t *testing.T) {
	for in, want := range map[string]string{
		"5":    `needs a unit, e.g. 5s or 5m`,
		"1.5":  `needs a unit, e.g. 1.5s or 1.5m`,
		"5x":   `not a duration; write a number with a unit, e.g. 5s, 90s, 2m`,
		"soon": `not a duration; write a number with a unit, e.g. 5s, 90s, 2m`,
		"-5s":  `must be positive, e.g. 5s or 2m`,
		"0s":   `must be positive, e.g. 5s or 2m`,
	} {
		var f timeoutFlag
		assert.EqualError(t, f.Set(in), want, in)
	}
	var f timeoutFlag
	require.NoError(t, f.Set("90s"))
	assert.Equal(t, 90*time.Second, time.Duration(f))
}
