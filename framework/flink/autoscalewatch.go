package flink

import (
	"context"
	"fmt"
	"maps"
	"math"
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

// This file is the AM's autoscaler of a [flink] job (docs/flink.md#autoscaling): every
// autoscaleEvery it reads each vertex's metrics from the JobManager, averages them over the metrics
// window, and once a window has been measured at the job's present parallelism it decides
// (autoscaledecide.go). A decision that differs from the last one told is an event with its inputs
// and its outcome; the details show the last decision and when the next one can be. With
// autoscale = "recommend" that is all; with "on" a decision that changes a parallelism sets the
// job's upper bounds through the adaptive scheduler's resource requirements, and the TaskManagers
// follow through the demand (demand.go). After a rescale its metrics wait the stabilisation before
// a new window starts.

// autoscaleEvery is how often the autoscaler reads the metrics: the JobManager fetches them from
// the TaskManagers every 10 s by default (metrics.fetcher.update-interval), so a window holds
// several fetches.
const autoscaleEvery = 5 * time.Second

// eventAutoscale is the type of the autoscaler's decisions (docs/running.md#events).
const eventAutoscale contract.EventType = "flink-autoscale"

// The metrics the autoscaler reads, by their names on Flink 1.20 and 2.x alike: the task's, and the
// sources' own (prefixed with the source operator's name, "Source__<name>.").
const (
	metricBusy          = "busyTimeMsPerSecond"
	metricBackPressured = "backPressuredTimeMsPerSecond"
	metricIn            = "numRecordsInPerSecond"
	metricOut           = "numRecordsOutPerSecond"
	metricPending       = "pendingRecords"
	sourcePrefix        = "Source__"
)

// autoscaler is the AM's side of [flink] autoscale. Only its poller (run) touches the fields above
// mu; view is read by details.
type autoscaler struct {
	rest  *flinkdist.REST
	emit  func(contract.Event)
	now   func() time.Time
	spec  autoscaleSpec
	slots int    // the most slots the TaskManagers hold (0: not known)
	limit string // slots in words
	// apply sets the job's parallelism (autoscale = "on"); nil: recommend only.
	apply func(ctx context.Context, jobID string, to map[string]int) error
	// gpu is a TaskManager's (container's) latest GPU utilisation (framework.AMStart.GPUUtilisation);
	// nil: none read.
	gpu func(id string) (float64, bool)
	// gauges show each decision at /metrics; nil: none.
	gauges *autoscaleGauges
	// headroom is the queue's headroom and a TaskManager's resources (framework.AMStart.Headroom),
	// perTM the slots of one TaskManager: a scale-out fits what the queue can still give
	// (queueRoom). nil: no such limit.
	headroom func() (framework.Headroom, bool)
	perTM    int
	// instances is taskexecutor.instances; given, the TaskManagers the idle-GPU give-back released
	// (demand.given): each lowers the slots by its own, so the autoscaler never asks back what was
	// given back (docs/flink.md#autoscaling). bounds serializes a decision's setting of the bounds
	// with the give-back's and yarn-am scale's (demand.bounds). nil: no give-back.
	instances int
	given     func() int
	bounds    *sync.Mutex

	jobID   string
	par     map[string]int // the parallelism the samples were taken at
	start   time.Time      // the window's start: the first sample at par after the stabilisation
	quiet   time.Time      // no sample is kept before (the stabilisation after a rescale)
	samples []map[string]vertexLoad
	since   lowerSince
	names   map[string][]string // the metric names read per vertex
	told    string              // the last decision told, by its targets
	// pending is the parallelism the last applied decision set, until the job runs at another
	// than it was decided at: the same decision again waits for the rescale instead of being
	// applied and told again.
	pending map[string]int

	mu   sync.Mutex
	view autoscaleView
	// hist is each vertex's parallelism over time, of the job followed now (series), under mu.
	hist autoscaleHistory
}

// maxHistoryPoints bounds each vertex's history (contract.MaxSeriesPoints): the newest kept.
const maxHistoryPoints = contract.MaxSeriesPoints

// autoscaleHistory is the parallelism of the job's vertices over time: what it ran at (a rescale,
// the autoscaler's or anyone's) and what each decision recommended or decided.
type autoscaleHistory struct {
	job   string
	order []string // the vertices' ids as the job lists them
	names map[string]string
	pts   map[string][]contract.SeriesPoint
}

// add is a point of vertex id (named name) of job; a new job starts the history anew.
func (h *autoscaleHistory) add(job, id, name string, at time.Time, value int, note string) {
	if h.job != job || h.pts == nil {
		*h = autoscaleHistory{job: job, names: map[string]string{}, pts: map[string][]contract.SeriesPoint{}}
	}
	if _, ok := h.pts[id]; !ok {
		h.order = append(h.order, id)
	}
	h.names[id] = name
	pts := append(h.pts[id], contract.SeriesPoint{At: at.UTC(), Value: int64(value), Note: note})
	if len(pts) > maxHistoryPoints {
		pts = slices.Clone(pts[len(pts)-maxHistoryPoints:])
	}
	h.pts[id] = pts
}

// series is framework.AM.Series: each vertex's parallelism over time, "Parallelism of <vertex>".
func (a *autoscaler) series() []contract.FrameworkSeries {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []contract.FrameworkSeries
	for _, id := range a.hist.order {
		out = append(out, contract.FrameworkSeries{Name: "Parallelism of " + a.hist.names[id], Points: slices.Clone(a.hist.pts[id])})
	}
	return out
}

// noChange is the key of a decision that changes nothing and hits no bound: told only after one
// that did.
const noChange = "no change"

// autoscaleView is what details shows of the autoscaler.
type autoscaleView struct {
	last    *autoscaleDecision
	next    time.Time
	applied string // the last decision applied, in words
	failed  string
}

// newAutoscaler is the autoscaler of a job with spec; apply is nil in recommend mode.
func newAutoscaler(spec autoscaleSpec, rest *flinkdist.REST, emit func(contract.Event), slots int, limit string,
	apply func(ctx context.Context, jobID string, to map[string]int) error) *autoscaler {
	return &autoscaler{rest: rest, emit: emit, now: time.Now, spec: spec, slots: slots, limit: limit, apply: apply, since: lowerSince{}, told: noChange}
}

// run reads the metrics every autoscaleEvery until ctx ends.
func (a *autoscaler) run(ctx context.Context) {
	pollEvery(ctx, autoscaleEvery, 20*time.Second, a.poll, func(why string) {
		a.mu.Lock()
		a.view.failed = why
		a.mu.Unlock()
	})
}

// poll takes one sample of the running job and decides once a window is full.
func (a *autoscaler) poll(ctx context.Context) error {
	jobs, err := a.rest.Jobs(ctx)
	if err != nil {
		return err
	}
	var job *flinkdist.Job
	for _, j := range jobs {
		if j.State == "RUNNING" && (job == nil || j.Start > job.Start) {
			j := j
			job = &j
		}
	}
	if job == nil {
		return nil
	}
	loads, err := a.measure(ctx, job.ID)
	if err != nil {
		return err
	}
	now := a.now()
	par := map[string]int{}
	for i, l := range loads {
		par[l.ID] = l.Parallelism
		loads[i].At = now
	}
	if job.ID != a.jobID || !maps.Equal(par, a.par) {
		// A new job or a rescale (ours or anyone's): its metrics settle first.
		if a.jobID != "" {
			a.quiet = now.Add(a.spec.Stabilise)
		}
		a.mu.Lock()
		for _, l := range loads {
			if job.ID != a.jobID || a.par[l.ID] != l.Parallelism {
				a.hist.add(job.ID, l.ID, l.Name, now, l.Parallelism, "running")
			}
		}
		a.mu.Unlock()
		a.jobID, a.par, a.samples, a.start, a.pending = job.ID, par, nil, time.Time{}, nil
	}
	if now.Before(a.quiet) {
		a.setNext(a.quiet.Add(a.spec.Window))
		return nil
	}
	if a.start.IsZero() {
		a.start = now
	}
	a.samples = append(a.samples, byVertex(loads))
	if len(a.samples) > maxSamples(a.spec.Window) {
		a.samples = a.samples[1:]
	}
	if now.Sub(a.start) < a.spec.Window {
		a.setNext(a.start.Add(a.spec.Window))
		return nil
	}
	b := autoscaleBounds{spec: a.spec, slots: a.slots, slotsLimit: a.limit}
	given := 0
	if a.given != nil {
		if given = a.given(); given > 0 && a.instances > 0 {
			b.slots, b.slotsLimit = slotsLimit(a.instances, a.perTM, given)
		}
	}
	if a.headroom != nil {
		if h, ok := a.headroom(); ok {
			tms, err := a.rest.TaskManagers(ctx)
			if err != nil {
				return err
			}
			free := 0
			for _, tm := range tms {
				free += max(tm.FreeSlots, 0)
			}
			b.room, b.roomLimit = queueRoom(h, free, a.perTM)
		}
	}
	d := decide(now, average(loads, a.samples), b, a.since)
	if a.pending != nil && maps.Equal(d.targets(), a.pending) {
		a.setNext(now.Add(autoscaleEvery)) // decided and applied already: the job has not rescaled yet
		return nil
	}
	a.mu.Lock()
	a.view.last, a.view.next = d, now.Add(autoscaleEvery)
	a.mu.Unlock()
	a.gauges.set(d)
	key := d.key()
	if key == "" {
		key = noChange
	}
	if key != a.told {
		a.told = key
		sev, mode := contract.SeverityInfo, "recommended"
		if a.apply != nil {
			mode = "decided"
		}
		a.mu.Lock()
		for _, v := range d.Vertices {
			if v.To != v.From {
				a.hist.add(job.ID, v.ID, v.Name, now, v.To, mode)
			}
		}
		a.mu.Unlock()
		a.emit(contract.Event{Type: eventAutoscale, Severity: sev,
			Message: fmt.Sprintf("%s: autoscale %s: %s; measured over %s: %s", jobName(*job), mode, d.outcome(), a.spec.Window, d.inputs())})
	}
	if a.apply == nil || !d.changes() {
		return nil
	}
	if a.bounds != nil {
		a.bounds.Lock()
		defer a.bounds.Unlock()
		if a.given() != given {
			return nil // a give-back lowered the bounds since: the next window decides on them
		}
	}
	if err := a.apply(ctx, job.ID, d.changed()); err != nil {
		return fmt.Errorf("autoscale: applying %s: %w", d.outcome(), err)
	}
	a.quiet = now.Add(a.spec.Stabilise)
	a.samples, a.start, a.told, a.pending = nil, time.Time{}, noChange, d.targets()
	a.mu.Lock()
	a.view.applied = fmt.Sprintf("%s at %s", d.outcome(), now.UTC().Format(time.TimeOnly))
	a.view.next = a.quiet.Add(a.spec.Window)
	a.mu.Unlock()
	return nil
}

func (a *autoscaler) setNext(t time.Time) {
	a.mu.Lock()
	a.view.next = t
	a.mu.Unlock()
}

// maxSamples is how many samples a window holds, and one more.
func maxSamples(window time.Duration) int { return int(window/autoscaleEvery) + 1 }

func byVertex(loads []vertexLoad) map[string]vertexLoad {
	out := make(map[string]vertexLoad, len(loads))
	for _, l := range loads {
		out[l.ID] = l
	}
	return out
}

// average is the latest loads with each measurement the mean of the samples that have it.
func average(latest []vertexLoad, samples []map[string]vertexLoad) []vertexLoad {
	out := slices.Clone(latest)
	for i := range out {
		id := out[i].ID
		mean := func(get func(vertexLoad) float64) float64 {
			sum, n := 0.0, 0
			for _, s := range samples {
				if l, ok := s[id]; ok && !math.IsNaN(get(l)) {
					sum += get(l)
					n++
				}
			}
			if n == 0 {
				return math.NaN()
			}
			return sum / float64(n)
		}
		out[i].Busy = mean(func(l vertexLoad) float64 { return l.Busy })
		out[i].BackPressured = mean(func(l vertexLoad) float64 { return l.BackPressured })
		out[i].In = mean(func(l vertexLoad) float64 { return l.In })
		out[i].Out = mean(func(l vertexLoad) float64 { return l.Out })
		out[i].SourceRate = mean(func(l vertexLoad) float64 { return l.SourceRate })
		out[i].GPU = mean(func(l vertexLoad) float64 { return l.GPU })
		// The backlog is what is left now, not its mean; how fast it grew, from the window's first
		// and last samples that report it.
		out[i].PendingGrowth = growth(id, samples)
	}
	return out
}

// growth is how fast vertex id's backlog grew between the first and the last samples that have it,
// records per second (NaN: fewer than two such samples, or no time between them).
func growth(id string, samples []map[string]vertexLoad) float64 {
	var first, last *vertexLoad
	for _, s := range samples {
		if l, ok := s[id]; ok && !math.IsNaN(l.Pending) && !l.At.IsZero() {
			if first == nil {
				first = &l
			}
			last = &l
		}
	}
	if first == nil || !last.At.After(first.At) {
		return math.NaN()
	}
	return (last.Pending - first.Pending) / last.At.Sub(first.At).Seconds()
}

// measure reads one sample of every vertex of the job.
func (a *autoscaler) measure(ctx context.Context, jobID string) ([]vertexLoad, error) {
	detail, err := a.rest.JobDetail(ctx, jobID)
	if err != nil {
		return nil, err
	}
	plan, err := a.rest.JobPlan(ctx, jobID)
	if err != nil {
		return nil, err
	}
	inputs := map[string][]string{}
	for _, n := range plan {
		for _, in := range n.Inputs {
			inputs[n.ID] = append(inputs[n.ID], in.ID)
		}
	}
	if a.names == nil || a.jobID != jobID {
		a.names = map[string][]string{}
	}
	var loads []vertexLoad
	for _, v := range detail.Vertices {
		names, ok := a.names[v.ID]
		if !ok {
			all, err := a.rest.VertexMetricNames(ctx, jobID, v.ID)
			if err != nil {
				return nil, err
			}
			isSource := len(inputs[v.ID]) == 0
			names = metricNames(all, isSource)
			if !slices.Contains(all, metricBusy) {
				return nil, fmt.Errorf("vertex %s reports no %s yet", v.Name, metricBusy)
			}
			// A source's operator metrics may register after the task's: listed again until they do.
			if !isSource || len(names) > len(metricNames(nil, false)) {
				a.names[v.ID] = names
			}
		}
		got, err := a.rest.VertexMetrics(ctx, jobID, v.ID, names)
		if err != nil {
			return nil, err
		}
		l := loadOf(v, inputs[v.ID], got)
		if a.gpu != nil {
			if l.GPU, err = a.vertexGPU(ctx, jobID, v.ID); err != nil {
				return nil, err
			}
		}
		loads = append(loads, l)
	}
	return loads, nil
}

// vertexGPU is the mean GPU utilisation of the TaskManagers that run a vertex, NaN when none of
// them has a sample (no GPUs).
func (a *autoscaler) vertexGPU(ctx context.Context, jobID, vertexID string) (float64, error) {
	tms, err := a.rest.VertexTaskManagers(ctx, jobID, vertexID)
	if err != nil {
		return math.NaN(), err
	}
	sum, n := 0.0, 0
	for _, id := range tms {
		if u, ok := a.gpu(id); ok {
			sum += u
			n++
		}
	}
	if n == 0 {
		return math.NaN(), nil
	}
	return sum / float64(n), nil
}

// metricNames are the metrics of a vertex the autoscaler reads, of all it reports: the task's, and
// for a source its source operators' records read and backlog.
func metricNames(all []string, isSource bool) []string {
	names := []string{metricBusy, metricBackPressured, metricIn, metricOut}
	if !isSource {
		return names
	}
	for _, n := range all {
		if !strings.HasPrefix(n, sourcePrefix) {
			continue
		}
		if strings.HasSuffix(n, "."+metricIn) || strings.HasSuffix(n, "."+metricOut) || strings.HasSuffix(n, "."+metricPending) {
			names = append(names, n)
		}
	}
	if len(names) > 40 {
		names = names[:40]
	}
	return names
}

// loadOf is one vertex's sample from its aggregated metrics.
func loadOf(v flinkdist.Vertex, inputs []string, m map[string]flinkdist.Aggregate) vertexLoad {
	get := func(name string, agg func(flinkdist.Aggregate) flinkdist.MetricValue) float64 {
		a, ok := m[name]
		if !ok {
			return math.NaN()
		}
		return float64(agg(a))
	}
	sum := func(a flinkdist.Aggregate) flinkdist.MetricValue { return a.Sum }
	avg := func(a flinkdist.Aggregate) flinkdist.MetricValue { return a.Avg }
	l := vertexLoad{ID: v.ID, Name: v.Name, Parallelism: v.Parallelism, MaxParallelism: v.MaxParallelism, Group: v.SlotSharingGroup,
		Inputs: inputs, Busy: get(metricBusy, avg) / 1000, BackPressured: get(metricBackPressured, avg) / 1000,
		In: get(metricIn, sum), Out: get(metricOut, sum), SourceRate: math.NaN(), Pending: math.NaN(), PendingGrowth: math.NaN(), GPU: math.NaN()}
	if len(inputs) > 0 {
		return l
	}
	// A source: the records its source operators read (their records in, else out), and their
	// backlog where they report one.
	var in, out, pending float64
	var hasIn, hasOut, hasPending bool
	for name, a := range m {
		if !strings.HasPrefix(name, sourcePrefix) {
			continue
		}
		switch {
		case strings.HasSuffix(name, "."+metricIn) && !math.IsNaN(float64(a.Sum)):
			in, hasIn = in+float64(a.Sum), true
		case strings.HasSuffix(name, "."+metricOut) && !math.IsNaN(float64(a.Sum)):
			out, hasOut = out+float64(a.Sum), true
		case strings.HasSuffix(name, "."+metricPending) && !math.IsNaN(float64(a.Sum)):
			pending, hasPending = pending+float64(a.Sum), true
		}
	}
	switch {
	case hasIn && in > 0:
		l.SourceRate = in
	case hasOut:
		l.SourceRate = out
	}
	if hasPending {
		l.Pending = pending
	}
	return l
}

// details are the autoscaler's lines in the Flink details: its mode, the last decision and the
// next possible one.
func (a *autoscaler) details() []contract.Detail {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	v := a.view
	a.mu.Unlock()
	mode := a.spec.Mode
	out := []contract.Detail{{Name: "Autoscale", Value: fmt.Sprintf("%s (utilisation %s, band %s..%s, window %s)", mode,
		percent(a.spec.Utilisation), percent(a.spec.bandLow()), percent(a.spec.bandHigh()), a.spec.Window)}}
	if v.last != nil {
		out = append(out, contract.Detail{Name: "Autoscale last decision", Value: fmt.Sprintf("%s at %s", v.last.outcome(), v.last.At.UTC().Format(time.TimeOnly))})
	} else {
		out = append(out, contract.Detail{Name: "Autoscale last decision", Value: "none yet"})
	}
	if !v.next.IsZero() {
		out = append(out, contract.Detail{Name: "Autoscale next decision", Value: "not before " + v.next.UTC().Format(time.TimeOnly)})
	}
	if v.applied != "" {
		out = append(out, contract.Detail{Name: "Autoscale applied", Value: v.applied})
	}
	if v.failed != "" {
		out = append(out, contract.Detail{Name: "Autoscale not read", Value: v.failed})
	}
	return out
}

// slotsLimit is the most slots instances TaskManagers of perTM hold, less those given back for
// their idle GPUs, and that limit in words.
func slotsLimit(instances, perTM, given int) (int, string) {
	if given <= 0 {
		return instances * perTM, fmt.Sprintf("the TaskManagers' %d slots (taskexecutor.instances = %d × %s = %d)", instances*perTM, instances, keySlots, perTM)
	}
	n := max(instances-given, 0) * perTM
	return n, fmt.Sprintf("the TaskManagers' %d slots (taskexecutor.instances = %d × %s = %d, less %d %s given back for idle GPUs by taskexecutor.idle-gpu-release)",
		n, instances, keySlots, perTM, given, plural(given, "TaskManager", "TaskManagers"))
}

// setUpperBounds applies a decision (autoscale = "on"): the upper bound of each vertex in to (those
// it changes) set to its decided parallelism, its lower bound no higher, every other's as it is;
// the adaptive scheduler rescales the job to them and the demand asks for the TaskManagers they take.
func setUpperBounds(rest *flinkdist.REST) func(ctx context.Context, jobID string, to map[string]int) error {
	return func(ctx context.Context, jobID string, to map[string]int) error {
		bounds, err := rest.ResourceRequirements(ctx, jobID)
		if err != nil {
			return err
		}
		return setUppers(ctx, rest, jobID, bounds, func(v string) (int, bool) {
			p, ok := to[v]
			return p, ok && p > 0
		})
	}
}

// startAutoscale starts the autoscaler of a job whose [flink] autoscale is not off, and returns it
// for the details. Its slot limit is taskexecutor.instances TaskManagers of the configured slots,
// and what the queue's headroom holds (headroom, nil: none).
// An "on" the AM cannot carry out (the configuration the processes have lacks the adaptive
// scheduler: a provided home's, which check could not read) recommends instead, and says so.
func startAutoscale(ctx context.Context, j *jobfile.Job, conf *flinkdist.Config, rest *flinkdist.REST, emit func(contract.Event),
	gpu func(id string) (float64, bool), headroom func() (framework.Headroom, bool), d *demand) *autoscaler {
	spec := specOf(j)
	perTM := 1
	if v, ok := conf.Get(keySlots); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
			perTM = n
		}
	}
	n := j.TaskExecutor.Instances
	slots, limit := slotsLimit(n, perTM, 0)
	var apply func(ctx context.Context, jobID string, to map[string]int) error
	if spec.Autoscale.Mode == autoscaleOn {
		if err := checkAutoscale(spec, adapts(conf)); err != nil {
			emit(contract.Event{Type: eventAutoscale, Severity: contract.SeverityWarning, Message: err.Error() + "; recommending only"})
		} else {
			apply = setUpperBounds(rest)
		}
	}
	a := newAutoscaler(spec.Autoscale, rest, emit, slots, limit, apply)
	a.gauges, a.gpu, a.headroom, a.perTM, a.instances = newAutoscaleGauges(), gpu, headroom, perTM, n
	if d != nil {
		a.given, a.bounds = d.given, &d.bounds
	}
	go a.run(ctx)
	return a
}
