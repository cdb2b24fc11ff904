package book

import (
	"maps"
	"slices"
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
