package flink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// This file takes savepoints of an application cluster's job while it runs
// (docs/flink.md#savepoints-on-a-schedule): every [flink] savepoint-interval into the job's
// state.savepoints.dir, deleting the oldest the schedule took beyond savepoints-kept, and one on
// demand (yarn-am savepoint, framework.AM.OnKeepState). Each is kept in the framework's state
// (recover.go) so that a later start restores the newest of it and the latest checkpoint
// (pickRestore).

// The [flink] keys of the schedule.
const (
	keySavepointsKept = "savepoints-kept"
	// defaultSavepointsKept is savepoints-kept's default.
	defaultSavepointsKept = 3
	// maxSavepointsKept bounds the count: each kept savepoint is a path in the framework's state,
	// which is at most framework.MaxState bytes.
	maxSavepointsKept    = 20
	minSavepointInterval = time.Second
)

// savepointTimeout bounds one scheduled savepoint: Flink's own default checkpoint timeout
// (execution.checkpointing.timeout, 10 min).
const savepointTimeout = 10 * time.Minute

// readSavepointSchedule reads savepoint-interval and savepoints-kept.
func readSavepointSchedule(t *jobfile.Table, f *flinkSpec) {
	f.SavepointsKept = defaultSavepointsKept
	if d, set := t.Duration(keySavepointInterval, minSavepointInterval, `"1h" or "30m"`); set {
		f.SavepointInterval = d
		if f.Jar == "" {
			t.Problem("flink.%s = %q: a session cluster (no flink.jar) runs the jobs others submit, whose savepoints are theirs to take; leave the key out or add jar", keySavepointInterval, d)
		}
	}
	if n, set := t.Int(keySavepointsKept, 1, maxSavepointsKept, " (how many of the savepoints flink.savepoint-interval took are kept; older ones are deleted)"); set {
		f.SavepointsKept = int(n)
		if !t.Has(keySavepointInterval) {
			t.Problem("flink.%s = %d without flink.%s: only the schedule's savepoints are counted and deleted; set the interval (\"1h\") or leave the count out", keySavepointsKept, n, keySavepointInterval)
		}
	}
}

// checkSavepointSchedule refuses a schedule without a directory to write to. A provided home's
// configuration is on HDFS, out of the client's sight: the AM tells of a missing directory at its
// start.
func (l *layered) checkSavepointSchedule() error {
	if l.spec.SavepointInterval == 0 || l.home == nil {
		return nil
	}
	if v, ok := l.conf.Get(keySavepointsDir); ok && strings.TrimSpace(v) != "" {
		return nil
	}
	return fmt.Errorf("flink.%s = %q needs a savepoint directory: set %s in [flink.config] or with -D (a directory the JobManager can write, e.g. hdfs:///flink/savepoints), where the schedule's savepoints go",
		keySavepointInterval, l.spec.SavepointInterval, keySavepointsDir)
}

// savepointSchedule takes an application cluster's savepoints. onDemand may run in any goroutine; the
// fields below now are run's alone.
type savepointSchedule struct {
	rest     *flinkdist.REST
	emit     func(contract.Event)
	rec      *recorder       // keeps them for a later start; nil: not kept
	files    framework.Files // the staging directory's filesystem (deletes on HDFS); nil: none
	jm       *jobManager     // nil (tests): its ports are known
	dir      string          // state.savepoints.dir ("" = none)
	interval time.Duration   // 0: no schedule
	kept     int
	now      func() time.Time
	// stopping is set while yarn-am stop takes its savepoint: the schedule takes none then, which
	// would fail once the job ends (any goroutine).
	stopping atomic.Bool

	failing    string            // the last failure of a scheduled savepoint told ("" = none)
	failures   int               // scheduled savepoints failed since the last success
	toldDelete map[string]string // a failed delete's path → its error, told once
}

// startSavepoints gives an application cluster yarn-am savepoint and, with an interval, its
// schedule (a goroutine until ctx ends), which a stop (fw.OnStop) pauses.
func startSavepoints(ctx context.Context, fw *framework.AM, sp *savepointSchedule) {
	fw.OnKeepState = func(ctx context.Context, r framework.StateRequest) (framework.Kept, error) {
		path, err := sp.onDemand(ctx, r.Dir)
		if err != nil {
			return framework.Kept{}, err
		}
		return framework.Kept{What: keptName, Where: path}, nil
	}
	if stop := fw.OnStop; stop != nil {
		fw.OnStop = func(ctx context.Context, r framework.StateRequest) (framework.Kept, error) {
			sp.stopping.Store(true)
			res, err := stop(ctx, r)
			if err != nil {
				sp.stopping.Store(false) // the job runs on
			}
			return res, err
		}
	}
	if sp.interval <= 0 {
		return
	}
	if sp.dir == "" {
		sp.emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
			"flink.%s = %q: no savepoints are taken: %s is not set (set it in [flink.config] or with -D)", keySavepointInterval, sp.interval, keySavepointsDir)})
		return
	}
	go sp.run(ctx)
}

// run takes a savepoint every interval until ctx ends; a savepoint that takes longer than the
// interval delays the next (the ticker drops the ticks in between).
func (s *savepointSchedule) run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.take(ctx)
		s.prune(ctx)
	}
}

// take takes one scheduled savepoint of the running job. A job that is not running, or whose tasks
// are not all running yet (Flink refuses then), is left to the next tick without a word: the watch
// tells of its state.
func (s *savepointSchedule) take(ctx context.Context) {
	if s.stopping.Load() {
		return
	}
	if s.jm != nil {
		if _, ok := s.jm.known(); !ok {
			return
		}
	}
	job, err := liveJob(ctx, s.rest, "to take a savepoint of", "")
	if err != nil || job.State != "RUNNING" {
		return
	}
	c, cancel := context.WithTimeout(ctx, savepointTimeout)
	defer cancel()
	start := s.now()
	loc, err := s.rest.Savepoint(c, job.ID, s.dir, savepointPoll)
	took := s.now().Sub(start).Round(time.Millisecond)
	switch {
	case err != nil && (strings.Contains(err.Error(), notAllRunning) || ctx.Err() != nil || s.stopping.Load()):
		return
	case err != nil:
		s.failures++
		if msg := err.Error(); msg != s.failing {
			s.failing = msg
			s.emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
				"%s: the scheduled savepoint in %s failed after %s: %v; tried again every %s (flink.%s)", jobName(job), s.dir, took, err, s.interval, keySavepointInterval)})
		}
		return
	}
	if s.failing != "" {
		s.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s: scheduled savepoints are written again, after %d failed", jobName(job), s.failures)})
		s.failing, s.failures = "", 0
	}
	s.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s: scheduled savepoint written to %s in %s (flink.%s = %s)", jobName(job), loc, took, keySavepointInterval, s.interval)})
	s.keep(keptSavepoint{Path: loc, JobID: job.ID, At: s.now().UnixMilli(), Scheduled: true})
}

// keep records a savepoint taken, and says which ones the state could not keep any more.
func (s *savepointSchedule) keep(sp keptSavepoint) {
	for _, d := range s.rec.tookSavepoint(sp) {
		why := "the record of savepoints would outgrow the framework's state"
		if !d.Scheduled {
			why = fmt.Sprintf("only the newest %d taken on demand are kept in it; it is never deleted", maxOnDemand)
		}
		s.emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
			"savepoint %s is no longer recorded for a later start (%s): neither restored nor deleted by yarn-am; delete it yourself when it is not needed", d.Path, why)})
	}
}

// errNotRemovable: a recorded savepoint the AM will not delete (not on a filesystem it reaches, or
// not named as Flink names a savepoint).
var errNotRemovable = errors.New("not deleted by yarn-am")

// prune deletes the oldest savepoints the schedule took beyond kept, and forgets those deleted
// (or gone already). A failed delete stays recorded and is tried again at the next tick.
func (s *savepointSchedule) prune(ctx context.Context) {
	var sched []keptSavepoint
	for _, sp := range s.rec.savepoints() {
		if sp.Scheduled {
			sched = append(sched, sp)
		}
	}
	if len(sched) <= s.kept {
		return
	}
	slices.SortStableFunc(sched, func(a, b keptSavepoint) int { return cmp.Compare(a.At, b.At) })
	var gone []string
	for _, sp := range sched[:len(sched)-s.kept] {
		err := s.remove(ctx, sp.Path)
		switch {
		case err == nil:
			gone = append(gone, sp.Path)
			s.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("scheduled savepoint %s deleted (flink.%s = %d: the newest %d are kept)", sp.Path, keySavepointsKept, s.kept, s.kept)})
		case errors.Is(err, fs.ErrNotExist):
			gone = append(gone, sp.Path)
			s.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("scheduled savepoint %s was gone already (flink.%s = %d: it would have been deleted)", sp.Path, keySavepointsKept, s.kept)})
		case errors.Is(err, errNotRemovable):
			gone = append(gone, sp.Path)
			s.emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
				"scheduled savepoint %s is beyond flink.%s = %d but %v; delete it yourself", sp.Path, keySavepointsKept, s.kept, err)})
		case ctx.Err() != nil:
			return
		default:
			if s.toldDelete == nil {
				s.toldDelete = map[string]string{}
			}
			if s.toldDelete[sp.Path] != err.Error() {
				s.toldDelete[sp.Path] = err.Error()
				s.emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf(
					"scheduled savepoint %s, beyond flink.%s = %d, could not be deleted: %v; tried again every %s", sp.Path, keySavepointsKept, s.kept, err, s.interval)})
			}
		}
	}
	for _, p := range gone {
		delete(s.toldDelete, p)
	}
	s.rec.forgetSavepoints(gone...)
}

// remove deletes the savepoint at uri: on the local disk (the JobManager runs in the AM's
// container) or on the staging directory's NameNode, and only a directory named as Flink names a
// savepoint (savepoint-<job>-<random>), whatever the record says.
func (s *savepointSchedule) remove(ctx context.Context, uri string) error {
	files, p := filesOf(uri, s.files)
	if files == nil {
		return fmt.Errorf("%w: it is on a filesystem the AM does not reach (the local disk, and the staging directory's NameNode %s)", errNotRemovable, fsName(s.files))
	}
	if !strings.HasPrefix(path.Base(p), "savepoint-") || path.Clean(p) != p || p == "/" {
		return fmt.Errorf("%w: %s is not named as Flink names a savepoint (savepoint-…)", errNotRemovable, uri)
	}
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return files.Remove(c, p)
}

func fsName(f framework.Files) string {
	if f == nil {
		return "none"
	}
	return f.FS()
}

// onDemand is framework.AM.OnKeepState's (yarn-am savepoint): a savepoint of the running job in dir
// ("" = state.savepoints.dir), the job running on; recorded for a later start, never deleted by the
// schedule. A job whose tasks are not all running yet is asked again every second until ctx ends.
func (s *savepointSchedule) onDemand(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		dir = s.dir
	}
	if dir == "" {
		return "", fmt.Errorf("no savepoint directory: give one with yarn-am savepoint --dir DIR (a directory the JobManager can write, e.g. hdfs:///flink/savepoints), or set %s in [flink.config]", keySavepointsDir)
	}
	job, err := liveJob(ctx, s.rest, "to take a savepoint of", "")
	if err != nil {
		return "", err
	}
	s.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s: taking a savepoint in %s (yarn-am savepoint); the job runs on", jobName(job), dir)})
	start := s.now()
	loc, err := untilAllRunning(ctx, func() (string, error) { return s.rest.Savepoint(ctx, job.ID, dir, savepointPoll) })
	var starting *stillStarting
	switch {
	case errors.As(err, &starting):
		return "", err
	case err != nil:
		s.emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf("%s: the savepoint in %s failed: %v", jobName(job), dir, err)})
		return "", err
	}
	s.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s: savepoint written to %s in %s (yarn-am savepoint)", jobName(job), loc, s.now().Sub(start).Round(time.Millisecond))})
	s.keep(keptSavepoint{Path: loc, JobID: job.ID, At: s.now().UnixMilli()})
	return loc, nil
}
