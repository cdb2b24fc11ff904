package events

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
)

// This file is the AM's event log (docs/running.md#http-api): typed events, each with a message a user can act on,
// kept in a bounded ring with increasing ids, and subscriptions that never block the AM loop. The SSE
// endpoint (sse.go), the web UI, `submit` and `status` all read it.

// Event constructors: one per type, so every message reads the same wherever it is emitted.

// Requested: n more containers of size c were asked for.
func Requested(n int, c contract.Capability) contract.Event {
	return contract.Event{Type: contract.EventRequested, Severity: contract.SeverityInfo, Count: n, Resources: c,
		Message: fmt.Sprintf("requested %d TaskExecutor container(s) of %s", n, c)}
}

// Allocated: the RM allocated container id on node and the AM accepted it.
func Allocated(id, node string, c contract.Capability, latency time.Duration) contract.Event {
	msg := fmt.Sprintf("%s allocated on %s (%s)", id, node, c)
	if latency > 0 {
		msg += fmt.Sprintf(" after %s", latency.Round(time.Millisecond))
	}
	return contract.Event{Type: contract.EventAllocated, Severity: contract.SeverityInfo, Container: id, Node: node, Resources: c, Message: msg}
}

// Launched: the NM started the TaskExecutor.
func Launched(id, node string) contract.Event {
	return contract.Event{Type: contract.EventLaunched, Severity: contract.SeverityInfo, Container: id, Node: node,
		Message: fmt.Sprintf("TaskExecutor %s started on %s", id, node)}
}

// ResourceInfo: the launcher reported the devices it found ("gpu: 0,1").
func ResourceInfo(id, node string, infos map[string][]resources.Info) contract.Event {
	names := make([]string, 0, len(infos))
	for n := range infos {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, n+" "+infoSummary(infos[n]))
	}
	return contract.Event{Type: contract.EventResourceInfo, Severity: contract.SeverityInfo, Container: id, Node: node, Infos: infos,
		Message: fmt.Sprintf("TaskExecutor %s on %s has %s", id, node, strings.Join(parts, ", "))}
}

// GPUTopologyWorse: container id on node got the GPUs infos of resource, linked by link at worst,
// while the node's best set of as many is linked by best: --topology prefer took the best free set
// (docs/gpus.md#topology-connected-sets).
func GPUTopologyWorse(id, node, resource string, infos []resources.Info, link, best string) contract.Event {
	return contract.Event{Type: contract.EventGPUTopology, Severity: contract.SeverityWarning, Container: id, Node: node, Key: resource,
		Infos: map[string][]resources.Info{resource: infos}, Link: link, BestLink: best,
		Message: fmt.Sprintf("TaskExecutor %s on %s got %s %s linked by %s at worst; the node's best set of %d is linked by %s but was not free, so --topology prefer took the best free set (--topology wait waits for a connected set instead)",
			id, node, resource, infoSummary(infos), link, len(infos), best)}
}

// infoSummary is the main property of each info ("index" for GPUs), comma-separated.
func infoSummary(infos []resources.Info) string {
	var vals []string
	for _, in := range infos {
		if v, ok := in[contract.InfoIndex]; ok {
			vals = append(vals, v)
			continue
		}
		var kv []string
		for _, k := range in.Keys() {
			kv = append(kv, k+"="+in[k])
		}
		vals = append(vals, strings.Join(kv, " "))
	}
	return strings.Join(vals, ",")
}

// Completed: a TaskExecutor ended; the severity and message follow its exit class.
func Completed(id, node string, e decision.Exit) contract.Event {
	st := e.Status
	ev := contract.Event{Type: contract.EventCompleted, Severity: contract.SeverityInfo, Container: id, Node: node, ExitStatus: &st, ExitClass: e.Class,
		Reason: strings.TrimSpace(e.Diagnostics), Message: fmt.Sprintf("TaskExecutor %s on %s %s", id, node, decision.Describe(e.Status, e.Class)),
		StderrTail: e.StderrTail}
	if e.Class.Counts() {
		ev.Severity = contract.SeverityError
		ev.Message += " (counts as a failure)"
	} else if e.Class != contract.ExitSucceeded {
		ev.Severity = contract.SeverityWarning
	}
	return ev
}

// Released: the AM stopped TaskExecutor id because the requirement went down (yarn-am scale, a
// framework's demand, idle GPUs given back): the end it asked for, an info event of type completed,
// not counted as a failure.
func Released(id, node string, e decision.Exit) contract.Event {
	st := e.Status
	return contract.Event{Type: contract.EventCompleted, Severity: contract.SeverityInfo, Container: id, Node: node, ExitStatus: &st, ExitClass: e.Class,
		Reason: strings.TrimSpace(e.Diagnostics), Message: fmt.Sprintf("TaskExecutor %s on %s released: no longer needed (the requirement went down; the ApplicationMaster stopped it, exit status %d, not counted as a failure)", id, node, st)}
}

// AllocationRejected: the RM refused the request for key (e.g. external-resource.gpu.amount)
// because requested is more than the cluster allows (maximum < 0: the type is unknown to the cluster).
func AllocationRejected(key string, requested, maximum int64, yarnType, rmMessage string) contract.Event {
	ev := contract.Event{Type: contract.EventAllocationRejected, Severity: contract.SeverityError, Key: key, Requested: requested, Reason: rmMessage}
	switch {
	case key == "":
		ev.Message = "allocation rejected by the ResourceManager: " + rmMessage
	case maximum < 0:
		ev.Message = fmt.Sprintf("allocation rejected: %s = %d asks for resource type %s, which the cluster does not know (its yarn.resource-types); remove the resource or use a type the cluster defines", key, requested, yarnType)
	default:
		m := maximum
		ev.Maximum = &m
		ev.Message = fmt.Sprintf("allocation rejected: %s = %d, but the cluster allows at most %d %s per container (the scheduler's maximum allocation); lower %s to %d or less", key, requested, maximum, yarnType, key, maximum)
	}
	return ev
}

// NotEnoughResources: asks have been pending past the timeout; ev carries the evidence.
func NotEnoughResources(ev contract.Evidence, action string) contract.Event {
	var b strings.Builder
	fmt.Fprintf(&b, "not enough resources: %d TaskExecutor container(s) of %s still pending after %s", ev.Pending, ev.Asked, ev.PendingFor)
	switch {
	case ev.Partition != "" && len(ev.ClusterTotal) > 0:
		fmt.Fprintf(&b, "; node-label partition %q (%d nodes) total %s, free %s", ev.Partition, ev.Nodes, ev.ClusterTotal, ev.ClusterFree)
	case len(ev.ClusterTotal) > 0:
		fmt.Fprintf(&b, "; cluster (%d nodes) total %s, free %s", ev.Nodes, ev.ClusterTotal, ev.ClusterFree)
	}
	if ev.LargestNode != "" {
		fmt.Fprintf(&b, "; largest node %s has %s (free %s)", ev.LargestNode, ev.LargestCap, ev.LargestFree)
	}
	if len(ev.Headroom) > 0 {
		fmt.Fprintf(&b, "; scheduler headroom for this application %s", ev.Headroom)
	}
	if action == decision.PendingFail {
		b.WriteString("; failing the application (--on-pending-timeout=fail)")
	} else {
		b.WriteString("; still waiting (lower the requirement with PUT /api/v1/requirements, or free capacity)")
	}
	e := ev
	return contract.Event{Type: contract.EventNotEnoughResources, Severity: contract.SeverityWarning, Count: ev.Pending, Resources: ev.Asked, Evidence: &e, Message: b.String()}
}

// ResourcesAvailable: nothing is pending any more after a not-enough-resources event.
func ResourcesAvailable(why string) contract.Event {
	return contract.Event{Type: contract.EventResourcesAvailable, Severity: contract.SeverityInfo, Reason: why,
		Message: "no TaskExecutor container is pending any more (" + why + "); the not-enough-resources condition is cleared"}
}

// LaunchFailed: the NM refused to start the container.
func LaunchFailed(id, node, reason string) contract.Event {
	return contract.Event{Type: contract.EventLaunchFailed, Severity: contract.SeverityError, Container: id, Node: node, Reason: reason,
		Message: fmt.Sprintf("the NodeManager %s could not start TaskExecutor %s: %s", node, id, reason)}
}

// DiscoveryFailed: the launcher's resource discovery failed (exit 90); reason is the script's.
func DiscoveryFailed(id, node, resource, reason string) contract.Event {
	what := "resource discovery"
	if resource != "" {
		what = "discovery of resource " + resource
	}
	return contract.Event{Type: contract.EventDiscoveryFailed, Severity: contract.SeverityError, Container: id, Node: node, Key: resource, Reason: reason,
		Message: fmt.Sprintf("%s failed in TaskExecutor %s on %s, the worker was not started: %s", what, id, node, reason)}
}

// NodeExcluded: node is excluded (blacklisted) for this application until `until`.
func NodeExcluded(node string, failures int, window, timeout time.Duration) contract.Event {
	return contract.Event{Type: contract.EventNodeExcluded, Severity: contract.SeverityWarning, Node: node, Count: failures,
		Message: fmt.Sprintf("node %s excluded for %s: %d TaskExecutor failures on it within %s (--node-max-failures, --node-exclusion-timeout)", node, timeout, failures, window)}
}

// NodeExclusionLifted: the exclusion of node timed out.
func NodeExclusionLifted(node string) contract.Event {
	return contract.Event{Type: contract.EventNodeExclusionLifted, Severity: contract.SeverityInfo, Node: node,
		Message: fmt.Sprintf("node %s is no longer excluded (--node-exclusion-timeout passed)", node)}
}

// NodeUnhealthy: the RM reported node in state (LOST, UNHEALTHY, DECOMMISSIONED, ...).
func NodeUnhealthy(node, state, report string) contract.Event {
	msg := fmt.Sprintf("node %s is %s", node, state)
	if report != "" {
		msg += ": " + report
	}
	msg += "; its containers end and are replaced without counting as failures"
	return contract.Event{Type: contract.EventNodeUnhealthy, Severity: contract.SeverityWarning, Node: node, Reason: state, Message: msg}
}

// Preempted: the scheduler preempted container id (it is replaced; not counted).
func Preempted(id, node string) contract.Event {
	return contract.Event{Type: contract.EventPreempted, Severity: contract.SeverityWarning, Container: id, Node: node,
		Message: fmt.Sprintf("TaskExecutor %s on %s was preempted by the scheduler; it is replaced and not counted as a failure", id, node)}
}

// FailureLimitReached: the application fails for reason.
func FailureLimitReached(reason string) contract.Event {
	return contract.Event{Type: contract.EventFailureLimitReached, Severity: contract.SeverityError, Reason: reason, Message: "the application fails: " + reason}
}

// RequirementChanged: the declared TaskExecutor count changed from old to now.
func RequirementChanged(old, now int, by string) contract.Event {
	return contract.Event{Type: contract.EventRequirementChanged, Severity: contract.SeverityInfo, Count: now,
		Message: fmt.Sprintf("TaskExecutor requirement changed from %d to %d (%s)", old, now, by)}
}

// ScaleDeferred: the job's framework accepted a change of the requirement that it carries out
// itself, later (framework.Deferred); the count is still now.
func ScaleDeferred(now, wanted int, by, note string) contract.Event {
	return contract.Event{Type: contract.EventRequirementChanged, Severity: contract.SeverityInfo, Count: now,
		Message: fmt.Sprintf("TaskExecutor requirement %d → %d accepted (%s); it stays %d for now: %s", now, wanted, by, now, note)}
}

// Finished: the application's final status.
func Finished(out decision.Outcome) contract.Event {
	sev := contract.SeverityInfo
	if out.Status != contract.Succeeded {
		sev = contract.SeverityError
	}
	return contract.Event{Type: contract.EventFinished, Severity: sev, Status: out.Status, Reason: out.Diagnostics,
		Message: fmt.Sprintf("application finished: %s: %s", out.Status, out.Diagnostics)}
}

// AMRestarted: attempt took over the running TaskExecutors adopted from an earlier attempt; state
// says whether the earlier attempt's saved state was found.
func AMRestarted(attempt string, adopted []string, state bool) contract.Event {
	msg := fmt.Sprintf("ApplicationMaster %s took over %d running TaskExecutor(s) from the previous attempt", attempt, len(adopted))
	if state {
		msg += " with its saved state (counts, failure policy, resource infos, events)"
	} else {
		msg += "; no saved state was found"
	}
	return contract.Event{Type: contract.EventAMRestarted, Severity: contract.SeverityWarning, Count: len(adopted), Message: msg}
}

// GangFormed: the gang of round's n members is allocated (on nodes nodes, after took) and starts.
func GangFormed(round, n, nodes int, took time.Duration) contract.Event {
	return contract.Event{Type: contract.EventGangFormed, Severity: contract.SeverityInfo, Count: n,
		Message: fmt.Sprintf("gang round %d formed: %d TaskExecutors on %d node(s) allocated in %s; starting them all", round, n, nodes, took.Round(time.Millisecond))}
}

// GangRestarted: the gang starts round round of size members, because why; change is "grow" or
// "shrink" when an elastic gang changes size (docs/running.md#elastic-gangs), "" otherwise.
func GangRestarted(round, size int, change, why string) contract.Event {
	at := fmt.Sprintf("%d TaskExecutors", size)
	switch change {
	case "grow":
		at = fmt.Sprintf("%d TaskExecutors (grows)", size)
	case "shrink":
		at = fmt.Sprintf("%d TaskExecutors (shrinks)", size)
	}
	return contract.Event{Type: contract.EventGangRestarted, Severity: contract.SeverityWarning, Reason: why, Count: size,
		Message: fmt.Sprintf("gang restarts as round %d at %s: %s", round, at, why)}
}

// Rendezvous: every rank of round reported. Rank 0's address is not in it: events are public,
// and the address is published before rank 0 binds its port (visibility.go).
func Rendezvous(round, ranks int) contract.Event {
	return contract.Event{Type: contract.EventRendezvous, Severity: contract.SeverityInfo, Count: ranks,
		Message: fmt.Sprintf("gang round %d: all %d ranks reported; their launchers read rank 0's address over HTTPS", round, ranks)}
}

// PreemptionWarning: the ResourceManager will take container id back, by deadline as the AM
// knows it (wait after the warning); why says whether it named the container or a rank of its gang.
func PreemptionWarning(id, node string, deadline time.Time, wait time.Duration, why string) contract.Event {
	return contract.Event{Type: contract.EventPreemptionWarning, Severity: contract.SeverityWarning, Container: id, Node: node, Deadline: deadline, Reason: why,
		Message: fmt.Sprintf("TaskExecutor %s on %s will be preempted (%s): expected by %s, %s from now; its worker is told to checkpoint", id, node, why, deadline.UTC().Format(time.RFC3339), wait)}
}

// DefaultCapacity is how many events the log keeps.
const DefaultCapacity = 10000

// defaultBytes bounds the memory of the kept events (their JSON size), whatever their count:
// one launcher report may carry up to contract.MaxReportBytes of infos, so 10,000 events of reports
// could hold a GiB; 16 MiB keeps thousands of ordinary events (a few hundred bytes each) and at
// least 120 of the largest (docs/security.md#flood-bounds, TestEventLogIsBoundedInBytes).
const defaultBytes = 16 << 20

// Log is a bounded, in-memory log of events with increasing ids (1, 2, ...), bounded in count
// and in bytes. Add never blocks: subscribers are woken through a one-slot channel and read from the
// ring themselves, so a slow reader only ever loses events that fell out of the ring, and learns so
// through a gap event.
type Log struct {
	mu       sync.Mutex
	ring     []contract.Event // ring[(id-1) % cap]
	sizes    []int            // sizes[(id-1) % cap]: the JSON size of the event kept there
	last     uint64           // id of the newest event; 0 when empty
	first    uint64           // id of the oldest event kept (last+1 when none is)
	bytes    int              // the sum of the kept events' sizes
	maxBytes int
	subs     map[*subscription]struct{}
	now      func() time.Time
	hook     func(contract.Event) // called after each Add, outside the lock (metrics, logs)
}

// NewLog returns a log keeping the last capacity events (DefaultCapacity if <= 0), at most
// defaultBytes of them.
func NewLog(capacity int) *Log {
	return newLogBytes(capacity, defaultBytes)
}

// newLogBytes returns a log keeping the last capacity events (DefaultCapacity if <= 0) and
// of them only as many of the newest as fit in maxBytes of JSON (defaultBytes if <= 0); the
// newest event is always kept.
func newLogBytes(capacity, maxBytes int) *Log {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	if maxBytes <= 0 {
		maxBytes = defaultBytes
	}
	return &Log{ring: make([]contract.Event, capacity), sizes: make([]int, capacity), first: 1, maxBytes: maxBytes,
		subs: map[*subscription]struct{}{}, now: time.Now}
}

// OnAdd sets a function called with every event after it is added (it must not block).
func (l *Log) OnAdd(f func(contract.Event)) {
	l.mu.Lock()
	l.hook = f
	l.mu.Unlock()
}

// eventSize is what an event costs the log: its JSON size (what readers are sent), or a guess when it
// cannot be encoded.
func eventSize(e contract.Event) int {
	data, err := json.Marshal(e)
	if err != nil {
		return len(e.Message) + len(e.Reason) + 512
	}
	return len(data)
}

// AddAll adds evs in order (Add).
func (l *Log) AddAll(evs []contract.Event) {
	for _, e := range evs {
		l.Add(e)
	}
}

// Add stamps e with the next id and the time (unless set) and wakes the subscribers; the oldest
// events go when the count or the bytes would exceed the bounds.
func (l *Log) Add(e contract.Event) contract.Event {
	l.mu.Lock()
	l.last++
	e.ID = l.last
	if e.Time.IsZero() {
		e.Time = l.now().UTC()
	}
	size := eventSize(e)
	n := uint64(len(l.ring))
	for l.first < l.last && (l.last-l.first >= n || l.bytes+size > l.maxBytes) {
		i := (l.first - 1) % n
		l.bytes -= l.sizes[i]
		l.ring[i], l.sizes[i] = contract.Event{}, 0 // the slot must not keep a dropped event alive
		l.first++
	}
	i := (e.ID - 1) % n
	l.ring[i], l.sizes[i] = e, size
	l.bytes += size
	for s := range l.subs {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	hook := l.hook
	l.mu.Unlock()
	if hook != nil {
		hook(e)
	}
	return e
}

// LastID is the id of the newest event (0 if none).
func (l *Log) LastID() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// Bytes is the JSON size of the events kept.
func (l *Log) Bytes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bytes
}

// oldestLocked is the id of the oldest event still kept.
func (l *Log) oldestLocked() uint64 {
	return l.first
}

// Since returns the events with ids greater than after, at most limit of them (all if limit <= 0),
// oldest first. If some of them have already fallen out of the ring, the first element is a gap
// event whose ID is the last lost id (resuming after it continues without loss).
func (l *Log) Since(after uint64, limit int) []contract.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	if after >= l.last {
		return nil
	}
	var out []contract.Event
	from := after + 1
	if oldest := l.oldestLocked(); from < oldest {
		lost := oldest - from
		out = append(out, contract.Event{ID: oldest - 1, Time: l.now().UTC(), Type: contract.EventGap, Severity: contract.SeverityWarning, Count: int(lost),
			Message: fmt.Sprintf("%d event(s) (ids %d-%d) are no longer kept (the log keeps at most the last %d, within %d KiB); continuing with id %d", lost, from, oldest-1, len(l.ring), l.maxBytes>>10, oldest)})
		from = oldest
	}
	for id := from; id <= l.last; id++ {
		if limit > 0 && len(out) >= limit {
			break
		}
		out = append(out, l.ring[(id-1)%uint64(len(l.ring))])
	}
	return out
}

// Latest returns the newest n events, oldest first.
func (l *Log) Latest(n int) []contract.Event {
	l.mu.Lock()
	last, oldest := l.last, l.oldestLocked()
	l.mu.Unlock()
	if last == 0 {
		return nil
	}
	after := uint64(0)
	if last > uint64(n) {
		after = last - uint64(n)
	}
	if after+1 < oldest {
		after = oldest - 1
	}
	return l.Since(after, n)
}

// subscription follows the log from a position; see EventLog.Subscribe.
type subscription struct {
	log    *Log
	wake   chan struct{}
	cursor uint64
}

// Subscribe starts following the log after event id `after` (0: from the oldest kept event). Close
// the subscription when done.
func (l *Log) Subscribe(after uint64) *subscription {
	s := &subscription{log: l, wake: make(chan struct{}, 1), cursor: after}
	l.mu.Lock()
	l.subs[s] = struct{}{}
	l.mu.Unlock()
	return s
}

// Next waits until there are events after the subscription's position and returns them (at most
// max if max > 0), advancing the position; it returns ctx's error when ctx ends first.
func (s *subscription) Next(ctx context.Context, max int) ([]contract.Event, error) {
	for {
		if evs := s.log.Since(s.cursor, max); len(evs) > 0 {
			s.cursor = evs[len(evs)-1].ID
			return evs, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.wake:
		}
	}
}

// Close unsubscribes.
func (s *subscription) Close() {
	s.log.mu.Lock()
	delete(s.log.subs, s)
	s.log.mu.Unlock()
}

// subscribers is the number of open subscriptions (for tests and metrics).
func (l *Log) Subscribers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.subs)
}

// IdleGPURelease: every GPU of container id stayed idle for idle (taskexecutor.idle-gpu-release =
// after); its worker, with warned containers in all (a gang's round), is told as of a preemption,
// and the AM releases it by deadline (wait from now), the declared count going from from to to
// (docs/gpus.md#idle-gpus-given-back).
func IdleGPURelease(id, node string, gpus int64, idle, after time.Duration, deadline time.Time, wait time.Duration, from, to, warned int) contract.Event {
	who := "its worker is told"
	if warned > 1 {
		who = fmt.Sprintf("the %d ranks of its gang round are told", warned)
	}
	return contract.Event{Type: contract.EventIdleGPURelease, Severity: contract.SeverityWarning, Container: id, Node: node, Deadline: deadline,
		Key: "taskexecutor.idle-gpu-release", Count: int(gpus),
		Message: fmt.Sprintf("the %d GPU(s) of TaskExecutor %s on %s have been idle (every sample under %.0f%%) for %s (taskexecutor.idle-gpu-release = %s): %s to checkpoint, and the AM releases it by %s, %s from now (from %d TaskExecutors to %d)",
			gpus, id, node, contract.IdleGPUPercent, idle.Round(time.Second), after, who, deadline.UTC().Format(time.RFC3339), wait, from, to)}
}

// IdleGPUReleased: the AM released container id for its idle GPUs; the declared count went from
// from to to, and the container is not replaced.
func IdleGPUReleased(id, node string, gpus int64, from, to int) contract.Event {
	return contract.Event{Type: contract.EventIdleGPUReleased, Severity: contract.SeverityInfo, Container: id, Node: node,
		Key: "taskexecutor.idle-gpu-release", Count: int(gpus),
		Message: fmt.Sprintf("released TaskExecutor %s on %s and its %d idle GPU(s): the job runs with %d TaskExecutors instead of %d, and the container is not replaced",
			id, node, gpus, to, from)}
}

// IdleGPUKept: container id's GPUs stayed idle for idle (taskexecutor.idle-gpu-release = after;
// 0: at its release's deadline) but the job cannot give it back, for why; said once per idle spell.
func IdleGPUKept(id, node string, gpus int64, idle, after time.Duration, why string) contract.Event {
	spell := fmt.Sprintf("for %s", idle.Round(time.Second))
	if idle <= 0 {
		spell = "until its release was due"
	}
	return contract.Event{Type: contract.EventIdleGPUKept, Severity: contract.SeverityWarning, Container: id, Node: node,
		Key: "taskexecutor.idle-gpu-release", Count: int(gpus), Reason: why,
		Message: fmt.Sprintf("the %d GPU(s) of TaskExecutor %s on %s have been idle %s (taskexecutor.idle-gpu-release = %s), but it cannot be released: %s; it keeps its GPUs",
			gpus, id, node, spell, after, why)}
}

// PlacementMode says how taskexecutor.placement is kept: by the ResourceManager from
// SchedulingRequests, or by the AM (handler disabled).
func PlacementMode(schedulingRequests bool, handler string, maxPerNode int, attributes string) contract.Event {
	what := fmt.Sprintf("max-per-node = %d", maxPerNode)
	if maxPerNode == 0 {
		what = "node-attributes = " + attributes
	} else if attributes != "[]" {
		what += ", node-attributes = " + attributes
	}
	msg := fmt.Sprintf("taskexecutor.placement (%s) is sent to the ResourceManager as SchedulingRequests with placement constraints (yarn.resourcemanager.placement-constraints.handler = %s)", what, handler)
	if !schedulingRequests {
		msg = fmt.Sprintf("taskexecutor.placement (%s) is kept by the ApplicationMaster: the ResourceManager's yarn.resourcemanager.placement-constraints.handler is %s, so allocations beyond it are released and full nodes blacklisted", what, handler)
	}
	return contract.Event{Type: contract.EventPlacement, Severity: contract.SeverityInfo, Message: msg}
}

// PlacementNodeFull: node runs max-per-node TaskExecutors (the AM keeps the limit); it is
// blacklisted until one of them ends.
func PlacementNodeFull(node string, running, maxPerNode int) contract.Event {
	return contract.Event{Type: contract.EventPlacement, Severity: contract.SeverityInfo, Node: node, Count: running,
		Message: fmt.Sprintf("node %s runs %d TaskExecutors, taskexecutor.placement.max-per-node = %d: blacklisted until one of them ends", node, running, maxPerNode)}
}

// PlacementRejected: the RM could not place n containers of a SchedulingRequest; the AM asks again.
func PlacementRejected(n int32, reason string, maxPerNode int, attributes string) contract.Event {
	return contract.Event{Type: contract.EventPlacement, Severity: contract.SeverityWarning, Count: int(n),
		Message: fmt.Sprintf("the ResourceManager could not place %d TaskExecutors under taskexecutor.placement (max-per-node = %d, node-attributes = %s): %s; asking again (too few nodes qualify?)", n, maxPerNode, attributes, reason)}
}

// PlacementRefused: the ResourceManager failed an allocate because its placement handler cannot place
// SchedulingRequests, although the site files staged with the job named handler. max-per-node is
// kept by the AM from then on (a warning); node attributes cannot be, so then the job ends (an error
// naming the key).
func PlacementRefused(handler string, maxPerNode int, attributes, rmSaid string) contract.Event {
	said := decision.CutText(rmSaid, 300)
	if attributes != "[]" {
		return contract.Event{Type: contract.EventPlacement, Severity: contract.SeverityError, Key: "taskexecutor.placement.node-attributes",
			Message: fmt.Sprintf("taskexecutor.placement.node-attributes = %s cannot be honoured: the ResourceManager refuses SchedulingRequests (the job's site files say yarn.resourcemanager.placement-constraints.handler = %s, the RM said: %s); ask the cluster's administrators for the placement-processor handler, or drop node-attributes", attributes, handler, said)}
	}
	return contract.Event{Type: contract.EventPlacement, Severity: contract.SeverityWarning, Key: "taskexecutor.placement",
		Message: fmt.Sprintf("taskexecutor.placement (max-per-node = %d) is now kept by the ApplicationMaster: the ResourceManager refuses SchedulingRequests although the job's site files say yarn.resourcemanager.placement-constraints.handler = %s (the RM said: %s); allocations beyond it are released and full nodes blacklisted", maxPerNode, handler, said)}
}
