package flink

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// This file lets a Flink job survive the loss of its ApplicationMaster without ZooKeeper
// (docs/flink.md#when-the-applicationmaster-is-lost): the AM keeps the job's latest completed
// checkpoint, as its REST API reports it, in the application's staging directory
// (framework.AMStart.State), and a later attempt's JobManager starts the job from it through Flink's
// own restore key. The JobManager keeps its checkpoints when it is stopped (checkpointDefaults), so
// the kept path is still there.

// envRecover is the checkpoint a later AM attempt's JobManager starts its job from, set by the AM in
// the driver's environment only (flink-jobmanager sets Flink's restore key to it).
const envRecover = "YARN_AM_FLINK_RECOVER"

// Flink 1.20's checkpointing keys yarn-am reads or gives a default (CheckpointingOptions,
// StateRecoveryOptions); each deprecated key beside its current one.
const (
	keyCheckpointInterval     = "execution.checkpointing.interval"
	keyCheckpointRetention    = "execution.checkpointing.externalized-checkpoint-retention"
	keyCheckpointsRetained    = "execution.checkpointing.num-retained"
	keyCheckpointsRetainedOld = "state.checkpoints.num-retained"
	keyCheckpointDir          = "execution.checkpointing.dir"
	keyCheckpointDirOld       = "state.checkpoints.dir"
	// keyStateRecoveryPath is the current name of keyRestore (1.20 and 2.x): when both are set Flink reads
	// this one, so a recovery sets it too when the configuration has it.
	keyStateRecoveryPath = "execution.state-recovery.path"
	// retainOnCancellation keeps a job's checkpoints when it is cancelled or its JobManager stops
	// (the job SUSPENDED): Flink's default, NO_EXTERNALIZED_CHECKPOINTS, deletes them then.
	retainOnCancellation = "RETAIN_ON_CANCELLATION"
)

// notAddressable is the external path Flink reports for a checkpoint kept in the JobManager's memory
// (no checkpoint directory): nothing a later JobManager could start from.
const notAddressable = "<checkpoint-not-externally-addressable>"

// recoverAtStart is what a later attempt (s.Attempt > 1) does before its JobManager starts: it reads
// what the earlier attempts kept and returns the checkpoint to start from ("" = none) and the state
// the recorder goes on from; it emits the event that says which, and keeps this attempt's start.
func recoverAtStart(ctx context.Context, spec *flinkSpec, conf *flinkdist.Config, s framework.AMStart, emit func(contract.Event)) (string, recovery) {
	rec := recovery{}
	if s.Attempt <= 1 || s.State == nil {
		return "", rec
	}
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	kept, err := loadRecovery(c, s.State)
	cancel()
	if kept != nil {
		rec = *kept
	}
	from, fromID, fromSavepoint := "", int64(0), false
	switch {
	case spec.Jar == "":
		emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
			"AM attempt %d: a new session cluster starts; the jobs submitted to the earlier attempt's are not restored (a session cluster's jobs are not kept across AM attempts)", s.Attempt)})
		return "", rec
	case err != nil:
		emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
			"AM attempt %d: the Flink job's state was not kept: the earlier attempt's record could not be read (%v); the job starts %s", s.Attempt, err, startsFrom(spec))})
	case rec.Path == "" && len(rec.Savepoints) == 0:
		emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
			"AM attempt %d: the Flink job's state was not kept: %s; the job starts %s", s.Attempt, whyNothingKept(conf), startsFrom(spec))})
	default:
		pick := pickRestore(ctx, rec, s.Files)
		if pick.Path == "" {
			emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
				"AM attempt %d: no kept checkpoint of the Flink job is left: %s; the job starts %s", s.Attempt, pick.Why, startsFrom(spec))})
			break
		}
		from, fromID, fromSavepoint = pick.Path, pick.Checkpoint, pick.Savepoint
		emit(contract.Event{Type: eventJob, Message: fmt.Sprintf(
			"AM attempt %d: the Flink job starts from %s at %s, %s", s.Attempt, pick.name(), pick.Path, pick.Why)})
	}
	if err == nil {
		rec.Restores = append(rec.Restores, restore{Attempt: s.Attempt, Checkpoint: fromID, Path: from, Savepoint: fromSavepoint})
		if len(rec.Restores) > maxRestores {
			rec.Restores = rec.Restores[len(rec.Restores)-maxRestores:]
		}
		if data, err := rec.encode(); err == nil {
			c, cancel := context.WithTimeout(ctx, 30*time.Second)
			_ = s.State.Save(c, data) // only the status's history of restores would miss it
			cancel()
		}
	}
	return from, rec
}

// startsFrom says where a job starts without a kept checkpoint.
func startsFrom(spec *flinkSpec) string {
	if p := spec.Config[keyRestore]; p != "" {
		return "again from the savepoint it was submitted with (" + p + ")"
	}
	return "from nothing"
}

// whyNothingKept says why an earlier attempt kept no checkpoint.
func whyNothingKept(conf *flinkdist.Config) string {
	iv, _ := conf.Get(keyCheckpointInterval)
	_, dir := firstOf(conf, keyCheckpointDir, keyCheckpointDirOld)
	switch {
	case strings.TrimSpace(iv) == "":
		return "the earlier attempt saw no completed checkpoint (" + keyCheckpointInterval + " is not set: checkpointing is off, unless the job turns it on itself)"
	case !dir:
		return "the earlier attempt saw no checkpoint written to a directory (" + keyCheckpointDir + " is not set: checkpoints are kept in the JobManager's memory)"
	}
	return "the earlier attempt saw no completed checkpoint yet"
}

// firstOf is the value of the first key set.
func firstOf(conf *flinkdist.Config, keys ...string) (string, bool) {
	for _, k := range keys {
		if v, ok := conf.Get(k); ok && strings.TrimSpace(v) != "" {
			return v, true
		}
	}
	return "", false
}

// recorder keeps the latest completed checkpoint the AM sees in the staging directory: the details
// goroutine tells it (saw), its own goroutine saves (run), so a slow NameNode never holds the
// details. mu guards rec and the flags.
type recorder struct {
	store  framework.StateStore
	emit   func(contract.Event)
	notify chan struct{}

	mu        sync.Mutex
	rec       recovery
	attempt   int
	dirty     bool
	failing   bool // a failed save was told; the next success is told too
	savedOnce bool // the first save was told
}

func newRecorder(store framework.StateStore, emit func(contract.Event), attempt int, rec recovery) *recorder {
	return &recorder{store: store, emit: emit, notify: make(chan struct{}, 1), rec: rec, attempt: attempt}
}

// saw is told of a job's latest completed checkpoint; a newer one than kept is saved.
func (r *recorder) saw(jobID string, c *flinkdist.Checkpoint) {
	if r == nil || c == nil || c.ExternalPath == "" || c.ExternalPath == notAddressable {
		return
	}
	r.mu.Lock()
	if jobID == r.rec.JobID && c.ID <= r.rec.Checkpoint {
		r.mu.Unlock()
		return
	}
	r.rec.JobID, r.rec.Checkpoint, r.rec.Path, r.rec.Attempt = jobID, c.ID, c.ExternalPath, r.attempt
	r.rec.CheckpointAt = c.AckTimestamp
	r.changedLocked()
	r.mu.Unlock()
}

// changedLocked marks the state to save and wakes run (mu held).
func (r *recorder) changedLocked() {
	r.dirty = true
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// maxOnDemand is how many savepoints taken on demand the state remembers (the newest): only the
// newest is ever restored, and they are never deleted.
const maxOnDemand = 3

// tookSavepoint keeps a savepoint the AM took, for a later start to restore and the schedule to
// delete. It returns those it no longer keeps: the on-demand ones past maxOnDemand, and the oldest
// when the state would outgrow framework.MaxState (the caller says so: the schedule will not delete
// those).
func (r *recorder) tookSavepoint(sp keptSavepoint) (dropped []keptSavepoint) {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	all := append(slices.Clone(r.rec.Savepoints), sp)
	demand := 0
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Scheduled {
			continue
		}
		if demand++; demand > maxOnDemand {
			dropped = append(dropped, all[i])
			all = slices.Delete(all, i, i+1)
		}
	}
	for len(all) > 1 {
		trial := r.rec
		trial.Savepoints = all
		if _, err := trial.encode(); err == nil {
			break
		}
		dropped = append(dropped, all[0])
		all = all[1:]
	}
	r.rec.Savepoints = all
	r.changedLocked()
	return dropped
}

// forgetSavepoints drops the savepoints at paths (deleted) from the state.
func (r *recorder) forgetSavepoints(paths ...string) {
	if r == nil || len(paths) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.Savepoints = slices.DeleteFunc(slices.Clone(r.rec.Savepoints), func(sp keptSavepoint) bool { return slices.Contains(paths, sp.Path) })
	r.changedLocked()
}

// savepoints are the savepoints kept, oldest first.
func (r *recorder) savepoints() []keptSavepoint {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.rec.Savepoints)
}

// snapshot is the latest completed checkpoint seen (and what earlier attempts kept); empty for nil.
func (r *recorder) snapshot() recovery {
	if r == nil {
		return recovery{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.rec
	rec.Restores = nil
	return rec
}

// run saves what saw kept until ctx ends.
func (r *recorder) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.notify:
		}
		r.saveOnce(ctx)
	}
}

// saveOnce saves the latest state if it is newer than the last saved.
func (r *recorder) saveOnce(ctx context.Context) {
	r.mu.Lock()
	rec, dirty := r.rec, r.dirty
	r.rec.Restores = append([]restore(nil), r.rec.Restores...)
	r.dirty = false
	r.mu.Unlock()
	if !dirty {
		return
	}
	data, err := rec.encode()
	if err == nil {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = r.store.Save(c, data)
		cancel()
	}
	r.mu.Lock()
	// The events tell of checkpoints; a state of savepoints alone (none completed yet) is saved
	// without a word, and a failure to save it is the savepoint's caller's warning too.
	told, first := r.failing, !r.savedOnce && err == nil && rec.Path != ""
	r.failing = err != nil
	r.savedOnce = r.savedOnce || (err == nil && rec.Path != "")
	r.mu.Unlock()
	what := fmt.Sprintf("checkpoint %d", rec.Checkpoint)
	if rec.Path == "" {
		what = fmt.Sprintf("the record of %d savepoints", len(rec.Savepoints))
	}
	switch {
	case first:
		r.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf(
			"checkpoint %d (%s) is kept in the staging directory for a later AM attempt; so is each newer one", rec.Checkpoint, rec.Path)})
	case err != nil && !told && ctx.Err() == nil:
		r.emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
			"%s could not be kept for a later AM attempt (%v): a new attempt would start the job from an older checkpoint or savepoint; retried at the next checkpoint or savepoint", what, err)})
	case err == nil && told:
		r.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s is kept for a later AM attempt again", what)})
	}
}

// details are the attempts' starts, newest last.
func (r *recorder) details() []contract.Detail {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var d []contract.Detail
	for _, x := range r.rec.Restores {
		v := "started from nothing (no checkpoint kept)"
		if x.Savepoint {
			v = "restored savepoint " + x.Path
		} else if x.Path != "" {
			v = fmt.Sprintf("restored checkpoint %d, %s", x.Checkpoint, x.Path)
		}
		d = append(d, contract.Detail{Name: fmt.Sprintf("AM attempt %d", x.Attempt), Value: v})
	}
	return d
}

// The retention yarn-am gives a checkpointing job (checkpointDefaults): the AM reads the latest
// completed checkpoint every contract.FrameworkDetailsInterval, so the one it kept may be that many
// checkpoints behind Flink's latest when the AM is lost; Flink keeps the newest num-retained and
// deletes older ones. Retaining what completes in two of the AM's reads, plus one, keeps the kept
// one on disk.
const (
	minRetained = 2
	maxRetained = 10
)

// checkpointDefaults gives a checkpointing application cluster (execution.checkpointing.interval set)
// the settings a restore after an AM loss needs, where the configuration has none of its own:
// RETAIN_ON_CANCELLATION, since a JobManager stopped with its AM ends the job SUSPENDED, which deletes
// the checkpoints by Flink's default; and num-retained (retained), so the checkpoint the AM last
// saw is not deleted yet, raised to that when the configuration keeps fewer. It writes what it set
// to out.
func checkpointDefaults(conf *flinkdist.Config, out io.Writer) {
	iv, _ := conf.Get(keyCheckpointInterval)
	interval, err := flinkDuration(iv)
	if err != nil || interval <= 0 {
		return
	}
	if _, set := conf.Get(keyCheckpointRetention); !set {
		conf.Set(keyCheckpointRetention, retainOnCancellation)
		fmt.Fprintf(out, "yarn-am flink-jobmanager: %s: %s (default of yarn-am: a later AM attempt restores the job from its checkpoints)\n", keyCheckpointRetention, retainOnCancellation)
	}
	n := retained(interval)
	v, set := firstOf(conf, keyCheckpointsRetained, keyCheckpointsRetainedOld)
	if !set {
		conf.Set(keyCheckpointsRetained, strconv.Itoa(n))
		fmt.Fprintf(out, "yarn-am flink-jobmanager: %s: %d (default of yarn-am for a checkpoint every %s: the AM reads the latest every %s)\n", keyCheckpointsRetained, n, interval, contract.FrameworkDetailsInterval)
		return
	}
	// Fewer retained than the AM's reads need: Flink would delete the checkpoint the AM kept before a
	// later attempt could start from it. Raised, under whichever names the job set.
	if have, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && have < n {
		for _, k := range []string{keyCheckpointsRetained, keyCheckpointsRetainedOld} {
			if _, ok := conf.Get(k); ok {
				conf.Set(k, strconv.Itoa(n))
			}
		}
		fmt.Fprintf(out, "yarn-am flink-jobmanager: %s: %d raised to %d (for a checkpoint every %s, the AM reads the latest every %s: a later AM attempt restores the job from one of them)\n",
			keyCheckpointsRetained, have, n, interval, contract.FrameworkDetailsInterval)
	}
}

// retained is num-retained for a checkpoint every interval.
func retained(interval time.Duration) int {
	window := 2 * contract.FrameworkDetailsInterval
	n := int((window+interval-1)/interval) + 1
	return min(max(n, minRetained), maxRetained)
}

// applyRecovery points the job at the checkpoint a later AM attempt starts it from.
func applyRecovery(conf *flinkdist.Config, path string, out io.Writer) {
	if path == "" {
		return
	}
	conf.Set(keyRestore, path)
	if _, set := conf.Get(keyStateRecoveryPath); set {
		conf.Set(keyStateRecoveryPath, path)
	}
	fmt.Fprintf(out, "yarn-am flink-jobmanager: the job starts from the checkpoint the earlier AM attempt kept: %s\n", path)
}
