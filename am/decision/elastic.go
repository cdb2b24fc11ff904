package decision

import (
	"fmt"

	"github.com/yarn-am/yarn-am/contract"
)

// ElasticObserved is what time decides for an elastic gang's current round.
type ElasticObserved struct {
	// Expect: the round forms as soon as it holds this many (0: Spec.Instances).
	Expect int
	// Deadline: the round is not formed and its gang-timeout passed: it forms with what it holds if
	// that is at least the minimum.
	Deadline bool
	// GrowDue: the round formed at least taskexecutor.elastic-interval ago: containers held beside
	// it grow the gang.
	GrowDue bool
}

// elastic says whether the gang's rounds may be smaller than Instances.
func (s Spec) Elastic() bool {
	return s.Gang && s.MinInstances >= 1 && s.MinInstances < s.Instances
}

// minInstances is the smallest round of the gang (Instances when it is not elastic).
func (s Spec) MinRound() int {
	if s.Elastic() {
		return s.MinInstances
	}
	return s.Instances
}

// roundChange is an elastic gang's new round: why, "grow"/"shrink"/"" and the size it forms at.
type roundChange struct {
	why, change string
	size        int
}

// elasticRestart says whether and how an elastic gang's current round restarts (why == "" if it need
// not): ended is a member that ended other than by success, formed says members were started.
func elasticRestart(spec Spec, obs Observed, ended *Container, formed bool, succeeded int) roundChange {
	running, heldC, started := roundMembers(obs)
	held := len(heldC)
	lo := spec.MinRound()
	switch n := min(running+held, spec.Instances); {
	case ended != nil && n >= lo:
		change := "shrink"
		if n >= started {
			change = "" // held containers take the lost members' places
		}
		return roundChange{why: gangRestart(spec, ended, false, 0, 0), change: change, size: n}
	case ended != nil:
		return roundChange{why: fmt.Sprintf("%s; %d left, fewer than taskexecutor.min-instances = %d: the gang waits for a full round",
			gangRestart(spec, ended, false, 0, 0), running+held, lo), size: spec.Instances}
	case formed && running > spec.Instances:
		return roundChange{why: fmt.Sprintf("the requirement changed to %d TaskExecutors", spec.Instances), change: "shrink", size: spec.Instances}
	case formed && obs.Elastic.GrowDue && succeeded == 0 && held > 0 && running < spec.Instances:
		return roundChange{why: fmt.Sprintf("%d more TaskExecutor(s) were allocated while the round ran with %d (held until taskexecutor.elastic-interval passed)", held, running),
			change: "grow", size: n}
	}
	return roundChange{}
}

// elasticSurplus lists the held containers beside an elastic gang's round beyond instances (newest
// first): after the requirement went down, a round at full size has nothing to grow with them.
func elasticSurplus(spec Spec, obs Observed) []Container {
	running, held, _ := roundMembers(obs)
	if running == 0 {
		return nil // not formed: the round starts with up to what it holds
	}
	n := running + len(held) - spec.Instances
	var out []Container
	for i := len(held) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, held[i])
	}
	return out
}

// elasticForms says whether an elastic gang's unformed round starts with the held containers it has.
func elasticForms(spec Spec, e ElasticObserved, held int) bool {
	lo, expect := spec.MinRound(), e.Expect
	if expect <= 0 || expect > spec.Instances {
		expect = spec.Instances
	}
	expect = max(expect, lo)
	return held >= expect || e.Deadline && held >= lo
}

// roundMembers counts the current round's running members and its started ones (running, stopping
// or ended), and lists its held containers.
func roundMembers(obs Observed) (running int, held []Container, started int) {
	for _, c := range obs.Containers {
		switch {
		case c.Round != obs.Round:
		case c.Phase == contract.Held:
			held = append(held, c)
		case c.Phase == contract.Completed || c.Phase == contract.Stopping:
			started++
		default:
			running++
			started++
		}
	}
	return running, held, started
}

// roundStarted counts the current round's members that were started.
func roundStarted(obs Observed) int {
	_, _, started := roundMembers(obs)
	return started
}
