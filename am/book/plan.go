package book

import "github.com/yarn-am/yarn-am/am/decision"

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
