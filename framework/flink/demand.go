package flink

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// This file sizes a [flink] job's TaskManagers from Flink's own slot demand
// (docs/flink.md#taskmanagers-on-demand): the AM reads what the JobManager's jobs need through its
// REST API, declares as many TaskManagers as those slots take (within taskexecutor.min-instances
// and instances) through framework.AMStart.Scale, and releases a TaskManager only once it has been
// idle, its slots all free, for resourcemanager.taskmanager-timeout: after the job rescaled away
// from it, never under a running task.

// The values of [flink] taskmanagers.
const (
	taskManagersFixed  = "fixed"  // taskexecutor.instances, or what yarn-am scale sets
	taskManagersDemand = "demand" // what the job's slots need
)

// taskManagersValues are the valid values of [flink] taskmanagers, the default first.
var taskManagersValues = []string{taskManagersFixed, taskManagersDemand}

// keyTaskManagerTimeout is Flink's key of how long a TaskManager stays idle before it is released
// (its default: defaultTaskManagerTimeout); in demand mode the AM releases by it.
const keyTaskManagerTimeout = "resourcemanager.taskmanager-timeout"

// defaultTaskManagerTimeout is Flink's default of keyTaskManagerTimeout.
const defaultTaskManagerTimeout = 30 * time.Second

// demandEvery is how often the AM reads the demand: often enough that a rescale's TaskManagers are
// asked for within seconds, rarely enough to cost the JobManager nothing.
const demandEvery = 2 * time.Second

// readTaskManagers reads [flink] taskmanagers; taskexecutor.min-instances without a gang is its
// lower bound (jobfile.TableInfo.MinInstances) and means nothing in fixed mode.
func readTaskManagers(t *jobfile.Table, j *jobfile.Job) string {
	v, set := t.String("taskmanagers")
	if !set {
		v = taskManagersFixed
	} else if !slices.Contains(taskManagersValues, v) {
		t.Problem("flink.taskmanagers = %q: want %q (the default: taskexecutor.instances TaskManagers, or what yarn-am scale sets) or %q (as many as the job's slots need, up to taskexecutor.instances)",
			bounded(v), taskManagersFixed, taskManagersDemand)
		return taskManagersFixed
	}
	if te := j.TaskExecutor; v != taskManagersDemand && te.MinInstancesSet && !te.Gang {
		t.Problem("taskexecutor.min-instances = %d is set but flink.taskmanagers is not %q: it is the fewest TaskManagers the demand keeps; set taskmanagers = %q, or remove min-instances",
			te.MinInstances, taskManagersDemand, taskManagersDemand)
	}
	return v
}

// checkDemand refuses what demand mode cannot read: a taskmanager-timeout that is not a duration.
func checkDemand(c *flinkdist.Config) error {
	_, err := taskManagerTimeout(c)
	return err
}

// taskManagerTimeout reads keyTaskManagerTimeout as Flink does (a number with a unit, or
// milliseconds), defaultTaskManagerTimeout when unset.
func taskManagerTimeout(c *flinkdist.Config) (time.Duration, error) {
	v, set := c.Get(keyTaskManagerTimeout)
	if !set {
		return defaultTaskManagerTimeout, nil
	}
	d, err := flinkDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s = %q: %v; want a duration such as \"30 s\" (Flink's default), \"5 s\" or \"1 min\"", keyTaskManagerTimeout, bounded(v), err)
	}
	return d, nil
}

// slotsNeeded is what a job's vertices need of slots: the vertices of one slot sharing group share a
// slot per subtask, so a group needs its largest parallelism, and the job the sum over its groups.
// A vertex with no group ("" ) is in the default group, Flink's when the job names none.
func slotsNeeded(parallelism map[string]int, group map[string]string) int {
	largest := map[string]int{}
	for v, p := range parallelism {
		g := group[v]
		largest[g] = max(largest[g], p)
	}
	n := 0
	for _, p := range largest {
		n += p
	}
	return n
}

// wantedTaskManagers is the number of TaskManagers slots take at perTM slots each, within lo..hi.
func wantedTaskManagers(slots, perTM, lo, hi int) int {
	perTM = max(perTM, 1)
	return min(max((slots+perTM-1)/perTM, lo), hi)
}

// demand is the AM's side of demand mode. Only its poller (run) touches its fields below mu but
// through onScale's reads of the immutable ones; view is read by details.
type demand struct {
	rest      *flinkdist.REST
	emit      func(contract.Event)
	scale     func(to int, stopFirst []string, why string) error
	instances func() int
	now       func() time.Time

	perTM, lo, hi int
	adaptive      bool // jobmanager.scheduler adaptive (or reactive mode): its bounds are the demand
	session       bool // every running job counts, not the application's one
	idleTimeout   time.Duration

	idleSince map[string]time.Time // TaskManager (container) id → since when all its slots are free
	released  map[string]bool      // TaskManagers handed to Scale already: never named twice
	told      string               // the last wait told of, so it is told once

	mu   sync.Mutex
	view demandView
}

// demandView is what details shows of the demand.
type demandView struct {
	known         bool
	slots, wanted int
	waiting       string // why a lower demand is not carried out yet
	failed        string // why the last read failed (the JobManager not up yet, ...)
}

// newDemand is the demand of a job in demand mode, as the AM starts it: its bounds (min-instances,
// else 1, to instances), the slots per TaskManager and the scheduler from the configuration the
// processes will have.
func newDemand(j *jobfile.Job, conf *flinkdist.Config, rest *flinkdist.REST, s framework.AMStart) (*demand, error) {
	if s.Scale == nil || s.Instances == nil {
		return nil, fmt.Errorf("flink: taskmanagers = %q needs an AM that lets its framework scale (framework.AMStart.Scale)", taskManagersDemand)
	}
	timeout, err := taskManagerTimeout(conf)
	if err != nil {
		return nil, err
	}
	perTM := 1
	if v, ok := conf.Get(keySlots); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
			perTM = n
		}
	}
	te := j.TaskExecutor
	lo := 1
	if te.MinInstancesSet {
		lo = te.MinInstances
	}
	spec := specOf(j)
	return &demand{rest: rest, emit: s.Emit, scale: s.Scale, instances: s.Instances, now: time.Now,
		perTM: perTM, lo: min(lo, te.Instances), hi: te.Instances, adaptive: adapts(conf), session: spec.Jar == "",
		idleTimeout: timeout}, nil
}

// run reads the demand every demandEvery until ctx ends; a JobManager that is not up yet, or a job
// not running yet, is read again at the next round.
func (d *demand) run(ctx context.Context) {
	t := time.NewTicker(demandEvery)
	defer t.Stop()
	for {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := d.poll(c)
		cancel()
		d.mu.Lock()
		d.view.failed = "" // the details say why the demand is not read, never silently stale
		if err != nil && ctx.Err() == nil {
			d.view.failed = err.Error()
		}
		d.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll reads the slots the jobs need and moves the declared count towards the TaskManagers they take.
func (d *demand) poll(ctx context.Context) error {
	jobs, err := d.liveJobs(ctx)
	if err != nil || jobs == nil {
		return err
	}
	slots := 0
	for _, j := range jobs {
		n, err := d.jobSlots(ctx, j.ID)
		if err != nil {
			return err
		}
		slots += n
	}
	want := wantedTaskManagers(slots, d.perTM, d.lo, d.hi)
	have := d.instances()
	d.setView(demandView{known: true, slots: slots, wanted: want})
	why := fmt.Sprintf("Flink demand: %d slots → %d TaskManagers", slots, want)
	switch {
	case have == 0 && d.lo > 0: // the AM does not run yet
		return nil
	case want > have:
		d.told = ""
		return d.scale(want, nil, why)
	case want < have:
		return d.release(ctx, why, have-want)
	}
	d.told = ""
	return nil
}

// liveJobs are the jobs whose slots count: a session cluster's every job that has not ended, an
// application's newest one; nil (no error) when there is none yet.
func (d *demand) liveJobs(ctx context.Context) ([]flinkdist.Job, error) {
	all, err := d.rest.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	var live []flinkdist.Job
	for _, j := range all {
		if !flinkdist.Terminal(j.State) && j.State != "INITIALIZING" {
			live = append(live, j)
		}
	}
	if d.session {
		if live == nil {
			live = []flinkdist.Job{}
		}
		return live, nil
	}
	if len(live) == 0 {
		return nil, nil
	}
	return []flinkdist.Job{current(live)}, nil
}

// jobSlots reads one job's slot demand: the adaptive scheduler's upper bounds, else the parallelism
// of its vertices, by slot sharing group.
func (d *demand) jobSlots(ctx context.Context, jobID string) (int, error) {
	detail, err := d.rest.JobDetail(ctx, jobID)
	if err != nil {
		return 0, err
	}
	par := map[string]int{}
	group := map[string]string{}
	for _, v := range detail.Vertices {
		par[v.ID], group[v.ID] = v.Parallelism, v.SlotSharingGroup
	}
	if d.adaptive {
		bounds, err := d.rest.ResourceRequirements(ctx, jobID)
		if err != nil {
			return 0, err
		}
		par = map[string]int{}
		for v, b := range bounds {
			par[v] = b.Upper
		}
	}
	return slotsNeeded(par, group), nil
}

// release lowers the count by up to fewer TaskManagers, naming those idle for idleTimeout; while
// none is, it waits (and says so once).
func (d *demand) release(ctx context.Context, why string, fewer int) error {
	tms, err := d.rest.TaskManagers(ctx)
	if err != nil {
		return err
	}
	now := d.now()
	if d.idleSince == nil {
		d.idleSince, d.released = map[string]time.Time{}, map[string]bool{}
	}
	seen := map[string]bool{}
	var ready []string
	for _, tm := range tms {
		seen[tm.ID] = true
		if tm.Slots == 0 || tm.FreeSlots < tm.Slots {
			delete(d.idleSince, tm.ID)
			continue
		}
		if _, ok := d.idleSince[tm.ID]; !ok {
			d.idleSince[tm.ID] = now
		}
		if now.Sub(d.idleSince[tm.ID]) >= d.idleTimeout && isContainerID(tm.ID) && !d.released[tm.ID] {
			ready = append(ready, tm.ID)
		}
	}
	for id := range d.idleSince {
		if !seen[id] {
			delete(d.idleSince, id)
		}
	}
	slices.SortFunc(ready, func(a, b string) int {
		return cmp.Or(d.idleSince[a].Compare(d.idleSince[b]), strings.Compare(a, b))
	})
	if n := min(fewer, len(ready)); n > 0 {
		for _, id := range ready[:n] {
			d.released[id] = true
		}
		d.told = ""
		have := d.instances()
		return d.scale(have-n, ready[:n], fmt.Sprintf("%s: %s idle for %s (%s) released", why, strings.Join(ready[:n], ", "), d.idleTimeout, keyTaskManagerTimeout))
	}
	wait := fmt.Sprintf("%s; %d fewer wait until TaskManagers are idle for %s (%s)", why, fewer, d.idleTimeout, keyTaskManagerTimeout)
	d.mu.Lock()
	d.view.waiting = wait
	d.mu.Unlock()
	if wait != d.told {
		d.emit(contract.Event{Type: eventJob, Message: wait})
		d.told = wait
	}
	return nil
}

// isContainerID: a TaskManager the AM can release by name is one whose resource id is its YARN
// container's (flink-taskmanager sets taskmanager.resource-id).
func isContainerID(id string) bool { return strings.HasPrefix(id, "container_") }

func (d *demand) setView(v demandView) {
	d.mu.Lock()
	d.view = v
	d.mu.Unlock()
}

// details are the demand's lines in the Flink details.
func (d *demand) details() []contract.Detail {
	d.mu.Lock()
	v := d.view
	d.mu.Unlock()
	if !v.known {
		out := []contract.Detail{{Name: "Demand", Value: "not read yet"}}
		if v.failed != "" {
			out[0].Value += ": " + v.failed
		}
		return out
	}
	out := []contract.Detail{{Name: "Slots needed", Value: strconv.Itoa(v.slots)},
		{Name: "TaskManagers wanted", Value: fmt.Sprintf("%d (%d slot(s) each, %d to %d)", v.wanted, d.perTM, d.lo, d.hi)}}
	if v.waiting != "" {
		out = append(out, contract.Detail{Name: "Demand waits", Value: v.waiting})
	}
	if v.failed != "" {
		out = append(out, contract.Detail{Name: "Demand not read", Value: v.failed})
	}
	return out
}

// onScale is OnScale in demand mode: yarn-am scale N of an adaptive-scheduler application sets its
// job's upper bounds to N TaskManagers' slots, so the job and the containers move together; more
// TaskManagers are asked for at once, fewer go once the job has rescaled away from them (a
// framework.Deferred). The demand sets the count of any other job.
func (d *demand) onScale(ctx context.Context, from, to int) error {
	switch {
	case d.session || !d.adaptive:
		return fmt.Errorf("flink: taskmanagers = %q sizes the TaskManagers from the job's slot demand; yarn-am scale sets a job's parallelism only with the adaptive scheduler (\"jobmanager.scheduler\" = \"adaptive\" in [flink.config], an application job), else change the job's parallelism, or run with taskmanagers = %q (docs/flink.md#taskmanagers-on-demand)", taskManagersDemand, taskManagersFixed)
	case to > d.hi:
		return fmt.Errorf("flink: %d → %d TaskManagers: taskexecutor.instances = %d is the most that taskmanagers = %q runs; give at most %d, or raise instances (docs/flink.md#taskmanagers-on-demand)", from, to, d.hi, taskManagersDemand, d.hi)
	case to < max(d.lo, 1):
		return fmt.Errorf("flink: %d → %d TaskManagers: taskmanagers = %q keeps at least %d (taskexecutor.min-instances, and one for the job); give at least %d (docs/flink.md#taskmanagers-on-demand)", from, to, taskManagersDemand, max(d.lo, 1), max(d.lo, 1))
	}
	jobs, err := d.liveJobs(ctx)
	if err != nil {
		return fmt.Errorf("flink: reading the job to rescale: %w", err)
	}
	if len(jobs) == 0 {
		return fmt.Errorf("flink: no running job to rescale yet; try again once it runs")
	}
	job := jobs[0]
	if err := d.setUpper(ctx, job.ID, to*d.perTM); err != nil {
		return fmt.Errorf("flink: setting the job's parallelism to %d: %w", to*d.perTM, err)
	}
	d.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s: parallelism upper bound set to %d (yarn-am scale to %d TaskManagers)", jobName(job), to*d.perTM, to)})
	if to > from {
		return nil
	}
	return &framework.Deferred{Message: fmt.Sprintf("the Flink job rescales to at most %d slots first; TaskManagers idle for %s (%s) are released after, down to %d", to*d.perTM, d.idleTimeout, keyTaskManagerTimeout, to)}
}

// setUpper sets every vertex's upper bound to upper (at most its max parallelism), its lower bound
// no higher.
func (d *demand) setUpper(ctx context.Context, jobID string, upper int) error {
	bounds, err := d.rest.ResourceRequirements(ctx, jobID)
	if err != nil {
		return err
	}
	maxPar := map[string]int{}
	if detail, err := d.rest.JobDetail(ctx, jobID); err == nil {
		for _, v := range detail.Vertices {
			maxPar[v.ID] = v.MaxParallelism
		}
	}
	out := make(map[string]flinkdist.Bounds, len(bounds))
	for _, v := range slices.Sorted(maps.Keys(bounds)) {
		u := upper
		if m := maxPar[v]; m > 0 {
			u = min(u, m)
		}
		out[v] = flinkdist.Bounds{Lower: max(min(bounds[v].Lower, u), 1), Upper: max(u, 1)}
	}
	return d.rest.SetResourceRequirements(ctx, jobID, out)
}
