package book

import "github.com/yarn-am/yarn-am/contract"

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
