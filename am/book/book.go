package book

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

// Book is the AM's bookkeeping, one value of each concern's type; the AM holds one and guards it
// with its mutex (package doc, "Locking").
type Book struct {
	// Want: how many TaskExecutors are wanted, and who said so (want.go).
	Want Want
	// Asks: the outstanding asks and what is still to send of them (asks.go).
	Asks Asks
	// Excl: the blacklist changes still to send (exclusions.go).
	Excl Exclusions
	// Nodes: the node listings of the status document and of locality spreading (nodes.go).
	Nodes Nodes
	// Sick: the GPUs of each node that read unhealthy (sick.go).
	Sick SickGPUs
	// Idle: the release of containers whose GPUs stayed idle (idle.go).
	Idle Idle
	// Place: taskexecutor.placement's SchedulingRequests and full nodes (placement.go); the AM sets
	// it (NewPlacement).
	Place Placement
	// Gang: gang mode's rounds (gang.go).
	Gang Gang
	// Live: the liveness check's memory (liveness.go).
	Live Liveness
	// Notices: the preemption notices' long polls (notices.go).
	Notices Notices
	// End: the AM finishing, the failure policy's verdict (end.go).
	End End
	// Plans: the loop's memory between plans (plan.go).
	Plans Plans
}

// Gauges is the metrics' gauges of the containers now: the recorded ones by phase (completed: every
// finished one), the containers asked for and not allocated yet, the count wanted and how many nodes
// are excluded (excluded, the failure policy's). The AM sets them (its metrics).
func (b *Book) Gauges(r *Records, excluded int) (byPhase map[contract.Phase]int, pending, wanted, excludedNodes int) {
	launching, running, stopping, completed := r.Phases()
	byPhase = map[contract.Phase]int{contract.Launching: launching, contract.Running: running, contract.Stopping: stopping, contract.Completed: completed}
	return byPhase, b.Asks.Pending(), b.Want.Count(), excluded
}

// New returns a book that wants n TaskExecutors, as by says (Want.By), and holds nothing else yet.
func New(n int, by string) Book {
	return Book{Want: NewWant(n, by), Asks: NewAsks(), Excl: NewExclusions(), Notices: NewNotices()}
}

// The Book's verbs that tie its concerns together, each with the state of several of them.

// stopping: no new containers are wanted (Observed.Stopping).
func (b *Book) stopping(m Moment) bool { return b.End.Ending() || m.DriverExited }

// holding: no new asks now (Observed.HoldNewAsks): the restart backoff or the gang's wait.
func (b *Book) holding(m Moment) bool { return m.Now.Before(b.Plans.holdUntil) || m.GangHolding }

// Tick does what time alone changes before a plan: the failure policy p lifts the exclusions that
// timed out (sent as blacklist removals, unless the node stays blacklisted for
// taskexecutor.placement.max-per-node: Place.Full) and the restart backoff is read. It returns the
// events of the lifted exclusions.
func (b *Book) Tick(now time.Time, p *decision.Policy) []contract.Event {
	var evs []contract.Event
	for _, n := range p.Lift(now) {
		if !b.Place.Full(n) {
			b.Excl.Lift(n)
		}
		evs = append(evs, events.NodeExclusionLifted(n))
	}
	b.Plans.holdUntil = p.RestartAt(now)
	return evs
}

// Inputs is the next plan's inputs (after Tick).
func (b *Book) Inputs(r *Records, m Moment) PlanInputs {
	return PlanInputs{Records: r.Version(), Asks: b.Asks.Version(), Instances: b.Want.Count(), Stopping: b.stopping(m),
		Hold: b.holding(m), Round: m.Round, Elastic: m.Elastic}
}

// Settled says whether the next plan would change nothing: no allocation is new and the inputs are
// those of the last plan that changed nothing.
func (b *Book) Settled(r *Records, m Moment) bool {
	return len(b.Plans.newAllocs) == 0 && b.Plans.idle != nil && *b.Plans.idle == b.Inputs(r, m)
}

// Observed is the next Reconcile's Observed (after Tick); p's excluded nodes are in it when an
// allocation is new.
func (b *Book) Observed(r *Records, p *decision.Policy, m Moment) decision.Observed {
	obs := decision.Observed{Asks: b.Asks.Table(), NewAllocations: b.Plans.newAllocs, NextAskID: b.Asks.NextID(), Stopping: b.stopping(m),
		HoldNewAsks: b.holding(m), Containers: r.Observed(), Forgotten: r.Forgotten(), Round: m.Round,
		Elastic: m.Elastic, StopFirst: b.Want.StopFirst()}
	if len(b.Plans.newAllocs) > 0 {
		for _, n := range p.Excluded() {
			if obs.Excluded == nil {
				obs.Excluded = map[string]bool{}
			}
			obs.Excluded[n] = true
		}
	}
	return obs
}

// Planned takes a plan Reconcile made of obs, whose inputs were in: the new allocations are planned,
// and a plan that changed nothing (and had none) is remembered as idle.
func (b *Book) Planned(p decision.Plan, obs decision.Observed, in PlanInputs) {
	b.Plans.idle = nil
	if len(obs.NewAllocations) == 0 && changesNothing(p, obs) {
		b.Plans.idle = &in
	}
	b.Plans.newAllocs = nil
}

// WouldAsk says whether the next plan adds an ask: a dry run of Reconcile on spec (after Tick),
// skipped when the last plan changed nothing and nothing it depends on changed since.
func (b *Book) WouldAsk(spec decision.Spec, r *Records, p *decision.Policy, m Moment) bool {
	if b.Settled(r, m) {
		return false
	}
	obs := b.Observed(r, p, m)
	dry := decision.Reconcile(spec, obs)
	return dry.NextAskID != max(obs.NextAskID, 1)
}

// Interval is the wait before the next heartbeat: fast while launches are in flight or asks or
// releases (releasing) wait to be sent, slow when idle, and never past the restart backoff's end.
func (b *Book) Interval(r *Records, releasing bool, now time.Time, fast, slow time.Duration) time.Duration {
	d := slow
	if r.InFlight() > 0 || b.Asks.Busy() || releasing {
		d = fast
	}
	if wait := b.Plans.holdUntil.Sub(now); wait > 0 && wait < d {
		d = wait + time.Millisecond // wake when the restart backoff ends
	}
	return d
}

// State is the durable state now, of the records r, the failure policy p and the book, saved by
// attempt with the latest events evs (at most StateEvents of them).
func (b *Book) State(r *Records, p *decision.Policy, attempt string, evs []contract.Event, now time.Time) State {
	s := State{Version: StateVersion, Attempt: attempt, Instances: b.Want.Count(), Policy: p.Snapshot(), Infos: map[string]Infos{}}
	s.Completed, s.Succeeded, s.Failed = r.Counts()
	if len(r.forgotten.FailedExits) > 0 || len(r.finished) > 0 {
		s.FailedExits = map[int32]int{}
		for k, v := range r.forgotten.FailedExits {
			s.FailedExits[k] += v
		}
		for _, t := range r.finished {
			if t.Exit.Class.Counts() && t.Exit.Class != contract.ExitSucceeded {
				s.FailedExits[t.Exit.Status]++
			}
		}
	}
	for _, t := range r.seq {
		if t.Phase != contract.Completed && len(t.Infos) > 0 {
			s.Infos[t.ID] = t.Infos
		}
	}
	s.Events = evs
	if len(b.Sick) > 0 {
		s.Sick = map[string][]string{}
		for node, uuids := range b.Sick {
			s.Sick[node] = slices.Sorted(maps.Keys(uuids))
		}
	}
	s.GivenBack = b.Idle.GivenState(now)
	return s
}

// Declare changes the count wanted to n on by's word, with the containers a scale-down stops first
// (Want.Set), unless the application is ending (End), and takes back the GPUs given back for
// idleness that n declares again (Idle.Retake). It returns the count before.
func (b *Book) Declare(n int, stopFirst []string, by string, now time.Time) (from int, err error) {
	if b.End.Ending() {
		return 0, errors.New("the application is finishing; its requirement can no longer change")
	}
	from = b.Want.Set(n, stopFirst, by)
	b.Idle.Retake(n-from, now) // GPUs given back for idleness and declared again
	return from, nil
}

// Judge feeds a TaskExecutor's end to the failure policy p: a node that cannot run the job's workers
// (docs/running.md#the-workers-own-error) or that saw too many failures is excluded (sent as a
// blacklist addition), and the application fails when every node of the cluster (clusterNodes) is
// excluded or TaskExecutors fail faster than the policy's rate.
func (b *Book) Judge(t *Container, p *decision.Policy, now time.Time, clusterNodes int) Verdict {
	var v Verdict
	fail := func(reason string) {
		if ev, ok := b.End.Fail(reason); ok {
			v.Failed = reason
			v.Events = append(v.Events, ev)
		}
	}
	d := p.RecordExit(now, t.Node, t.Exit.Class)
	if d.ExcludeNode == "" && t.Exit.Class == contract.ExitDiscoveryFailed && p.ExcludeUnfit(now, t.Node) {
		b.Excl.Exclude(t.Node)
		v.Unfit = t.Node
		v.Events = append(v.Events, NodeLacksEvent(t.Node, t.Exit.Diagnostics))
		if all, _ := p.AllExcluded(clusterNodes); all {
			fail(fmt.Sprintf("every node of the cluster (%d) is excluded: %v; the last one cannot run this job's workers: %s",
				clusterNodes, p.Excluded(), LacksText(t.Exit.Diagnostics)))
		}
	}
	if d.ExcludeNode != "" {
		cfg := p.Config()
		b.Excl.Exclude(d.ExcludeNode)
		v.Excluded, v.NodeFailures = d.ExcludeNode, d.NodeFailures
		v.Events = append(v.Events, events.NodeExcluded(d.ExcludeNode, d.NodeFailures, cfg.FailureWindow, cfg.NodeExclusionTimeout))
		if all, why := p.AllExcluded(clusterNodes); all {
			fail(why)
		}
	}
	if d.RateExceeded {
		fail(d.Reason)
	}
	return v
}

// Moment is the plan's moment at now: the gang's state read from the book's Gang (its elastic
// round decided for spec with the elastic interval and the gang timeout), and driverExited.
func (b *Book) Moment(now time.Time, driverExited bool, spec decision.Spec, elasticInterval, gangTimeout time.Duration) Moment {
	return Moment{Now: now, DriverExited: driverExited, GangHolding: b.Gang.Holding(now), Round: b.Gang.Round(),
		Elastic: b.Gang.Elastic(spec, now, elasticInterval, gangTimeout)}
}
