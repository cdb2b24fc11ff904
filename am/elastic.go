package am

import (
	"fmt"
	"time"

	"github.com/yarn-am/yarn-am/container/contract"
)

// Elastic gangs (taskexecutor.min-instances below taskexecutor.instances;
// docs/running.md#elastic-gangs): a round runs with anything from the minimum to instances members,
// and YARN is the pool the gang grows from.
//
//   - A round forms at once when it holds its expected size (instances for the first round; the size
//     a restart named for later ones), or by its gang-timeout deadline with what it holds if that is
//     at least the minimum. Asks for up to instances stay out after it formed.
//   - Containers allocated while a round runs are held beside it; once the round has run for
//     taskexecutor.elastic-interval, they grow the gang: a new round of the running members plus the
//     held ones (at most instances), the held ones carried over.
//   - A member that ends other than by success restarts the gang at once with the survivors (and any
//     held containers) when they are at least the minimum; below it the gang waits for a full round
//     as a rigid one does.
//
// Reconcile decides (elasticRestart, elasticForms); the AM feeds it what time decides
// (ElasticObserved) and remembers each round's expected size.

// DefaultElasticInterval is taskexecutor.elastic-interval's default: how long a round runs before
// containers held beside it grow the gang.
const DefaultElasticInterval = 60 * time.Second

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
func (s Spec) elastic() bool {
	return s.Gang && s.MinInstances >= 1 && s.MinInstances < s.Instances
}

// minInstances is the smallest round of the gang (Instances when it is not elastic).
func (s Spec) minInstances() int {
	if s.elastic() {
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
	lo := spec.minInstances()
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
	lo, expect := spec.minInstances(), e.Expect
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

// elasticObservedLocked is the ElasticObserved of the next Reconcile.
func (a *AM) elasticObservedLocked(now time.Time) ElasticObserved {
	if !a.specLocked().elastic() {
		return ElasticObserved{}
	}
	return a.gang.Elastic(now, a.cfg.ElasticInterval, a.cfg.GangTimeout)
}

// Elastic is what time decides for an elastic gang's current round: the size it forms at, whether
// its gang-timeout deadline passed unformed, whether it has run for interval since it formed.
func (g *gangState) Elastic(now time.Time, interval, timeout time.Duration) ElasticObserved {
	e := ElasticObserved{Expect: g.expect}
	if g.formed {
		e.GrowDue = now.Sub(g.formedAt) >= interval
	} else if !g.roundStart.IsZero() {
		e.Deadline = !now.Before(g.roundStart) && now.Sub(g.roundStart) >= timeout
	}
	return e
}

// Carry moves the containers held beside the previous round into the current one (after NewRound:
// an elastic gang keeps them, they are what it grows with).
func (g *gangState) Carry(seq []*tracked) {
	for _, t := range seq {
		if t.Phase == contract.Held && t.Round == g.round-1 {
			t.Round = g.round
		}
	}
}

// gangStatusLocked is the status document's gang section (nil when the application is no gang).
func (a *AM) gangStatusLocked() *contract.GangStatus {
	if !a.cfg.Spec.Gang {
		return nil
	}
	return a.gang.Status(a.specLocked(), a.rec.seq)
}

// Status is the status document's gang section for spec: the round, its size once formed, the
// bounds of an elastic gang's size and the containers held among seq.
func (g *gangState) Status(spec Spec, seq []*tracked) *contract.GangStatus {
	s := &contract.GangStatus{Round: g.round, Formed: g.formed, MinInstances: spec.minInstances(), MaxInstances: spec.Instances}
	if g.formed {
		s.Size = g.size
	}
	s.Held = len(g.Held(seq))
	return s
}
