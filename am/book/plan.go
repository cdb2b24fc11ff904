package book

import (
	"slices"
	"time"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

// PlanInputs identifies Reconcile's input when no allocation is new: the versions of the records and
// the ask table and the few values beside them. Reconcile is pure, so when they are what they were
// for the last plan and that plan changed nothing, the next plan changes nothing either, and the
// heartbeat skips it: its cost then does not grow with the number of containers
// (am's BenchmarkAMHeartbeat, docs/performance.md#the-am-at-scale-simulated).
type PlanInputs struct {
	Records, Asks  uint64 // the versions of the AM's records and of Asks
	Instances      int    // Want's count
	Stopping, Hold bool
	Round          int
	Elastic        decision.ElasticObserved
}

// Plans is what the AM remembers between Reconcile's plans: the allocations the ResourceManager sent
// that no plan took yet (Allocated), whether something happened since Run last looked that it acts on
// at once (News, TakeNews), the end of the failure policy's restart backoff as of the last Tick, and
// the inputs of the last plan that changed nothing (Book.Planned, Book.Settled). The AM's mutex guards
// it (package doc).
type Plans struct {
	newAllocs []decision.Allocation
	news      bool
	holdUntil time.Time
	idle      *PlanInputs
}

// Allocated: the RM allocated l; the next plan matches it to an ask.
func (p *Plans) Allocated(l decision.Allocation) { p.newAllocs = append(p.newAllocs, l) }

// News: an allocate brought allocations or completions, or a container ended outside one (a lost
// TaskExecutor, a sick GPU): Run plans again at once instead of after the heartbeat's interval.
func (p *Plans) News() { p.news = true }

// TakeNews says whether there was news since it was last taken, and forgets it.
func (p *Plans) TakeNews() bool {
	n := p.news
	p.news = false
	return n
}

// Moment is what a plan's inputs take from outside the book at one time: the gang's state (gang
// mode) and whether driver mode's driver exited.
type Moment struct {
	Now          time.Time
	DriverExited bool
	// GangHolding: the gang waits after a round that timed out (no new asks); Round is its current
	// round, Elastic what time decides for an elastic gang's round.
	GangHolding bool
	Round       int
	Elastic     decision.ElasticObserved
}

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

// stopping: no new containers are wanted (Observed.Stopping).
func (b *Book) stopping(m Moment) bool { return b.End.Ending() || m.DriverExited }

// holding: no new asks now (Observed.HoldNewAsks): the restart backoff or the gang's wait.
func (b *Book) holding(m Moment) bool { return m.Now.Before(b.Plans.holdUntil) || m.GangHolding }

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

// changesNothing: performing p would change no state and queue nothing to send.
func changesNothing(p decision.Plan, obs decision.Observed) bool {
	return len(p.Launch)+len(p.Hold)+len(p.Release)+len(p.Stop)+len(p.Send) == 0 && !p.StartHeld && !p.NewRound &&
		!p.LimitReached && p.Done == nil && p.NextAskID == obs.NextAskID && slices.Equal(p.Asks, obs.Asks)
}
