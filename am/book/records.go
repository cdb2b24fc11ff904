package book

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Records is the AM's bookkeeping of the TaskExecutor containers it accepted, with a vocabulary for
// what happens to them: Accepted, Adopted, StartHeld, ReleasedHeld, Launched, LaunchFailed,
// Stopping, StoppedBeforeStart, Completed, Reported. Each transition keeps the phases, the launches
// in flight and the counts consistent and returns the events it implies; the AM emits them, feeds
// the failure policy and does the I/O. The AM's mutex guards it (package doc, "Locking").
//
// Records of finished containers are bounded: a long-running service that keeps replacing
// TaskExecutors would otherwise keep a record of every container it ever started. Active containers
// are always recorded; of the finished ones the latest `history` are, for Status and the UI. The
// counts of finished, succeeded and failed containers are counters, and Reconcile gets the dropped
// ones' share as Observed.Forgotten, so nothing it decides depends on which records are still there.
// (The failure policy's window and rate keep their own records: Policy.RecordExit.)
type Records struct {
	byID map[string]*Container // every active container and the latest finished ones
	// seq holds the recorded containers in the order they were accepted, for the loops that run on
	// every heartbeat (no map lookups); obsBuf is Reconcile's input, reused so that a heartbeat does
	// not allocate in proportion to the application's size (BenchmarkAMHeartbeat: at 10,000
	// containers the copy was 4.5 MB of garbage and 4 ms of CPU per heartbeat).
	seq      []*Container
	seqDirty bool // seq holds forgotten containers (Compact)
	obsBuf   []decision.Container
	// finished holds the finished containers still recorded, oldest first (at most history);
	// forgotten counts those dropped; completedN, succeededN and failedN count every finished
	// container, dropped or not.
	finished                        []*Container
	forgotten                       decision.Forgotten
	completedN, succeededN, failedN int
	history                         int
	// inFlight counts accepted containers whose startContainers has not returned yet.
	inFlight int
	// launchingN, runningN, stoppingN count the recorded containers in those phases, kept by setPhase
	// so that the gauges need no pass over every container on every heartbeat.
	launchingN, runningN, stoppingN int
	// version changes with every transition: what Reconcile sees of the containers (Observed) is
	// the same as long as it does not (the AM skips a Reconcile whose inputs did not change).
	version uint64
	// now stamps the transitions (Container.AllocatedAt, LaunchedAt, FinishedAt).
	now func() time.Time
	// sharedGPUStops counts, per node, the containers stopped for holding a GPU another live
	// container of the node held (CheckSharedGPUs, gpus.go); bounded by the cluster's nodes.
	sharedGPUStops map[string]int
}

// NewRecords returns empty records that keep the latest history finished containers, stamping
// the transitions with now (nil: time.Now).
func NewRecords(history int, now func() time.Time) Records {
	if now == nil {
		now = time.Now
	}
	return Records{byID: map[string]*Container{}, history: history, now: now}
}

// Get returns the record of a container, nil if it is not (or no longer) recorded.
func (r *Records) Get(id string) *Container { return r.byID[id] }

// Accepted records an allocation the AM keeps: it is launching from now on, or held until its gang
// is complete (held).
func (r *Records) Accepted(l decision.Allocation, p *hadooppb.ContainerProto, round int, held bool) *Container {
	t := &Container{Container: decision.Container{ID: l.ID, Node: l.Node, AskID: l.AskID, Resources: l.Resources, Round: round}, AllocatedAt: r.now()}
	if p != nil {
		t.CID, t.Token = p.GetId(), p.GetContainerToken() // not the rest of the allocation
	}
	r.byID[l.ID] = t
	r.seq = append(r.seq, t)
	if held {
		r.setPhase(t, contract.Held)
	} else {
		r.setPhase(t, contract.Launching)
		r.inFlight++
	}
	return t
}

// StartHeld: the gang is complete, a held container is launched now.
func (r *Records) StartHeld(t *Container) {
	r.setPhase(t, contract.Launching)
	r.inFlight++
}

// ReleasedHeld: a held container goes back to the RM without having started.
func (r *Records) ReleasedHeld(t *Container, why string) []contract.Event {
	r.setPhase(t, contract.Completed)
	t.Exit = decision.Exit{Status: contract.ExitStatusAborted, Class: contract.ExitKilledByAM, Diagnostics: why}
	return r.finish(t)
}

// Launched: the NodeManager started it.
func (r *Records) Launched(t *Container) []contract.Event {
	r.inFlight--
	r.setPhase(t, contract.Running)
	t.LaunchedAt = r.now()
	return []contract.Event{events.Launched(t.ID, t.Node)}
}

// LaunchFailed: the NodeManager refused to start it.
func (r *Records) LaunchFailed(t *Container, reason string) []contract.Event {
	r.inFlight--
	r.setPhase(t, contract.Completed)
	t.Exit = decision.Exit{Status: contract.ExitStatusInvalid, Class: contract.ExitLaunchFailed, Diagnostics: reason}
	return append([]contract.Event{events.LaunchFailed(t.ID, t.Node, reason)}, r.finish(t)...)
}

// Stopping: the requirement went down and t is to stop. A container whose launch is in flight is
// stopped by its launch worker once the start returns; stopNow says the caller stops it now.
func (r *Records) Stopping(t *Container) (stopNow bool) {
	if t.Phase == contract.Launching {
		t.StopAfterLaunch = true
		r.inFlight--
	} else {
		stopNow = t.CID != nil
	}
	r.setPhase(t, contract.Stopping)
	return stopNow
}

// Ended: the RM reports that container id ended with exit status exit and its diagnostics
// (Completed, classified); t is nil, and nothing changes, for a container not recorded (released by
// the AM) or known to have ended already.
func (r *Records) Ended(id string, exit int32, diagnostics string) (t *Container, evs []contract.Event) {
	t = r.Get(id)
	if t == nil || t.Phase == contract.Completed {
		return nil, nil
	}
	return t, r.Completed(t, decision.Exit{Status: exit, Class: decision.Classify(exit), Diagnostics: diagnostics})
}

// Progress is the application's progress as the RM shows it: the share of the wanted containers
// that succeeded, 0 for a service (it never completes) or when none is wanted.
func (r *Records) Progress(wanted int, service bool) float32 {
	if wanted == 0 || service {
		return 0
	}
	return float32(min(r.succeededN, wanted)) / float32(wanted)
}

// StoppedBeforeStart: a container stopped while its launch was in flight never started.
func (r *Records) StoppedBeforeStart(t *Container) []contract.Event {
	r.setPhase(t, contract.Completed)
	t.Exit = decision.Exit{Status: contract.ExitStatusKilledByAppMaster, Class: contract.ExitKilledByAM, Diagnostics: "stopped before it started (the requirement went down)"}
	return r.finish(t)
}

// Completed: the RM reports the container ended with exit. A container the AM was stopping ended
// because the AM stopped it, whatever status the NodeManager reports.
func (r *Records) Completed(t *Container, exit decision.Exit) []contract.Event {
	t.NeverStarted = t.Phase == contract.Held
	if t.Phase == contract.Launching {
		r.inFlight-- // the launch worker will find it completed
	}
	if t.Phase == contract.Stopping {
		exit.Class = contract.ExitKilledByAM
		if t.SharedGPUCounts { // stopped for a GPU another container holds, once too often on its node (CheckSharedGPUs)
			exit.Class = contract.ExitFailed
			exit.Diagnostics = "stopped by the AM: it reported a GPU another live TaskExecutor of its node holds, more than " +
				fmt.Sprint(SharedGPUFreeStops) + " times on this node; " + exit.Diagnostics
		}
	}
	switch {
	case t.ReportFailure != "" && exit.Class == contract.ExitDiscoveryFailed:
		// The launcher's message says it; YARN's diagnostics would repeat it amid boilerplate.
		exit.Diagnostics = t.ReportFailure
	case t.StderrTail != "" && exit.Class != contract.ExitSucceeded && exit.Class != contract.ExitKilledByAM && !t.SharedGPUCounts:
		exit.Diagnostics, exit.StderrTail = WorkerStderrDiagnostics, t.StderrTail
	}
	r.setPhase(t, contract.Completed)
	t.Exit = exit
	return r.finish(t)
}

// Reported: the container's launcher reported its resource infos or why discovery failed.
func (r *Records) Reported(t *Container, rep contract.ContainerReport) []contract.Event {
	if rep.WorkerExit() {
		// The worker's exit (launcher stderrtail.go): its devices are no longer held (the launcher
		// releases them next), and its stderr tail is kept for its completion, which follows.
		t.WorkerExited = true
		if rep.WorkerStderr != "" {
			t.StderrTail = rep.WorkerStderr
		}
		return nil
	}
	if rep.Failure != "" {
		t.ReportFailure = discoveryFailureText(rep.FailedResource, rep.Failure)
		if t.discoveryEvent {
			return nil
		}
		t.discoveryEvent = true
		// The event's own words name the resource: the launcher's prefix would say it twice.
		reason := strings.TrimPrefix(rep.Failure, fmt.Sprintf("discovery failed for resource %q: ", rep.FailedResource))
		return []contract.Event{events.DiscoveryFailed(t.ID, t.Node, rep.FailedResource, reason)}
	}
	t.Infos, t.Port, t.Reported, t.Topology = rep.Infos, rep.Port, true, rep.Topology
	if len(rep.Infos) == 0 {
		return nil
	}
	evs := []contract.Event{events.ResourceInfo(t.ID, t.Node, rep.Infos)}
	for _, name := range slices.Sorted(maps.Keys(rep.Topology)) {
		if top := rep.Topology[name]; top.Best != "" {
			evs = append(evs, events.GPUTopologyWorse(t.ID, t.Node, name, rep.Infos[name], top.Link, top.Best))
		}
	}
	return evs
}

// finish counts a container that just ended and records it among the finished ones, dropping the
// oldest record beyond history; it returns the events of its end.
func (r *Records) finish(t *Container) []contract.Event {
	t.Token, t.Topology = nil, nil
	t.FinishedAt = r.now()
	r.completedN++
	switch {
	case t.Exit.Class == contract.ExitSucceeded:
		r.succeededN++
	case t.Exit.Class.Counts():
		r.failedN++
	}
	r.finished = append(r.finished, t)
	for len(r.finished) > r.history {
		old := r.finished[0]
		r.finished[0] = nil // the backing array must not keep it alive
		r.finished = r.finished[1:]
		r.forgotten.Add(old.Exit)
		delete(r.byID, old.ID)
		old.forgotten = true
		r.seqDirty = true
	}
	evs := []contract.Event{events.Completed(t.ID, t.Node, t.Exit)}
	if t.ReleasedAsked && t.Exit.Class == contract.ExitKilledByAM {
		evs[0] = events.Released(t.ID, t.Node, t.Exit)
	}
	switch t.Exit.Class {
	case contract.ExitPreempted:
		evs = append(evs, events.Preempted(t.ID, t.Node))
	case contract.ExitDiscoveryFailed:
		if !t.discoveryEvent {
			t.discoveryEvent = true
			evs = append(evs, events.DiscoveryFailed(t.ID, t.Node, "", firstNonEmpty(t.ReportFailure, t.Exit.Diagnostics)))
		}
	}
	return evs
}

// Compact removes forgotten containers from seq, in one pass however many were dropped.
func (r *Records) Compact() {
	if !r.seqDirty {
		return
	}
	kept := r.seq[:0]
	for _, t := range r.seq {
		if !t.forgotten {
			kept = append(kept, t)
		}
	}
	clear(r.seq[len(kept):])
	r.seq = kept
	r.seqDirty = false
}

// Observed is the containers as Reconcile sees them, in the order they were accepted. The slice is
// reused by the next call: Reconcile keeps copies only (Plan.Failures, Plan.Stop).
func (r *Records) Observed() []decision.Container {
	r.Compact()
	r.obsBuf = r.obsBuf[:0]
	for _, t := range r.seq {
		r.obsBuf = append(r.obsBuf, t.Container)
	}
	return r.obsBuf
}

// Active returns the containers not yet completed that can be stopped (they have a container id).
func (r *Records) Active() []*Container {
	var out []*Container
	for _, t := range r.seq {
		if t.Phase != contract.Completed && t.CID != nil {
			out = append(out, t)
		}
	}
	return out
}

// All is every recorded container in the order they were accepted; the caller does not change the
// slice. Until the next Observed or Compact it may still hold containers dropped from the records
// (Completed ones: a loop that skips finished containers need not care).
func (r *Records) All() []*Container { return r.seq }

// Finished is the finished containers still recorded, oldest first; the caller does not change it.
func (r *Records) Finished() []*Container { return r.finished }

// Forgotten is the share of the finished containers dropped from the records (and of earlier
// attempts': RestoreCounts), Reconcile's Observed.Forgotten.
func (r *Records) Forgotten() decision.Forgotten { return r.forgotten }

// Counts is how many containers finished, succeeded and failed (Class.Counts), every one, dropped
// from the records or not, earlier attempts' included.
func (r *Records) Counts() (completed, succeeded, failed int) {
	return r.completedN, r.succeededN, r.failedN
}

// InFlight is how many accepted containers' startContainers has not returned yet.
func (r *Records) InFlight() int { return r.inFlight }

// Version changes with every transition (a plan's inputs, PlanInputs.Records).
func (r *Records) Version() uint64 { return r.version }

// Phases counts the recorded containers by phase; completed counts every finished one, dropped or
// not. It runs on every heartbeat: counters kept by setPhase, not a pass over every container (at
// 100,000 containers that pass was a quarter of a heartbeat's CPU, BenchmarkAMHeartbeat).
func (r *Records) Phases() (launching, running, stopping, completed int) {
	return r.launchingN, r.runningN, r.stoppingN, r.completedN
}

// setPhase moves t to phase p, keeping the phase counters and the version.
func (r *Records) setPhase(t *Container, p contract.Phase) {
	r.count(t.Phase, -1)
	t.Phase = p
	r.count(p, 1)
	r.version++
}

func (r *Records) count(p contract.Phase, d int) {
	switch p {
	case contract.Launching:
		r.launchingN += d
	case contract.Running:
		r.runningN += d
	case contract.Stopping:
		r.stoppingN += d
	}
}

// Adopted records a container an earlier attempt of the AM started and YARN handed over to this one:
// it is running.
func (r *Records) Adopted(id, node string, res contract.Capability, cid *hadooppb.ContainerIdProto) *Container {
	t := &Container{Container: decision.Container{ID: id, Node: node, AskID: -1, Resources: res}, CID: cid}
	r.byID[id] = t
	r.seq = append(r.seq, t)
	r.setPhase(t, contract.Running)
	return t
}

// RestoreCounts adds the finished containers of earlier attempts, which this attempt has no records
// of: to Reconcile they are forgotten ones.
func (r *Records) RestoreCounts(s *State) {
	r.version++
	r.completedN += s.Completed
	r.succeededN += s.Succeeded
	r.failedN += s.Failed
	r.forgotten.Succeeded += s.Succeeded
	r.forgotten.Failed += s.Failed
	for k, v := range s.FailedExits {
		if r.forgotten.FailedExits == nil {
			r.forgotten.FailedExits = map[int32]int{}
		}
		r.forgotten.FailedExits[k] += v
	}
}

// Container is a container the AM accepted (its record), with what it needs to launch and stop it.
// Records' verbs write its phase, exit and the launcher's report; the AM's other bookkeeping writes
// the marks named beside each field.
type Container struct {
	decision.Container
	CID *hadooppb.ContainerIdProto // to stop and release it (nil when the RM's allocation was not kept)
	// Token is the container token for startContainers; the AM drops it once the start returned (it
	// is most of a container's allocation).
	Token *hadooppb.TokenProto
	// Infos: the resource infos its launcher reported (or an earlier attempt's state kept).
	Infos map[string][]resources.Info
	// Topology: the GPU topology its launcher reported, per resource (checked by the AM before Reported); dropped
	// when it ends, as only live containers' GPUs are drawn on the GPU map.
	Topology map[string]contract.GPUTopology
	// ReportFailure is the launcher's discovery failure, if it reported one; StderrTail the last lines
	// of the worker's stderr, if its launcher reported them after it exited non-zero.
	ReportFailure string
	StderrTail    string
	// WorkerExited: the launcher reported the worker's exit; YARN's report of the end follows.
	WorkerExited bool
	// discoveryEvent: a discovery-failed event was emitted for it (from the report or its exit).
	discoveryEvent bool
	// StopAfterLaunch: the requirement went down while its launch was in flight; stop it once started.
	StopAfterLaunch bool
	// ReleasedAsked: the AM stops it because the requirement went down (a scale-down, a framework's
	// demand, an idle GPU given back): its end is told as a release, not as a stop.
	ReleasedAsked bool
	// SharedGPUCounts: the AM stopped it for a GPU another live container of its node holds, and its
	// end counts as a failure (CheckSharedGPUs).
	SharedGPUCounts bool
	// Reported: its launcher reported its infos; Port: the free port it reported (gang mode); Rank:
	// its place in the gang round, once every rank reported (the gang's bookkeeping writes it).
	Reported bool
	Port     int
	Rank     *contract.Rendezvous
	// forgotten: dropped from the records (beyond their history); Compact removes it from seq.
	forgotten bool
	// RequestedAt (its ask first sent), AllocatedAt, LaunchedAt, FinishedAt: the web UI's timeline
	// (zero: not known, e.g. adopted from an earlier attempt).
	RequestedAt, AllocatedAt, LaunchedAt, FinishedAt time.Time
	// HeardAt: its launcher's last liveness message; VouchedAt: its NodeManager last said it runs;
	// Probing: its NodeManager is being asked (the liveness check writes them).
	HeardAt, VouchedAt time.Time
	Probing            bool
	// Notice: the ResourceManager warned that it takes the container back (the AM's
	// preemption warnings, an idle GPU's release).
	Notice *contract.PreemptionNotice
}

// firstNonEmpty is the first of s that is not blank, trimmed.
func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// SharedGPUFreeStops is how many containers per node the AM stops for a shared GPU without counting
// them as failures (CheckSharedGPUs counts them).
const SharedGPUFreeStops = 2

// WorkerStderrDiagnostics is a failed container's diagnostics when its launcher reported the
// worker's stderr tail: where to read it, not the text.
const WorkerStderrDiagnostics = "its last stderr lines are shown to the application's owner: `yarn-am status` or `yarn-am logs`"

// discoveryFailureText is the launcher's discovery failure as the AM words it: the launcher's own
// message names the resource already ("discovery failed for resource \"gpu\": ..."); older launchers
// send the driver's error alone.
func discoveryFailureText(resource, failure string) string {
	if strings.HasPrefix(failure, "discovery failed for resource") {
		return failure
	}
	return "discovery failed for resource " + resource + ": " + failure
}

// GPUUUIDs are the UUIDs of the GPUs t's launcher reported.
func (t *Container) GPUUUIDs() []string {
	var out []string
	for _, infos := range t.Infos {
		for _, in := range infos {
			if u := in[contract.InfoUUID]; u != "" {
				out = append(out, u)
			}
		}
	}
	return out
}

// GPUs is how many GPUs t holds: those its launcher reported with a UUID, else what YARN gave it.
func (t *Container) GPUs() int64 {
	if n := len(t.GPUUUIDs()); n > 0 {
		return int64(n)
	}
	var n int64
	for k, v := range t.Resources {
		if strings.HasSuffix(k, "/gpu") {
			n += v
		}
	}
	return n
}
