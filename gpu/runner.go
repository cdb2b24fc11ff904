package gpu

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/yarn-am/yarn-am/resources"
)

// ScriptRunner is the driver's seam to the outside world: everything the driver executes goes through
// it, so unit tests replace it with a fake.
type ScriptRunner interface {
	// Discover runs `<path> <amount> <args...>` with the discovery-script contract (## Contracts in
	// docs/design.md) and returns the indexes of its first stdout line (at least amount of them), or an
	// error carrying the script's stderr.
	Discover(ctx context.Context, path string, amount int, args string, timeout time.Duration) ([]string, error)
	// Release runs `<path> 0 <args...> --release`, the release mode of the built-in scripts.
	Release(ctx context.Context, path string, args []string, timeout time.Duration) error
}

// ExecRunner runs scripts as child processes of this process, which is the owner of their coordination
// claims (the scripts record their caller, $PPID). Discovery goes through resources.RunDiscoveryWith,
// the runner the exec driver uses too (bounded output, process-group kill).
type ExecRunner struct{}

// Discover implements ScriptRunner with resources.RunDiscoveryWith and IndexRule: output that is not
// distinct non-negative integers fails discovery with the output quoted.
func (ExecRunner) Discover(ctx context.Context, path string, amount int, args string, timeout time.Duration) ([]string, error) {
	return resources.RunDiscoveryWith(ctx, path, amount, args, timeout, IndexRule)
}

// Release implements ScriptRunner: it runs the script's release mode and returns an error with its
// stderr if it fails or does not finish within timeout.
func (ExecRunner) Release(ctx context.Context, path string, args []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append(append([]string{"0"}, args...), "--release")
	cmd := exec.CommandContext(ctx, path, argv...)
	var stderr bytes.Buffer
	// Bounded like discovery output (resources.MaxDiscoveryOutput); the script's own group is killed on
	// timeout, not just the script.
	cmd.Stderr = &limitWriter{w: &stderr, n: resources.MaxDiscoveryOutput}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("release %s: no answer within %s", path, timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "no output on stderr"
		}
		return fmt.Errorf("release %s %s: %w: %s", path, strings.Join(argv, " "), err, msg)
	}
	return nil
}

// limitWriter keeps the first n bytes written to it and drops the rest.
type limitWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
