package book

import (
	"slices"
	"time"

	"github.com/yarn-am/yarn-am/am/decision"
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

// changesNothing: performing p would change no state and queue nothing to send.
func changesNothing(p decision.Plan, obs decision.Observed) bool {
	return len(p.Launch)+len(p.Hold)+len(p.Release)+len(p.Stop)+len(p.Send) == 0 && !p.StartHeld && !p.NewRound &&
		!p.LimitReached && p.Done == nil && p.NextAskID == obs.NextAskID && slices.Equal(p.Asks, obs.Asks)
}
