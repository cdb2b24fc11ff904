package flinkdist

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/yarn-am/yarn-am/internal/stderrtail"
)

// RunApplication runs an application cluster's JobManager to its job's end, as the driver in the
// AM container does (docs/flink.md#the-jobmanager-as-the-driver): it starts p with its output to
// stdout and stderr, waits for the job through rest (WaitJob, polling every poll), then stops the
// JobManager (SIGTERM, SIGKILL after grace) and returns the outcome: FINISHED, or FAILED with
// Flink's root cause. p's configuration must have execution.shutdown-on-application-finish false,
// else the JobManager exits before its answer can be read; RunApplication refuses it otherwise.
// When ctx ends first (the AM is stopped), the JobManager is stopped the same way.
//
// A JobManager that ends before its job does, or a job that FAILED with no root cause the REST API
// can give (one that failed while its JobMaster started), is explained by the JobManager's own
// output: the last exception of its log and its JVM's stderr (Process.Failure,
// docs/flink.md#when-the-jobmanager-fails-to-start).
func RunApplication(ctx context.Context, p *Process, rest *REST, poll, grace time.Duration, stdout, stderr io.Writer) (*Outcome, error) {
	if p.Role != RoleApplication {
		return nil, fmt.Errorf("flink: RunApplication needs a %s process, not %s", RoleApplication, p.Role)
	}
	if v, _ := p.Conf.Get(KeyShutdownOnFinish); v != "false" {
		return nil, fmt.Errorf("flink: %s must be false for the job's outcome to be read from the JobManager (it is %s)", KeyShutdownOnFinish, shown(v))
	}
	errTail := &stderrtail.Tail{}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Env = append(os.Environ(), p.Env...)
	// The stderr tail makes the two writers differ, so exec copies each in a goroutine of its own: one
	// lock keeps a caller's single writer for both (a test's buffer) written by one at a time.
	var mu sync.Mutex
	cmd.Stdout = &lockedWriter{mu: &mu, w: stdout}
	cmd.Stderr = io.MultiWriter(&lockedWriter{mu: &mu, w: stderr}, errTail)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("flink: starting the JobManager: %w", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	if p.Started != nil {
		go p.Started(cmd.Process.Pid, exited)
	}
	outcome, err := rest.WaitJob(ctx, poll, exited)
	select {
	case <-exited:
		if err != nil {
			return nil, fmt.Errorf("flink: %w (%v)%s; %w", errEndedBeforeJob, waitErr, p.Failure(StderrLines(errTail)), err)
		}
		return explainFailed(outcome, nil, p, errTail, -1), nil
	default:
	}
	// What the JobManager logs from here on is the stop's: on Flink 2.3 the dispatcher cancels the
	// application still running, and logs that cancellation, the log's last trace, after the job's
	// failure (docs/flink.md#when-the-jobmanager-fails-to-start).
	logEnd := logSize(p.LogFile)
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
	if outcome != nil {
		return explainFailed(outcome, err, p, errTail, logEnd), nil
	}
	return nil, err
}

// errEndedBeforeJob is RunApplication's error when the JobManager's JVM ended while its job had not:
// the process died (killed, crashed, out of memory), the job's checkpoints are what is left of it.
var errEndedBeforeJob = errors.New("the JobManager ended before its job did")

// lockedWriter writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// explainFailed gives a FAILED job whose root cause the REST API did not give (restErr, or none
// recorded: a job that failed while its JobMaster started has no exception history) the last
// exception of the JobManager's log instead, of its first logEnd bytes (< 0: all): what it logged
// before the driver stopped it. Without one either, the REST API's error is the cause.
func explainFailed(o *Outcome, restErr error, p *Process, errTail *stderrtail.Tail, logEnd int64) *Outcome {
	if o == nil || o.State() != "FAILED" || o.RootCause != nil {
		return o
	}
	if e := lastExceptionBefore(p.LogFile, logEnd); e != nil {
		o.RootCause = &RootCause{Exception: e.Head, Cause: e.String() + " (from " + filepath.Base(p.LogFile) + ")"}
		return o
	}
	if restErr != nil {
		o.RootCause = &RootCause{Cause: "no root cause from the REST API (" + clean(restErr.Error(), maxExceptionShown) + ")" + p.Failure(StderrLines(errTail))}
	}
	return o
}
