package flink

import (
	"context"
	"encoding/json"
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
	"github.com/yarn-am/yarn-am/internal/text"
)

// This file lets a Flink job survive the loss of its ApplicationMaster without ZooKeeper
// (docs/flink.md#when-the-applicationmaster-is-lost): the AM keeps the job's latest completed
// checkpoint, as its REST API reports it, in the application's staging directory
// (framework.AMStart.State), and a later attempt's JobManager starts the job from it through Flink's
// own restore key. The JobManager keeps its checkpoints when it is stopped (checkpointDefaults), so
// the kept path is still there.

// EnvRecover is the checkpoint a later AM attempt's JobManager starts its job from, set by the AM in
// the driver's environment only (flink-jobmanager sets Flink's restore key to it).
const EnvRecover = "YARN_AM_FLINK_RECOVER"

// Flink 1.20's checkpointing keys yarn-am reads or gives a default (CheckpointingOptions,
// StateRecoveryOptions); each deprecated key beside its current one.
const (
	KeyCheckpointInterval  = "execution.checkpointing.interval"
	KeyCheckpointRetention = "execution.checkpointing.externalized-checkpoint-retention"
	KeyCheckpointsRetained = "execution.checkpointing.num-retained"
	keyCheckpointsRetained = "state.checkpoints.num-retained"
	KeyCheckpointDir       = "execution.checkpointing.dir"
	keyCheckpointDir       = "state.checkpoints.dir"
	// keyStateRecoveryPath is the current name of KeyRestore (1.20 and 2.x): when both are set Flink reads
	// this one, so a recovery sets it too when the configuration has it.
	keyStateRecoveryPath = "execution.state-recovery.path"
	// RetainOnCancellation keeps a job's checkpoints when it is cancelled or its JobManager stops
	// (the job SUSPENDED): Flink's default, NO_EXTERNALIZED_CHECKPOINTS, deletes them then.
	RetainOnCancellation = "RETAIN_ON_CANCELLATION"
)

// notAddressable is the external path Flink reports for a checkpoint kept in the JobManager's memory
// (no checkpoint directory): nothing a later JobManager could start from.
const notAddressable = "<checkpoint-not-externally-addressable>"

// recoveryVersion is the layout of recovery; a state of another layout is not used.
const recoveryVersion = 1

// maxRestores is how many attempts' starts the state remembers (status shows them).
const maxRestores = 5

// recovery is what the AM keeps of a Flink job across its attempts.
type recovery struct {
	Version int `json:"v"`
	// The latest completed checkpoint an attempt saw: its job, id and path (Flink's external_path).
	JobID      string `json:"job,omitempty"`
	Checkpoint int64  `json:"checkpoint,omitempty"`
	Path       string `json:"path,omitempty"`
	Attempt    int    `json:"attempt,omitempty"` // the attempt that saw it
	// CheckpointAt is when it completed (Flink's latest ack, Unix ms); 0: not recorded.
	CheckpointAt int64 `json:"checkpoint_at,omitempty"`
	// Savepoints are those the AM took (savepoints.go): on its schedule, which deletes the oldest
	// beyond flink.savepoints-kept, and on demand; oldest first.
	Savepoints []keptSavepoint `json:"savepoints,omitempty"`
	// Restores are the later attempts' starts, oldest first, at most maxRestores.
	Restores []restore `json:"restores,omitempty"`
}

// restore is how one attempt started the job: from Checkpoint (or a savepoint) at Path, or from
// nothing (Path "").
type restore struct {
	Attempt    int    `json:"attempt"`
	Checkpoint int64  `json:"checkpoint,omitempty"`
	Path       string `json:"path,omitempty"`
	Savepoint  bool   `json:"savepoint,omitempty"`
}

// keptSavepoint is a savepoint the AM took: where, of which job, when it completed (Unix ms, the
// AM's clock), and whether the schedule took it (only those are ever deleted).
type keptSavepoint struct {
	Path      string `json:"path"`
	JobID     string `json:"job,omitempty"`
	At        int64  `json:"at"`
	Scheduled bool   `json:"scheduled,omitempty"`
}

// loadRecovery reads the kept state; nil, nil when there is none (or of another layout).
func loadRecovery(ctx context.Context, store framework.StateStore) (*recovery, error) {
	data, err := store.Load(ctx)
	if err != nil || data == nil {
		return nil, err
	}
	if len(data) > framework.MaxState {
		return nil, fmt.Errorf("the kept Flink state is %d bytes; at most %d are read", len(data), framework.MaxState)
	}
	var r recovery
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("the kept Flink state is not readable: %w", err)
	}
	if r.Version != recoveryVersion {
		return nil, nil
	}
	return &r, nil
}

// encode marshals r within framework.MaxState (a path of Flink's is far shorter; a longer one is
// not kept).
func (r recovery) encode() ([]byte, error) {
	r.Version = recoveryVersion
	data, err := json.Marshal(r)
	if err == nil && len(data) > framework.MaxState {
		err = fmt.Errorf("the Flink state to keep is %d bytes (checkpoint path %s); at most %d", len(data), text.Quote(r.Path), framework.MaxState)
	}
	return data, err
}

// recoverAtStart is what a later attempt (s.Attempt > 1) does before its JobManager starts: it reads
// what the earlier attempts kept and returns the checkpoint to start from ("" = none) and the state
// the recorder goes on from; it emits the event that says which, and keeps this attempt's start.
func recoverAtStart(ctx context.Context, spec *Spec, conf *flinkdist.Config, s framework.AMStart, emit func(contract.Event)) (string, recovery) {
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
		emit(contract.Event{Type: EventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
			"AM attempt %d: a new session cluster starts; the jobs submitted to the earlier attempt's are not restored (a session cluster's jobs are not kept across AM attempts)", s.Attempt)})
		return "", rec
	case err != nil:
		emit(contract.Event{Type: EventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
			"AM attempt %d: the Flink job's state was not kept: the earlier attempt's record could not be read (%v); the job starts %s", s.Attempt, err, startsFrom(spec))})
	case rec.Path == "" && len(rec.Savepoints) == 0:
		emit(contract.Event{Type: EventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
			"AM attempt %d: the Flink job's state was not kept: %s; the job starts %s", s.Attempt, whyNothingKept(conf), startsFrom(spec))})
	default:
		pick := pickRestore(ctx, rec, s.Files)
		if pick.Path == "" {
			emit(contract.Event{Type: EventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
				"AM attempt %d: no kept checkpoint of the Flink job is left: %s; the job starts %s", s.Attempt, pick.Why, startsFrom(spec))})
			break
		}
		from, fromID, fromSavepoint = pick.Path, pick.Checkpoint, pick.Savepoint
		emit(contract.Event{Type: EventJob, Message: fmt.Sprintf(
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
func startsFrom(spec *Spec) string {
	if p := spec.Config[KeyRestore]; p != "" {
		return "again from the savepoint it was submitted with (" + p + ")"
	}
	return "from nothing"
}

// whyNothingKept says why an earlier attempt kept no checkpoint.
func whyNothingKept(conf *flinkdist.Config) string {
	iv, _ := conf.Get(KeyCheckpointInterval)
	_, dir := firstOf(conf, KeyCheckpointDir, keyCheckpointDir)
	switch {
	case strings.TrimSpace(iv) == "":
		return "the earlier attempt saw no completed checkpoint (" + KeyCheckpointInterval + " is not set: checkpointing is off, unless the job turns it on itself)"
	case !dir:
		return "the earlier attempt saw no checkpoint written to a directory (" + KeyCheckpointDir + " is not set: checkpoints are kept in the JobManager's memory)"
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
		r.emit(contract.Event{Type: EventJob, Message: fmt.Sprintf(
			"checkpoint %d (%s) is kept in the staging directory for a later AM attempt; so is each newer one", rec.Checkpoint, rec.Path)})
	case err != nil && !told && ctx.Err() == nil:
		r.emit(contract.Event{Type: EventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
			"%s could not be kept for a later AM attempt (%v): a new attempt would start the job from an older checkpoint or savepoint; retried at the next checkpoint or savepoint", what, err)})
	case err == nil && told:
		r.emit(contract.Event{Type: EventJob, Message: fmt.Sprintf("%s is kept for a later AM attempt again", what)})
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
	iv, _ := conf.Get(KeyCheckpointInterval)
	interval, err := flinkDuration(iv)
	if err != nil || interval <= 0 {
		return
	}
	if _, set := conf.Get(KeyCheckpointRetention); !set {
		conf.Set(KeyCheckpointRetention, RetainOnCancellation)
		fmt.Fprintf(out, "yarn-am flink-jobmanager: %s: %s (default of yarn-am: a later AM attempt restores the job from its checkpoints)\n", KeyCheckpointRetention, RetainOnCancellation)
	}
	n := retained(interval)
	v, set := firstOf(conf, KeyCheckpointsRetained, keyCheckpointsRetained)
	if !set {
		conf.Set(KeyCheckpointsRetained, strconv.Itoa(n))
		fmt.Fprintf(out, "yarn-am flink-jobmanager: %s: %d (default of yarn-am for a checkpoint every %s: the AM reads the latest every %s)\n", KeyCheckpointsRetained, n, interval, contract.FrameworkDetailsInterval)
		return
	}
	// Fewer retained than the AM's reads need: Flink would delete the checkpoint the AM kept before a
	// later attempt could start from it. Raised, under whichever names the job set.
	if have, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && have < n {
		for _, k := range []string{KeyCheckpointsRetained, keyCheckpointsRetained} {
			if _, ok := conf.Get(k); ok {
				conf.Set(k, strconv.Itoa(n))
			}
		}
		fmt.Fprintf(out, "yarn-am flink-jobmanager: %s: %d raised to %d (for a checkpoint every %s, the AM reads the latest every %s: a later AM attempt restores the job from one of them)\n",
			KeyCheckpointsRetained, have, n, interval, contract.FrameworkDetailsInterval)
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
	conf.Set(KeyRestore, path)
	if _, set := conf.Get(keyStateRecoveryPath); set {
		conf.Set(keyStateRecoveryPath, path)
	}
	fmt.Fprintf(out, "yarn-am flink-jobmanager: the job starts from the checkpoint the earlier AM attempt kept: %s\n", path)
}
