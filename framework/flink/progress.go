package flink

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// A job that stops making progress (docs/flink.md#a-job-that-stops-making-progress): RUNNING in
// name, but no checkpoint completes (its sources or sinks hang, its checkpoints time out one after
// the other), or it restarts over and over. The watch notices it from what it reads every 3 s: no
// completed checkpoint within the progress timeout, or loopRestarts entries into RESTARTING without
// a completed checkpoint between them within it. It tells once (an event, the status's Progress
// line), and tells again when the job progresses; with [flink] progress-restart the AM ends the
// JobManager's JVM, which the AM then starts again in place from the last completed checkpoint
// (restart.go), once per stalled job.

// The [flink] keys of the progress watch.
const (
	keyProgressTimeout = "progress-timeout"
	keyProgressRestart = "progress-restart"
	// progressOff turns the watch off.
	progressOff = "off"
	// minProgressTimeout and the default's floor: a checkpoint every few seconds still gets minutes.
	minProgressTimeout     = time.Minute
	defaultProgressTimeout = 10 * time.Minute
	// progressIntervals is how many checkpoint intervals the default waits.
	progressIntervals = 5
	// loopRestarts entries into RESTARTING without a completed checkpoint between them are a loop.
	loopRestarts = 3
)

// readProgress reads progress-timeout ("off", a Go duration; unset: the default, by the checkpoint
// interval) and progress-restart into f.
func readProgress(t *jobfile.Table, f *flinkSpec) {
	if v, set := t.String(keyProgressTimeout); set {
		if strings.EqualFold(strings.TrimSpace(v), progressOff) {
			f.ProgressOff = true
		} else if d, err := time.ParseDuration(strings.TrimSpace(v)); err != nil || d < minProgressTimeout {
			t.Problem("flink.%s = %q: want a Go duration of at least %s (\"30m\") or %q; unset, %d checkpoint intervals and at least %s", keyProgressTimeout, bounded(v), minProgressTimeout, progressOff, progressIntervals, defaultProgressTimeout)
		} else {
			f.ProgressTimeout = d
		}
	}
	if v, set := t.Bool(keyProgressRestart); set {
		f.ProgressRestart = v
		if v && f.Jar == "" {
			t.Problem("flink.%s = true: a session cluster (no flink.jar) keeps no job to restart from its checkpoint; leave it out or add jar", keyProgressRestart)
		}
		if v && f.JobManagerRestarts == 0 {
			t.Problem("flink.%s = true with flink.%s = 0: the restart is the JobManager's restart in place; allow at least one", keyProgressRestart, keyJobManagerRestarts)
		}
		if v && f.ProgressOff {
			t.Problem("flink.%s = true with flink.%s = %q: nothing would be noticed to restart; give a timeout", keyProgressRestart, keyProgressTimeout, progressOff)
		}
	}
}

// progressTimeout is the watch's timeout for a job checkpointing every interval (0: not
// checkpointing): the job's own, else progressIntervals intervals and at least the default; 0: off.
func progressTimeout(spec *flinkSpec, interval time.Duration) time.Duration {
	switch {
	case spec.ProgressOff:
		return 0
	case spec.ProgressTimeout > 0:
		return spec.ProgressTimeout
	}
	return max(defaultProgressTimeout, progressIntervals*interval)
}

// progress is the watch's view of one job's progress; only the watch's goroutine touches it.
type progress struct {
	timeout time.Duration
	// checkpointing: the job checkpoints, so a completed checkpoint is its progress.
	checkpointing bool
	// restart ends the JobManager's JVM for a restart in place; nil: tell only.
	restart func() error
	emit    func(contract.Event)

	jobID    string
	since    time.Time // the job's first sight or its latest completed checkpoint
	ckpt     int64
	state    string
	restarts int    // entries into RESTARTING since then
	stalled  string // why it is stalled; "" = progressing
	acted    bool   // restart was called for this job
}

// observe takes one read of the job (its latest completed checkpoint: completed, 0 = none) and
// returns the status line.
func (p *progress) observe(now time.Time, job flinkdist.Job, completed int64) []contract.Detail {
	if p == nil || p.timeout <= 0 {
		return nil
	}
	if job.ID != p.jobID {
		*p = progress{timeout: p.timeout, checkpointing: p.checkpointing, restart: p.restart, emit: p.emit, jobID: job.ID, since: now, ckpt: completed, state: job.State}
	}
	if completed > p.ckpt {
		p.ckpt, p.since, p.restarts = completed, now, 0
		if p.stalled != "" {
			p.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s progresses again: checkpoint %d completed", jobName(job), completed)})
			p.stalled = ""
		}
	}
	if job.State == "RESTARTING" && p.state != "RESTARTING" {
		p.restarts++
	}
	p.state = job.State
	if flinkdist.Terminal(job.State) {
		return nil
	}
	why := ""
	last := "none yet"
	if p.ckpt > 0 {
		last = fmt.Sprintf("the last: %d", p.ckpt)
	}
	switch {
	case p.checkpointing && now.Sub(p.since) >= p.timeout:
		why = fmt.Sprintf("no checkpoint completed for %s (%s; flink.%s = %s)", now.Sub(p.since).Round(time.Second), last, keyProgressTimeout, p.timeout)
	case p.restarts >= loopRestarts && now.Sub(p.since) < p.timeout:
		why = fmt.Sprintf("restarted %d times within %s without a checkpoint completing (%s)", p.restarts, now.Sub(p.since).Round(time.Second), last)
	case p.restarts >= loopRestarts:
		p.since, p.restarts = now, 0 // the restarts were spread over more than the timeout: a new window
	}
	if why != "" && p.stalled == "" {
		p.stalled = why
		msg := fmt.Sprintf("%s makes no progress: %s", jobName(job), why)
		switch {
		case p.restart != nil && !p.acted:
			p.acted = true
			if err := p.restart(); err != nil {
				msg += fmt.Sprintf("; its JobManager could not be ended for a restart from the last completed checkpoint: %v", err)
			} else {
				msg += fmt.Sprintf("; its JobManager is ended and started again in place from the last completed checkpoint (flink.%s)", keyProgressRestart)
			}
		case p.restart == nil:
			msg += fmt.Sprintf("; flink.%s = true would restart it from the last completed checkpoint", keyProgressRestart)
		}
		p.emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: msg})
	}
	if p.stalled != "" {
		return []contract.Detail{{Name: "Progress", Value: "stalled: " + p.stalled}}
	}
	if p.checkpointing {
		return []contract.Detail{{Name: "Progress", Value: fmt.Sprintf("last checkpoint %s ago (stalled after %s)", now.Sub(p.since).Round(time.Second), p.timeout)}}
	}
	return nil
}

// endJobManager ends the JobManager's JVM named in the driver's bound file (bound.PID) with SIGKILL,
// as a crash would: its driver exits exitJobManagerLost and the AM restarts it in place. The pid must
// be a java process.
func endJobManager(boundPath string) error {
	b, err := readBound(boundPath)
	if err != nil {
		return err
	}
	if b.PID <= 1 {
		return fmt.Errorf("%s names no JVM", filepath.Base(boundPath))
	}
	cmd, err := os.ReadFile("/proc/" + strconv.Itoa(b.PID) + "/cmdline")
	if err != nil {
		return fmt.Errorf("the JobManager's JVM %d: %w", b.PID, err)
	}
	if argv0, _, _ := strings.Cut(string(cmd), "\x00"); !strings.HasSuffix(argv0, "java") {
		return fmt.Errorf("process %d is not the JobManager's JVM (it runs %s)", b.PID, bounded(argv0))
	}
	return syscall.Kill(b.PID, syscall.SIGKILL)
}
