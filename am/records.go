package am

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// records is the AM's bookkeeping of the TaskExecutor containers it accepted, with a vocabulary for
// what happens to them: accepted, launched, launchFailed, stopping, stoppedBeforeStart, completed,
// reported. Each transition keeps the phases, the launches in flight and the counts consistent and
// returns the events it implies; the AM (am.go) emits them, feeds the failure policy and does the
// I/O. The AM's mutex guards it: every method runs with a.mu held.
//
// Records of finished containers are bounded: a long-running service that keeps replacing
// TaskExecutors would otherwise keep a record of every container it ever started. Active containers
// are always recorded; of the finished ones the latest `history` are, for Status and the UI. The
// counts of finished, succeeded and failed containers are counters, and Reconcile gets the dropped
// ones' share as Observed.Forgotten, so nothing it decides depends on which records are still there.
// (The failure policy's window and rate keep their own records: Policy.RecordExit.)
type records struct {
	byID map[string]*tracked // every active container and the latest finished ones
	// seq holds the recorded containers in the order they were accepted, for the loops that run on
	// every heartbeat (no map lookups); obsBuf is Reconcile's input, reused so that a heartbeat does
	// not allocate in proportion to the application's size (BenchmarkAMHeartbeat: at 10,000
	// containers the copy was 4.5 MB of garbage and 4 ms of CPU per heartbeat).
	seq      []*tracked
	seqDirty bool // seq holds forgotten containers (compact)
	obsBuf   []decision.Container
	// finished holds the finished containers still recorded, oldest first (at most history);
	// forgotten counts those dropped; completedN, succeededN and failedN count every finished
	// container, dropped or not.
	finished                        []*tracked
	forgotten                       decision.Forgotten
	completedN, succeededN, failedN int
	history                         int
	// inFlight counts accepted containers whose startContainers has not returned yet.
	inFlight int
	// launchingN, runningN, stoppingN count the recorded containers in those phases, kept by setPhase
	// so that the gauges need no pass over every container on every heartbeat.
	launchingN, runningN, stoppingN int
	// version changes with every transition: what Reconcile sees of the containers (observed) is
	// the same as long as it does not (allocate.go skips a Reconcile whose inputs did not change).
	version uint64
	// now stamps the transitions (tracked.allocatedAt, launchedAt, finishedAt).
	now func() time.Time
	// sharedGPUStops counts, per node, the containers stopped for holding a GPU another live
	// container of the node held (gpucheck.go); bounded by the cluster's nodes.
	sharedGPUStops map[string]int
}

func newRecords(history int, now func() time.Time) records {
	if now == nil {
		now = time.Now
	}
	return records{byID: map[string]*tracked{}, history: history, now: now}
}

// get returns the record of a container, nil if it is not (or no longer) recorded.
func (r *records) get(id string) *tracked { return r.byID[id] }

// accepted records an allocation the AM keeps: it is launching from now on, or held until its gang
// is complete (held).
func (r *records) accepted(l decision.Allocation, p *hadooppb.ContainerProto, round int, held bool) *tracked {
	t := &tracked{Container: decision.Container{ID: l.ID, Node: l.Node, AskID: l.AskID, Resources: l.Resources, Round: round}, allocatedAt: r.now()}
	if p != nil {
		t.cid, t.token = p.GetId(), p.GetContainerToken() // not the rest of the allocation
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

// startHeld: the gang is complete, a held container is launched now.
func (r *records) startHeld(t *tracked) {
	r.setPhase(t, contract.Launching)
	r.inFlight++
}

// releasedHeld: a held container goes back to the RM without having started.
func (r *records) releasedHeld(t *tracked, why string) []contract.Event {
	r.setPhase(t, contract.Completed)
	t.Exit = decision.Exit{Status: contract.ExitStatusAborted, Class: contract.ExitKilledByAM, Diagnostics: why}
	return r.finish(t)
}

// launched: the NodeManager started it.
func (r *records) launched(t *tracked) []contract.Event {
	r.inFlight--
	r.setPhase(t, contract.Running)
	t.launchedAt = r.now()
	return []contract.Event{events.Launched(t.ID, t.Node)}
}

// launchFailed: the NodeManager refused to start it.
func (r *records) launchFailed(t *tracked, reason string) []contract.Event {
	r.inFlight--
	r.setPhase(t, contract.Completed)
	t.Exit = decision.Exit{Status: contract.ExitStatusInvalid, Class: contract.ExitLaunchFailed, Diagnostics: reason}
	return append([]contract.Event{events.LaunchFailed(t.ID, t.Node, reason)}, r.finish(t)...)
}

// stopping: the requirement went down and t is to stop. A container whose launch is in flight is
// stopped by its launch worker once the start returns; stopNow says the caller stops it now.
func (r *records) stopping(t *tracked) (stopNow bool) {
	if t.Phase == contract.Launching {
		t.stopAfterLaunch = true
		r.inFlight--
	} else {
		stopNow = t.cid != nil
	}
	r.setPhase(t, contract.Stopping)
	return stopNow
}

// stoppedBeforeStart: a container stopped while its launch was in flight never started.
func (r *records) stoppedBeforeStart(t *tracked) []contract.Event {
	r.setPhase(t, contract.Completed)
	t.Exit = decision.Exit{Status: contract.ExitStatusKilledByAppMaster, Class: contract.ExitKilledByAM, Diagnostics: "stopped before it started (the requirement went down)"}
	return r.finish(t)
}

// completed: the RM reports the container ended with exit. A container the AM was stopping ended
// because the AM stopped it, whatever status the NodeManager reports.
func (r *records) completed(t *tracked, exit decision.Exit) []contract.Event {
	t.NeverStarted = t.Phase == contract.Held
	if t.Phase == contract.Launching {
		r.inFlight-- // the launch worker will find it completed
	}
	if t.Phase == contract.Stopping {
		exit.Class = contract.ExitKilledByAM
		if t.sharedGPUCounts { // stopped for a GPU another container holds, once too often on its node (gpucheck.go)
			exit.Class = contract.ExitFailed
			exit.Diagnostics = "stopped by the AM: it reported a GPU another live TaskExecutor of its node holds, more than " +
				fmt.Sprint(sharedGPUFreeStops) + " times on this node; " + exit.Diagnostics
		}
	}
	switch {
	case t.reportFailure != "" && exit.Class == contract.ExitDiscoveryFailed:
		// The launcher's message says it; YARN's diagnostics would repeat it amid boilerplate.
		exit.Diagnostics = t.reportFailure
	case t.stderrTail != "" && exit.Class != contract.ExitSucceeded && exit.Class != contract.ExitKilledByAM && !t.sharedGPUCounts:
		exit.Diagnostics, exit.StderrTail = workerStderrDiagnostics, t.stderrTail
	}
	r.setPhase(t, contract.Completed)
	t.Exit = exit
	return r.finish(t)
}

// reported: the container's launcher reported its resource infos or why discovery failed.
func (r *records) reported(t *tracked, rep contract.ContainerReport) []contract.Event {
	if rep.WorkerExit() {
		// The worker's exit (launcher stderrtail.go): its devices are no longer held (the launcher
		// releases them next), and its stderr tail is kept for its completion, which follows.
		t.workerExited = true
		if rep.WorkerStderr != "" {
			t.stderrTail = rep.WorkerStderr
		}
		return nil
	}
	if rep.Failure != "" {
		t.reportFailure = discoveryFailureText(rep.FailedResource, rep.Failure)
		if t.discoveryEvent {
			return nil
		}
		t.discoveryEvent = true
		// The event's own words name the resource: the launcher's prefix would say it twice.
		reason := strings.TrimPrefix(rep.Failure, fmt.Sprintf("discovery failed for resource %q: ", rep.FailedResource))
		return []contract.Event{events.DiscoveryFailed(t.ID, t.Node, rep.FailedResource, reason)}
	}
	t.infos, t.port, t.reported, t.topology = rep.Infos, rep.Port, true, rep.Topology
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

// sharedGPU: a container of node is stopped for a GPU another live container holds; it returns how
// many times that has happened on node, this one included.
func (r *records) sharedGPU(node string) int {
	if r.sharedGPUStops == nil {
		r.sharedGPUStops = map[string]int{}
	}
	r.sharedGPUStops[node]++
	return r.sharedGPUStops[node]
}

// finish counts a container that just ended and records it among the finished ones, dropping the
// oldest record beyond history; it returns the events of its end.
func (r *records) finish(t *tracked) []contract.Event {
	t.token, t.topology = nil, nil
	t.finishedAt = r.now()
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
	if t.releasedAsked && t.Exit.Class == contract.ExitKilledByAM {
		evs[0] = events.Released(t.ID, t.Node, t.Exit)
	}
	switch t.Exit.Class {
	case contract.ExitPreempted:
		evs = append(evs, events.Preempted(t.ID, t.Node))
	case contract.ExitDiscoveryFailed:
		if !t.discoveryEvent {
			t.discoveryEvent = true
			evs = append(evs, events.DiscoveryFailed(t.ID, t.Node, "", firstNonEmpty(t.reportFailure, t.Exit.Diagnostics)))
		}
	}
	return evs
}

// compact removes forgotten containers from seq, in one pass however many were dropped.
func (r *records) compact() {
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

// observed is the containers as Reconcile sees them, in the order they were accepted. The slice is
// reused by the next call: Reconcile keeps copies only (Plan.Failures, Plan.Stop).
func (r *records) observed() []decision.Container {
	r.compact()
	r.obsBuf = r.obsBuf[:0]
	for _, t := range r.seq {
		r.obsBuf = append(r.obsBuf, t.Container)
	}
	return r.obsBuf
}

// active returns the containers not yet completed that can be stopped (they have a container id).
func (r *records) active() []*tracked {
	var out []*tracked
	for _, t := range r.seq {
		if t.Phase != contract.Completed && t.cid != nil {
			out = append(out, t)
		}
	}
	return out
}

// phases counts the recorded containers by phase; completed counts every finished one, dropped or
// not. It runs on every heartbeat: counters kept by setPhase, not a pass over every container (at
// 100,000 containers that pass was a quarter of a heartbeat's CPU, BenchmarkAMHeartbeat).
func (r *records) phases() (launching, running, stopping, completed int) {
	return r.launchingN, r.runningN, r.stoppingN, r.completedN
}

// setPhase moves t to phase p, keeping the phase counters and the version.
func (r *records) setPhase(t *tracked, p contract.Phase) {
	r.count(t.Phase, -1)
	t.Phase = p
	r.count(p, 1)
	r.version++
}

func (r *records) count(p contract.Phase, d int) {
	switch p {
	case contract.Launching:
		r.launchingN += d
	case contract.Running:
		r.runningN += d
	case contract.Stopping:
		r.stoppingN += d
	}
}

// adopted records a container an earlier attempt of the AM started and YARN handed over to this one:
// it is running.
func (r *records) adopted(id, node string, res contract.Capability, cid *hadooppb.ContainerIdProto) *tracked {
	t := &tracked{Container: decision.Container{ID: id, Node: node, AskID: -1, Resources: res}, cid: cid}
	r.byID[id] = t
	r.seq = append(r.seq, t)
	r.setPhase(t, contract.Running)
	return t
}

// restoreCounts adds the finished containers of earlier attempts, which this attempt has no records
// of: to Reconcile they are forgotten ones.
func (r *records) restoreCounts(s *book.State) {
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

// tracked is a container the AM accepted, with what it needs to launch and stop it.
type tracked struct {
	decision.Container
	cid *hadooppb.ContainerIdProto // to stop and release it (nil when the RM's allocation was not kept)
	// token is the container token for startContainers; dropped once the start returned (it is most
	// of a container's allocation).
	token *hadooppb.TokenProto
	infos map[string][]resources.Info
	// topology: the GPU topology its launcher reported, per resource (checked: am.Report); dropped
	// when it ends, as only live containers' GPUs are drawn on the GPU map.
	topology map[string]contract.GPUTopology
	// reportFailure is the launcher's discovery failure, if it reported one; stderrTail the last lines
	// of the worker's stderr, if its launcher reported them after it exited non-zero.
	reportFailure string
	stderrTail    string
	// workerExited: the launcher reported the worker's exit; YARN's report of the end follows.
	workerExited bool
	// discoveryEvent: a discovery-failed event was emitted for it (from the report or its exit).
	discoveryEvent bool
	// stopAfterLaunch: the requirement went down while its launch was in flight; stop it once started.
	stopAfterLaunch bool
	// releasedAsked: the AM stops it because the requirement went down (a scale-down, a framework's
	// demand, an idle GPU given back): its end is told as a release, not as a stop.
	releasedAsked bool
	// sharedGPUCounts: the AM stopped it for a GPU another live container of its node holds, and its
	// end counts as a failure (gpucheck.go).
	sharedGPUCounts bool
	// reported: its launcher reported its infos; port: the free port it reported (gang mode); rank:
	// its place in the gang round, once every rank reported (gang.go).
	reported bool
	port     int
	rank     *contract.Rendezvous
	// forgotten: dropped from the records (config.FinishedHistory); records.compact removes it.
	forgotten bool
	// requestedAt (its ask first sent), allocatedAt, launchedAt, finishedAt: the web UI's timeline
	// (zero: not known, e.g. adopted from an earlier attempt).
	requestedAt, allocatedAt, launchedAt, finishedAt time.Time
	// heardAt: its launcher's last liveness message; vouchedAt: its NodeManager last said it runs;
	// probing: its NodeManager is being asked (liveness.go).
	heardAt, vouchedAt time.Time
	probing            bool
	// notice: the ResourceManager warned that it takes the container back (preemption.go).
	notice *contract.PreemptionNotice
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

// sharedGPUFreeStops is how many containers per node the AM stops for a shared GPU without counting
// them as failures.
const sharedGPUFreeStops = 2

// gpuUUIDs are the UUIDs of the GPUs t's launcher reported.
func gpuUUIDs(t *tracked) []string {
	var out []string
	for _, infos := range t.infos {
		for _, in := range infos {
			if u := in[contract.InfoUUID]; u != "" {
				out = append(out, u)
			}
		}
	}
	return out
}

// gpuCount is how many GPUs t holds: those its launcher reported with a UUID, else what YARN gave it.
func gpuCount(t *tracked) int64 {
	if n := len(gpuUUIDs(t)); n > 0 {
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
