package dist

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// RunApplication runs an application cluster's JobManager to its job's end, as the driver in the
// AM container does (docs/flink.md#the-jobmanager-as-the-driver): it starts p with its output to
// stdout and stderr, waits for the job through rest (WaitJob, polling every poll), then stops the
// JobManager (SIGTERM, SIGKILL after grace) and returns the outcome: FINISHED, or FAILED with
// Flink's root cause. p's configuration must have execution.shutdown-on-application-finish false,
// else the JobManager exits before its answer can be read; RunApplication refuses it otherwise.
// When ctx ends first (the AM is stopped), the JobManager is stopped the same way.
func RunApplication(ctx context.Context, p *Process, rest *REST, poll, grace time.Duration, stdout, stderr io.Writer) (*Outcome, error) {
	if p.Role != RoleApplication {
		return nil, fmt.Errorf("flink: RunApplication needs a %s process, not %s", RoleApplication, p.Role)
	}
	if v, _ := p.Conf.Get(KeyShutdownOnFinish); v != "false" {
		return nil, fmt.Errorf("flink: %s must be false for the job's outcome to be read from the JobManager (it is %s)", KeyShutdownOnFinish, shown(v))
	}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("flink: starting the JobManager: %w", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	outcome, err := rest.WaitJob(ctx, poll, exited)
	select {
	case <-exited:
		if err != nil {
			return nil, fmt.Errorf("%w; the JobManager ended: %v", err, waitErr)
		}
		return outcome, nil
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-exited
	}
	if err != nil && errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("flink: stopped before the job ended: %w", err)
	}
	return outcome, err
}
