package flink

import (
	"cmp"
	"context"
	"fmt"
	"io"
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
// and instances) through framework.AMStart.Scale, and releases a TaskManager only once Flink has let
// all its slots go: after the job rescaled away from it, never under a running task. What holds a
// freed TaskManager is the JobMaster's slot pool, which keeps a slot the job no longer uses for
// slot.idle.timeout (Flink's default 50 s) before it hands it back; in demand mode yarn-am makes that
// short (demandDefaults), and the AM releases the TaskManager on the next reads that find its slots
// free, or after resourcemanager.taskmanager-timeout when the job sets that key.

// The values of [flink] taskmanagers.
const (
	taskManagersFixed  = "fixed"  // taskexecutor.instances, or what yarn-am scale sets
	taskManagersDemand = "demand" // what the job's slots need
)

// taskManagersValues are the valid values of [flink] taskmanagers, the default first.
var taskManagersValues = []string{taskManagersFixed, taskManagersDemand}

// keyTaskManagerTimeout is Flink's key of how long a TaskManager stays idle before its resource
// manager releases it. Flink's standalone resource manager, which a JobManager under yarn-am runs,
// releases nothing by it; in demand mode the AM waits that long with its slots free only when the
// job sets the key (to keep idle TaskManagers for a while), else it releases a freed one at once.
const keyTaskManagerTimeout = "resourcemanager.taskmanager-timeout"

// keySlotIdleTimeout is Flink's key of how long the JobMaster's slot pool keeps a slot the job no
// longer uses before it hands it back to the resource manager (default: the heartbeat timeout, 50 s,
// so that a job restarting after a failure finds its slots where its local state is). A rescale down
// frees slots only after it: the TaskManagers the job left stay busy in Flink's view until then.
const keySlotIdleTimeout = "slot.idle.timeout"

// demandSlotIdleTimeout is yarn-am's slot.idle.timeout in demand mode (demandDefaults): a rescale's
// freed TaskManagers go within seconds, while a restart after a failure (restart delays of a
// second or so) still finds its slots.
const demandSlotIdleTimeout = "10 s"

// freedReads is how many reads in a row (demandEvery apart) must find a TaskManager's slots all free
// before the AM releases it with no taskmanager-timeout set: one read could catch a slot between a
// release and the next offer.
const freedReads = 2

// demandEvery is how often the AM reads the demand: often enough that a rescale's TaskManagers are
// asked for within seconds, rarely enough to cost the JobManager nothing.
const demandEvery = 2 * time.Second

// readTaskManagersMode reads [flink] taskmanagers; taskexecutor.min-instances without a gang is its
// lower bound (jobfile.TableInfo.MinInstances) and means nothing in fixed mode.
func readTaskManagersMode(t *jobfile.Table, j *jobfile.Job) string {
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
// milliseconds): how long the AM waits with a freed TaskManager; 0 when unset (release it once Flink
// freed its slots).
func taskManagerTimeout(c *flinkdist.Config) (time.Duration, error) {
	v, set := c.Get(keyTaskManagerTimeout)
	if !set {
		return 0, nil
	}
	d, err := flinkDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s = %q: %v; want a duration such as \"30 s\", \"5 s\" or \"1 min\" (unset: a TaskManager goes once Flink freed its slots)", keyTaskManagerTimeout, bounded(v), err)
	}
	return d, nil
}

// slotIdleTimeout is the slot.idle.timeout the JobManager runs with in demand mode: the job's own,
// else demandSlotIdleTimeout.
func slotIdleTimeout(c *flinkdist.Config) string {
	if v, set := c.Get(keySlotIdleTimeout); set {
		return strings.TrimSpace(v)
	}
	return demandSlotIdleTimeout
}

// demandDefaults gives a demand-mode JobManager a short slot.idle.timeout where the configuration
// sets none, so a rescale's freed slots, and so its TaskManagers, are let go within seconds rather
// than Flink's 50; a job's own value is kept (a longer one only delays the release). It writes what
// it set to out.
func demandDefaults(conf *flinkdist.Config, out io.Writer) {
	if _, set := conf.Get(keySlotIdleTimeout); set {
		return
	}
	conf.Set(keySlotIdleTimeout, demandSlotIdleTimeout)
	fmt.Fprintf(out, "yarn-am flink-jobmanager: %s: %s (default of yarn-am for taskmanagers = %q: a rescale's freed TaskManagers are released once the JobMaster lets their slots go, which Flink's default holds 50 s)\n",
		keySlotIdleTimeout, demandSlotIdleTimeout, taskManagersDemand)
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
	// idleTimeout: resourcemanager.taskmanager-timeout when the job sets it (a freed TaskManager is
	// kept that long), else 0 (released on freedReads reads); slotIdle: slot.idle.timeout as the
	// JobManager runs with it, for the messages.
	idleTimeout time.Duration
	slotIdle    string

	// prefer is the TaskManager an idle-GPU give-back named (giveBack): released first once Flink
	// freed it; under mu.
	prefer string
	// givenBack counts the TaskManagers given back for idle GPUs (releaseIdle), for the rest of the
	// AM's attempt: the autoscaler's slots are lowered by theirs (given); under mu.
	givenBack int
	// bounds serializes the writes of the job's bounds: the give-back's, yarn-am scale's and the
	// autoscaler's decisions (autoscaler.bounds), so that none overwrites another's half done.
	bounds sync.Mutex

	idleSince map[string]time.Time // TaskManager (container) id → since when all its slots are free
	idleReads map[string]int       // TaskManager id → reads in a row that found its slots all free
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
		idleTimeout: timeout, slotIdle: slotIdleTimeout(conf)}, nil
}

// run reads the demand every demandEvery until ctx ends; a JobManager that is not up yet, or a job
// not running yet, is read again at the next round.
func (d *demand) run(ctx context.Context) {
	pollEvery(ctx, demandEvery, 10*time.Second, d.poll, func(why string) {
		d.mu.Lock()
		d.view.failed = why // the details say why the demand is not read, never silently stale
		d.mu.Unlock()
	})
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

// release lowers the count by up to fewer TaskManagers, naming those whose slots Flink has let go
// (all free on freedReads reads in a row, and for idleTimeout); while none is, it waits (and says
// so once).
func (d *demand) release(ctx context.Context, why string, fewer int) error {
	tms, err := d.rest.TaskManagers(ctx)
	if err != nil {
		return err
	}
	now := d.now()
	if d.idleSince == nil {
		d.idleSince, d.idleReads, d.released = map[string]time.Time{}, map[string]int{}, map[string]bool{}
	}
	seen := map[string]bool{}
	var ready []string
	for _, tm := range tms {
		seen[tm.ID] = true
		if tm.Slots == 0 || tm.FreeSlots < tm.Slots {
			delete(d.idleSince, tm.ID)
			delete(d.idleReads, tm.ID)
			continue
		}
		if _, ok := d.idleSince[tm.ID]; !ok {
			d.idleSince[tm.ID] = now
		}
		d.idleReads[tm.ID]++
		if d.idleReads[tm.ID] >= freedReads && now.Sub(d.idleSince[tm.ID]) >= d.idleTimeout && isContainerID(tm.ID) && !d.released[tm.ID] {
			ready = append(ready, tm.ID)
		}
	}
	for id := range d.idleSince {
		if !seen[id] {
			delete(d.idleSince, id)
			delete(d.idleReads, id)
		}
	}
	d.mu.Lock()
	prefer := d.prefer
	d.mu.Unlock()
	slices.SortFunc(ready, func(a, b string) int {
		return cmp.Or(boolOrder(a == prefer, b == prefer), d.idleSince[a].Compare(d.idleSince[b]), strings.Compare(a, b))
	})
	if n := min(fewer, len(ready)); n > 0 {
		for _, id := range ready[:n] {
			d.released[id] = true
		}
		d.mu.Lock()
		d.prefer = ""
		d.mu.Unlock()
		d.told = ""
		have := d.instances()
		return d.scale(have-n, ready[:n], fmt.Sprintf("%s: %s released, %s", why, strings.Join(ready[:n], ", "), d.freedBy()))
	}
	wait := fmt.Sprintf("%s; %d fewer wait until Flink frees their slots (the JobMaster keeps a slot the job no longer uses for %s = %s", why, fewer, keySlotIdleTimeout, d.slotIdle)
	if d.idleTimeout > 0 {
		wait += fmt.Sprintf(", then %s = %s", keyTaskManagerTimeout, d.idleTimeout)
	}
	wait += ")"
	d.mu.Lock()
	d.view.waiting = wait
	d.mu.Unlock()
	if wait != d.told {
		d.emit(contract.Event{Type: eventJob, Message: wait})
		d.told = wait
	}
	return nil
}

// boolOrder sorts true first.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// freedBy says when a TaskManager is released: once Flink freed its slots, and idle for the job's
// taskmanager-timeout when it sets one.
func (d *demand) freedBy() string {
	if d.idleTimeout > 0 {
		return fmt.Sprintf("its slots free for %s (%s)", d.idleTimeout, keyTaskManagerTimeout)
	}
	return "Flink freed its slots"
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
	d.bounds.Lock()
	err = d.setUpper(ctx, job.ID, to*d.perTM)
	d.bounds.Unlock()
	if err != nil {
		return fmt.Errorf("flink: setting the job's parallelism to %d: %w", to*d.perTM, err)
	}
	d.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s: parallelism upper bound set to %d (yarn-am scale to %d TaskManagers)", jobName(job), to*d.perTM, to)})
	if to > from {
		return nil
	}
	then := ""
	if d.idleTimeout > 0 {
		then = fmt.Sprintf(", then %s = %s", keyTaskManagerTimeout, d.idleTimeout)
	}
	return &framework.Deferred{Message: fmt.Sprintf("the Flink job rescales to at most %d slots first; the TaskManagers it leaves are released, down to %d, once Flink frees their slots (%s = %s%s)",
		to*d.perTM, to, keySlotIdleTimeout, d.slotIdle, then)}
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
	return setUppers(ctx, d.rest, jobID, bounds, func(v string) (int, bool) {
		u := upper
		if m := maxPar[v]; m > 0 {
			u = min(u, m)
		}
		return max(u, 1), true
	})
}

// setUppers writes the job's bounds: each vertex's upper bound to what upper says of it (false:
// its bounds as they are), its lower bound no higher. bounds are the job's present ones. The
// demand's, yarn-am scale's and the autoscaler's writes all end here.
func setUppers(ctx context.Context, rest *flinkdist.REST, jobID string, bounds map[string]flinkdist.Bounds, upper func(vertex string) (int, bool)) error {
	out := make(map[string]flinkdist.Bounds, len(bounds))
	for v, b := range bounds {
		if p, ok := upper(v); ok {
			b = flinkdist.Bounds{Lower: max(min(b.Lower, p), 1), Upper: p}
		}
		out[v] = b
	}
	return rest.SetResourceRequirements(ctx, jobID, out)
}

// given is how many TaskManagers were given back for their idle GPUs (autoscaler.given).
func (d *demand) given() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.givenBack
}

// giveBack is framework.AM.GiveBack in demand mode (docs/gpus.md#idle-gpus-given-back): a
// TaskManager whose GPUs stayed idle is given back by the path yarn-am scale takes, the job's upper
// bound lowered by one TaskManager's slots, and the TaskManager it leaves released once Flink freed
// its slots, the idle one first.
func (d *demand) giveBack() *framework.GiveBack {
	return &framework.GiveBack{Can: d.canGiveBack, Release: d.releaseIdle}
}

// canGiveBack says whether the job can run on one TaskManager fewer than from: only an application
// on the adaptive scheduler rescales, and never under min-instances or one TaskManager.
func (d *demand) canGiveBack(from int) error {
	switch {
	case d.session || !d.adaptive:
		return fmt.Errorf("the Flink job's parallelism is fixed: only an application job on the adaptive scheduler (\"jobmanager.scheduler\" = \"adaptive\" in [flink.config]) rescales to fewer TaskManagers")
	case from <= max(d.lo, 1):
		return fmt.Errorf("the Flink job runs on %d TaskManager(s), the fewest taskmanagers = %q keeps (taskexecutor.min-instances, and one for the job)", from, taskManagersDemand)
	}
	return nil
}

// releaseIdle lowers the job's upper bound by one TaskManager's slots for container's idle GPUs and
// names it to be released first; never under a vertex's lower bound (the job's minimum parallelism).
func (d *demand) releaseIdle(ctx context.Context, container string) error {
	from := d.instances()
	if err := d.canGiveBack(from); err != nil {
		return err
	}
	jobs, err := d.liveJobs(ctx)
	if err != nil {
		return fmt.Errorf("reading the Flink job to rescale: %w", err)
	}
	if len(jobs) == 0 {
		return fmt.Errorf("no running Flink job to rescale")
	}
	job := jobs[0]
	upper := (from - 1) * d.perTM
	bounds, err := d.rest.ResourceRequirements(ctx, job.ID)
	if err != nil {
		return fmt.Errorf("reading the Flink job's resource requirements: %w", err)
	}
	for _, v := range slices.Sorted(maps.Keys(bounds)) {
		if b := bounds[v]; b.Lower > upper {
			return fmt.Errorf("the Flink job's vertex %s needs at least %d slots (its lower bound, the job's minimum parallelism), more than the %d of %d TaskManager(s)", v, b.Lower, upper, from-1)
		}
	}
	d.mu.Lock()
	d.prefer = container
	d.mu.Unlock()
	d.bounds.Lock()
	err = d.setUpper(ctx, job.ID, upper)
	d.mu.Lock()
	if err != nil {
		d.prefer = ""
	} else {
		d.givenBack++
	}
	d.mu.Unlock()
	d.bounds.Unlock()
	if err != nil {
		return fmt.Errorf("setting the Flink job's parallelism to %d: %w", upper, err)
	}
	d.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s: parallelism upper bound set to %d (%d TaskManagers): the GPUs of %s stayed idle (taskexecutor.idle-gpu-release); the TaskManager the rescale leaves is released once Flink frees its slots (%s = %s)",
		jobName(job), upper, from-1, container, keySlotIdleTimeout, d.slotIdle)})
	return nil
}
