package book

import (
	"iter"
	"maps"
	"slices"

	"github.com/yarn-am/yarn-am/contract"
)

// Exclusions is the blacklist changes the AM still has to send to the ResourceManager: nodes the
// failure policy excluded (additions) and nodes whose exclusion it lifted (removals). The policy
// decides (policy.go); this list carries the decisions to the next allocate and forgets them once an
// allocate that carried them returned. Its verbs: Exclude, Lift, Next (what the next allocate
// sends), Drain (those were sent). The AM's mutex guards it (package doc).
type Exclusions struct {
	add, remove map[string]bool
}

func NewExclusions() Exclusions {
	return Exclusions{add: map[string]bool{}, remove: map[string]bool{}}
}

// Exclude queues a blacklist addition of node (and drops a removal still queued for it).
func (l *Exclusions) Exclude(node string) {
	l.add[node] = true
	delete(l.remove, node)
}

// Lift queues a blacklist removal of node (and drops an addition still queued for it).
func (l *Exclusions) Lift(node string) {
	delete(l.add, node)
	l.remove[node] = true
}

// Next is the additions and removals for the next allocate, sorted.
func (l *Exclusions) Next() (add, remove []string) {
	return slices.Sorted(maps.Keys(l.add)), slices.Sorted(maps.Keys(l.remove))
}

// Drain forgets the additions and removals an allocate carried: the RM has them.
func (l *Exclusions) Drain(add, remove []string) {
	for _, n := range add {
		delete(l.add, n)
	}
	for _, n := range remove {
		delete(l.remove, n)
	}
}

// ExclusionStatus lists the excluded nodes for the status, sorted, with why: those the failure
// policy excluded (failures) and those the liveness check excluded for a lost TaskExecutor (lost); a
// node both excluded shows the policy's reason, whose timeout outlasts the loss.
func ExclusionStatus(lost iter.Seq[string], failures []string) ([]string, []contract.NodeExclusion) {
	why := map[string]string{}
	for n := range lost {
		why[n] = contract.ExclusionLost
	}
	for _, n := range failures {
		why[n] = contract.ExclusionFailures
	}
	if len(why) == 0 {
		return nil, nil
	}
	nodes := slices.Sorted(maps.Keys(why))
	out := make([]contract.NodeExclusion, len(nodes))
	for i, n := range nodes {
		out[i] = contract.NodeExclusion{Node: n, Reason: why[n]}
	}
	return nodes, out
}
