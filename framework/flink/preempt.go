package flink

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// This file is what a [flink] job does when the ResourceManager warns that it will preempt one of
// its TaskManagers (docs/flink.md#preemption): the AM (framework.AM.OnPreemption) asks the
// JobManager for a checkpoint of every running job at once, so that the restart Flink makes when
// the TaskManager is gone restores from the state of the warning's moment rather than from the last
// periodic checkpoint, which may be minutes old or missing. With checkpoint-on-preemption =
// "savepoint" it asks for a savepoint in state.savepoints.dir instead: a copy the user owns, for a
// later submit with restore; Flink's own restart does not restore from such a savepoint (since
// Flink 1.15 an intermediate savepoint is not used for recovery), so "checkpoint" is what keeps the
// loss small. The AM replaces the preempted container like any other (docs/running.md#preemption),
// and the new TaskManager gives the job its slot back.

// preemptTimeout bounds one checkpoint or savepoint asked on a warning: the TaskManager is killed
// after the scheduler's max_wait_before_kill (10 to 15 s), and a checkpoint still running then fails
// with it; the bound only keeps a JobManager that does not answer from holding the trigger forever.
const preemptTimeout = 2 * time.Minute

// preemptPoll is how often the AM asks whether the checkpoint has completed: the lead time is
// seconds, and the answer is small.
const preemptPoll = 200 * time.Millisecond

// preempter asks for a job's checkpoint or savepoint on a preemption warning, one at a time per job:
// the warnings of several containers, or the RM naming one again in later heartbeats, while one is in
// flight are that one's. Its fields but mu's are read-only after StartAM.
type preempter struct {
	rest *flinkdist.REST
	emit func(contract.Event)
	now  func() time.Time
	mode string // preemptCheckpoint or preemptSavepoint
	dir  string // state.savepoints.dir, for preemptSavepoint

	mu       sync.Mutex
	inFlight map[string]bool // the jobs whose trigger has not ended
	last     string          // the last outcome, for the details ("" = none yet)
}

func newPreempter(rest *flinkdist.REST, emit func(contract.Event), mode, dir string) *preempter {
	return &preempter{rest: rest, emit: emit, now: time.Now, mode: mode, dir: dir, inFlight: map[string]bool{}}
}

// onPreemption is framework.AM.OnPreemption: containers are the TaskManagers the RM named, or the
// one the AM gives back for its idle GPUs (reason contract.NoticeIdleGPURelease).
func (p *preempter) onPreemption(ctx context.Context, containers []string, reason string) {
	ctx, cancel := context.WithTimeout(ctx, preemptTimeout)
	defer cancel()
	named := warned(containers, reason)
	if p.mode == preemptSavepoint && p.dir == "" {
		p.record(contract.SeverityWarning, fmt.Sprintf("%s: no savepoint taken, %s is not set (checkpoint-on-preemption = %q)", named, keySavepointsDir, preemptSavepoint))
		return
	}
	jobs, err := p.rest.Jobs(ctx)
	if err != nil {
		p.record(contract.SeverityWarning, fmt.Sprintf("%s: cannot ask the JobManager for its jobs, so no %s was taken: %v", named, p.mode, err))
		return
	}
	var wg sync.WaitGroup
	running := 0
	for _, j := range jobs {
		if j.State != "RUNNING" {
			continue
		}
		running++
		if !p.begin(j.ID) {
			continue // a trigger of this job is in flight: it serves this warning too
		}
		wg.Go(func() {
			defer p.end(j.ID)
			p.take(ctx, j, named, notice(reason))
		})
	}
	wg.Wait()
	if running == 0 {
		p.record(contract.SeverityWarning, fmt.Sprintf("%s: no job is RUNNING, so no %s was taken", named, p.mode))
	}
}

func (p *preempter) begin(job string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inFlight[job] {
		return false
	}
	p.inFlight[job] = true
	return true
}

func (p *preempter) end(job string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.inFlight, job)
}

// warned says who takes containers back, as the outcomes' lines begin.
func warned(containers []string, reason string) string {
	named := strings.Join(containers, ", ")
	if reason == contract.NoticeIdleGPURelease {
		return "yarn-am gives back " + named + " for its idle GPUs"
	}
	return "YARN will preempt " + named
}

// notice names the warning a checkpoint was asked on.
func notice(reason string) string {
	if reason == contract.NoticeIdleGPURelease {
		return "the idle-GPU notice"
	}
	return "the preemption warning"
}

// take asks for job's checkpoint (or savepoint), waits for it and tells of each step; on names the
// warning (notice).
func (p *preempter) take(ctx context.Context, job flinkdist.Job, named, on string) {
	start := p.now()
	what := "a checkpoint"
	if p.mode == preemptSavepoint {
		what = "a savepoint in " + p.dir
	}
	p.record(contract.SeverityInfo, fmt.Sprintf("%s: %s; asking for %s", jobName(job), named, what))
	var done string
	var err error
	if p.mode == preemptSavepoint {
		var trigger, path string
		if trigger, err = p.rest.TriggerSavepoint(ctx, job.ID, p.dir); err == nil {
			path, err = p.rest.WaitSavepoint(ctx, job.ID, trigger, preemptPoll)
		}
		done = "savepoint " + path
	} else {
		var trigger string
		var id int64
		if trigger, err = p.rest.TriggerCheckpoint(ctx, job.ID); err == nil {
			id, err = p.rest.WaitCheckpoint(ctx, job.ID, trigger, preemptPoll)
		}
		done = fmt.Sprintf("checkpoint %d", id)
	}
	took := p.now().Sub(start).Round(time.Millisecond)
	if err != nil {
		p.record(contract.SeverityWarning, fmt.Sprintf("%s: %s asked on %s failed after %s: %v", jobName(job), what, on, took, err))
		return
	}
	p.record(contract.SeverityInfo, fmt.Sprintf("%s: %s completed %s after %s", jobName(job), done, took, on))
}

// record emits an outcome as a flink-job event and keeps it for the details.
func (p *preempter) record(severity, msg string) {
	p.mu.Lock()
	p.last = p.now().UTC().Format(time.RFC3339) + " " + msg
	p.mu.Unlock()
	p.emit(contract.Event{Type: eventJob, Severity: severity, Message: msg})
}

// details is the last outcome, as a line of the Flink details (none before the first warning).
func (p *preempter) details() []contract.Detail {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == "" {
		return nil
	}
	return []contract.Detail{{Name: "On preemption", Value: p.last}}
}

// checkPreemptionSavepoint refuses checkpoint-on-preemption = "savepoint" without a savepoint
// directory, as yarn-am stop refuses a stop without one. A provided home's configuration is on HDFS,
// out of the client's sight: the AM tells of a missing directory at the warning.
func (l *layered) checkPreemptionSavepoint() error {
	if l.spec.OnPreemption != preemptSavepoint || l.home == nil {
		return nil
	}
	if v, ok := l.conf.Get(keySavepointsDir); ok && strings.TrimSpace(v) != "" {
		return nil
	}
	return fmt.Errorf("flink.checkpoint-on-preemption = %q needs a savepoint directory: set %s in [flink.config] (a directory the JobManager can write, e.g. file:///tmp/savepoints), or use %q (the default, which Flink's restart restores) or %q", preemptSavepoint, keySavepointsDir, preemptCheckpoint, preemptOff)
}
