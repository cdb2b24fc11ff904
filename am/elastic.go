package am

import (
	"time"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
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

// elasticObservedLocked is the ElasticObserved of the next Reconcile.
func (a *am) elasticObservedLocked(now time.Time) decision.ElasticObserved {
	if !a.specLocked().Elastic() {
		return decision.ElasticObserved{}
	}
	return a.gang.Elastic(now, a.cfg.ElasticInterval, a.cfg.GangTimeout)
}

// Elastic is what time decides for an elastic gang's current round: the size it forms at, whether
// its gang-timeout deadline passed unformed, whether it has run for interval since it formed.
func (g *gangState) Elastic(now time.Time, interval, timeout time.Duration) decision.ElasticObserved {
	e := decision.ElasticObserved{Expect: g.expect}
	if g.formed {
		e.GrowDue = now.Sub(g.formedAt) >= interval
	} else if !g.roundStart.IsZero() {
		e.Deadline = !now.Before(g.roundStart) && now.Sub(g.roundStart) >= timeout
	}
	return e
}

// Carry moves the containers held beside the previous round into the current one (after NewRound:
// an elastic gang keeps them, they are what it grows with).
func (g *gangState) Carry(seq []*book.Container) {
	for _, t := range seq {
		if t.Phase == contract.Held && t.Round == g.round-1 {
			t.Round = g.round
		}
	}
}

// gangStatusLocked is the status document's gang section (nil when the application is no gang).
func (a *am) gangStatusLocked() *contract.GangStatus {
	if !a.cfg.Spec.Gang {
		return nil
	}
	return a.gang.Status(a.specLocked(), a.rec.All())
}

// Status is the status document's gang section for spec: the round, its size once formed, the
// bounds of an elastic gang's size and the containers held among seq.
func (g *gangState) Status(spec decision.Spec, seq []*book.Container) *contract.GangStatus {
	s := &contract.GangStatus{Round: g.round, Formed: g.formed, MinInstances: spec.MinRound(), MaxInstances: spec.Instances}
	if g.formed {
		s.Size = g.size
	}
	s.Held = len(g.Held(seq))
	return s
}
