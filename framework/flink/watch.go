package flink

import (
	"context"
	"fmt"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// This file is what the AM shows of a Flink job (docs/flink.md#status-and-events): the details
// status and the web page print, read from the JobManager's REST API, and the flink-job events told
// of what changed since the last read.

// detailsTitle heads the details in status and on the web page.
const detailsTitle = "Flink job"

// checkpointEventEvery throttles the checkpoint events: a job checkpointing every second would
// otherwise push every other event out of the AM's log.
const checkpointEventEvery = time.Minute

// jobWatch reads a Flink job's details and tells of their changes. Only the caller of details (the
// AM's one details goroutine, framework.AM.Details) touches its fields but rest and emit.
type jobWatch struct {
	rest *flinkdist.REST
	emit func(contract.Event)
	now  func() time.Time
	// recorder keeps the latest completed checkpoint for a later AM attempt (recover.go); nil: none.
	recorder *recorder
	// jm is where the JobManager bound its ports; nil (tests): known.
	jm *jobManager

	jobID, state string
	parallelism  int
	checkpoint   int64     // the latest completed checkpoint's id
	toldCkpt     int64     // the checkpoint the last checkpoint event told of
	toldCkptAt   time.Time // when
	savepoint    int64     // the latest savepoint's id
	// restore is the latest restore told of (its checkpoint and when); restoredFrom the detail of the
	// latest that was a start from a savepoint or checkpoint or a recovery, rescaledWith that of a
	// rescale's; running: this job was seen RUNNING before the latest restore (tellRestore).
	restore      restoreMark
	restoredFrom string
	rescaledWith string
	running      bool

	demand *demand // taskmanagers = "demand": its lines join the details (demand.go); nil otherwise
	// autoscale is [flink] autoscale's autoscaler, whose lines join the details (autoscalewatch.go); nil: off.
	autoscale *autoscaler
	// preempt is the job's response to preemption warnings (nil = checkpoint-on-preemption off),
	// whose last outcome the details show; its own lock guards it.
	preempt *preempter
	// restarts are the JobManager's restarts in place (restart.go); nil: off.
	restarts *restarter
	// progress notices a job that stops making progress (progress.go); nil: off.
	progress *progress
}

// details reads the JobManager's jobs, the newest job's state and parallelism and its checkpoints,
// emits the events of what changed, and returns the details.
func (w *jobWatch) details(ctx context.Context) ([]contract.Detail, error) {
	if w.jm != nil {
		if _, ok := w.jm.known(); !ok {
			return []contract.Detail{{Name: "State", Value: "JobManager starting (its ports are not bound yet)"}}, nil
		}
	}
	jobs, err := w.rest.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return append([]contract.Detail{{Name: "State", Value: "no job yet"}}, append(w.demandDetails(), w.recorder.details()...)...), nil
	}
	job := current(jobs)
	d := []contract.Detail{{Name: "Job", Value: job.Name + " (" + job.ID + ")"}, {Name: "State", Value: job.State}}
	par := 0
	if jd, err := w.rest.JobDetail(ctx, job.ID); err == nil {
		par = jd.Parallelism()
		d = append(d, contract.Detail{Name: "Parallelism", Value: fmt.Sprint(par)})
	}
	w.tellJob(job, par)
	// A job still INITIALIZING has no checkpoint statistics yet: its JobManager answers the read with
	// an error it also logs, stack trace and all, once per read.
	if job.State != "INITIALIZING" {
		if cp, err := w.rest.Checkpoints(ctx, job.ID); err == nil {
			d = append(d, w.tellCheckpoints(ctx, job, cp)...)
		}
	}
	if job.State == "RUNNING" {
		w.running = true
	}
	d = append(d, w.progress.observe(w.now(), job, w.checkpoint)...)
	d = append(d, w.preempt.details()...)
	d = append(d, w.recorder.details()...)
	d = append(d, w.restarts.details()...)
	if len(jobs) > 1 {
		running := 0
		for _, j := range jobs {
			if !flinkdist.Terminal(j.State) {
				running++
			}
		}
		d = append(d, contract.Detail{Name: "Jobs", Value: fmt.Sprintf("%d (%d not ended); the newest shown", len(jobs), running)})
	}
	return append(append(d, w.demandDetails()...), w.autoscale.details()...), nil
}

func (w *jobWatch) demandDetails() []contract.Detail {
	if w.demand == nil {
		return nil
	}
	return w.demand.details()
}

// tellJob emits the job's first sight, a change of its state and a change of its parallelism.
func (w *jobWatch) tellJob(job flinkdist.Job, par int) {
	switch {
	case job.ID != w.jobID:
		msg := jobName(job) + " is " + job.State
		if par > 0 {
			msg += fmt.Sprintf(", parallelism %d", par)
		}
		w.emit(contract.Event{Type: eventJob, Severity: severity(job.State), Message: msg})
		w.checkpoint, w.toldCkpt, w.toldCkptAt, w.savepoint = 0, 0, time.Time{}, 0
		w.restore, w.restoredFrom, w.rescaledWith, w.running = restoreMark{}, "", "", false
	case job.State != w.state:
		w.emit(contract.Event{Type: eventJob, Severity: severity(job.State), Message: jobName(job) + ": " + w.state + " → " + job.State})
	case par > 0 && w.parallelism > 0 && par != w.parallelism:
		w.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s rescaled: parallelism %d → %d", jobName(job), w.parallelism, par)})
	}
	w.jobID, w.state = job.ID, job.State
	if par > 0 {
		w.parallelism = par
	}
}

// tellCheckpoints emits a completed checkpoint (throttled), a new savepoint and the restore, and
// returns their details.
func (w *jobWatch) tellCheckpoints(ctx context.Context, job flinkdist.Job, cp *flinkdist.Checkpoints) []contract.Detail {
	var d []contract.Detail
	if cp.Counts.Completed+cp.Counts.Failed > 0 {
		d = append(d, contract.Detail{Name: "Checkpoints", Value: fmt.Sprintf("%d completed, %d failed", cp.Counts.Completed, cp.Counts.Failed)})
	}
	if c := cp.Latest.Completed; c != nil {
		d = append(d, contract.Detail{Name: "Last checkpoint", Value: pointLine(c)})
		w.checkpoint = max(w.checkpoint, c.ID)
		w.recorder.saw(job.ID, c)
		now := w.now()
		if c.ID > w.toldCkpt && now.Sub(w.toldCkptAt) >= checkpointEventEvery {
			msg := fmt.Sprintf("%s: checkpoint %d completed", jobName(job), c.ID)
			if w.toldCkpt > 0 {
				msg += fmt.Sprintf(" (%d since the last such event)", c.ID-w.toldCkpt)
			}
			w.emit(contract.Event{Type: eventJob, Message: msg})
			w.toldCkpt, w.toldCkptAt = c.ID, now
		}
	}
	if s := cp.Latest.Savepoint; s != nil {
		d = append(d, contract.Detail{Name: "Last savepoint", Value: pointLine(s)})
		if s.ID > w.savepoint {
			w.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s: savepoint %d written to %s", jobName(job), s.ID, s.ExternalPath)})
			w.savepoint = s.ID
		}
	}
	if r := cp.Latest.Restored; r != nil {
		w.tellRestore(ctx, job, r)
	}
	if w.restoredFrom != "" {
		d = append(d, contract.Detail{Name: "Restored from", Value: w.restoredFrom})
	}
	if w.rescaledWith != "" {
		d = append(d, contract.Detail{Name: "Rescaled with", Value: w.rescaledWith})
	}
	return d
}

// restoreMark is one restore of a job: the checkpoint and when (Flink's restore_timestamp).
type restoreMark struct {
	id int64
	at int64
}

// tellRestore tells of a restore not told yet. Flink reports a rescale's internal restore (the
// adaptive scheduler restarts the job at the new parallelism from its latest checkpoint) as it
// reports a recovery; a restore is the rescale's when it is of a checkpoint, this job was seen RUNNING
// before it, and the job failed in nothing since the restore before it (its exception history has no
// newer entry): told as the rescale carrying its state over, not as "restored from", which is for a
// start from a savepoint or checkpoint and for a recovery after a failure.
func (w *jobWatch) tellRestore(ctx context.Context, job flinkdist.Job, r *flinkdist.Restored) {
	mark := restoreMark{id: r.ID, at: r.Timestamp}
	if mark == w.restore {
		return
	}
	since := w.restore.at
	if since == 0 {
		since = job.Start
	}
	w.restore = mark
	if !r.IsSavepoint && w.running && !w.failedSince(ctx, job.ID, since) {
		w.rescaledWith = fmt.Sprintf("checkpoint %d (the job's state carried over by its rescale)", r.ID)
		w.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s: its rescale carried its state over from checkpoint %d (Flink restores the latest checkpoint to change the parallelism; not a recovery)", jobName(job), r.ID)})
		return
	}
	what := fmt.Sprintf("checkpoint %d", r.ID)
	if r.IsSavepoint {
		what = "savepoint"
	}
	if r.ExternalPath != "" {
		what += " " + r.ExternalPath
	}
	w.restoredFrom = what
	w.emit(contract.Event{Type: eventJob, Message: jobName(job) + " restored from " + what})
}

// failedSince says whether the job's exception history has an entry at or after since (Unix ms); an
// unreadable history counts as a failure, so a recovery is never told as a rescale.
func (w *jobWatch) failedSince(ctx context.Context, jobID string, since int64) bool {
	rc, err := w.rest.RootCause(ctx, jobID)
	if err != nil {
		return true
	}
	return rc != nil && rc.Time.UnixMilli() >= since
}

// pointLine is a checkpoint or savepoint in one line: its id, when it completed, where it is.
func pointLine(c *flinkdist.Checkpoint) string {
	s := fmt.Sprintf("#%d", c.ID)
	if c.AckTimestamp > 0 {
		s += " at " + c.Completed().UTC().Format(time.RFC3339)
	}
	if c.ExternalPath != "" && c.ExternalPath != "<checkpoint-not-externally-addressable>" {
		s += ", " + c.ExternalPath
	}
	return s
}
