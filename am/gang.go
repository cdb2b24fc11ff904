package am

import (
	"context"
	"fmt"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
)

// Gang mode (taskexecutor.gang): distributed training needs all its ranks at once. Reconcile holds
// the containers of a round unstarted until the whole gang is allocated (Plan.Hold, Plan.StartHeld);
// a member that ends other than by success — a failure, preemption, a lost node — restarts the gang
// in a new round: the other members stop and the whole gang is asked for again (Plan.NewRound).
// Counted failures count against taskexecutor.max-failures as always; preemption and lost nodes do
// not. A new declared requirement restarts the gang at the new size. The AM gives up a round that is
// not complete by taskexecutor.gang-timeout: it releases what it holds so that other applications can
// use it, reports not-enough-resources and waits or fails as the failure policy says. An elastic
// gang (taskexecutor.min-instances) runs rounds of fewer members (book.Gang, "Elastic gangs").
//
// The gang's memory and its verbs are book.Gang (the round, its start, its forming and rendezvous
// and the wait after a timeout; it alone writes a member's rank); the AM calls them from the plan's
// bookkeeping (allocate.go) and the launchers' reports (api.go), emits what they return, and here
// gives up a round that timed out (checkGang) and answers the rendezvous (Rendezvous).

// checkGang gives up a round that is not complete by the gang timeout (book.Book.GangTimedOut): what
// it holds goes back to the RM, the evidence of the shortage is reported, and the AM waits before it
// asks again — or fails, as the failure policy's pending action says.
func (a *am) checkGang(ctx context.Context) {
	if !a.cfg.Spec.Gang {
		return
	}
	now := a.cfg.Now()
	a.mu.Lock()
	if a.book.End.Ending() {
		a.mu.Unlock()
		return
	}
	out, ok := a.book.Gang.GiveUp(&a.rec, &a.book.Asks, a.book.Want.Spec(a.cfg.Spec), now, a.cfg.GangTimeout)
	if !ok {
		a.mu.Unlock()
		return
	}
	for _, t := range out.Released {
		if t.CID != nil {
			a.release[t.ID] = t.CID
		}
	}
	a.events.AddAll(out.Ended)
	a.log.WithField("round", a.book.Gang.Round()).Warn("am: " + out.Restarted.Message)
	a.events.Add(out.Restarted)
	headroom := a.headroom
	a.mu.Unlock()

	nodes := a.nodes.running(ctx)
	ev := buildEvidence(a.cfg.Spec.Capability, out.Missing, a.cfg.GangTimeout, nodes, headroom)
	ev.Partition = a.cfg.NodeLabel
	action := a.policy.Config().OnPendingTimeout
	e := a.events.Add(events.NotEnoughResources(ev, action))
	a.log.WithFields(logrus.Fields{"held": out.Held, "missing": out.Missing}).Warn("am: " + e.Message)
	if action == decision.PendingFail {
		a.mu.Lock()
		a.failLocked("the gang of " + fmt.Sprint(a.book.Want.Count()) + " TaskExecutors could not be allocated within taskexecutor.gang-timeout: " + e.Message)
		a.mu.Unlock()
	}
}

// Rendezvous is what the AM knows of container id's rendezvous (web.State; package web answers GET
// /api/v1/containers/<id>/rendezvous from it and hides rank 0's address from anonymous readers).
func (a *am) Rendezvous(id string) web.Rendezvous {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.rec.Get(id)
	g := &a.book.Gang
	r := web.Rendezvous{Gang: a.cfg.Spec.Gang, Member: t != nil, Round: g.Round(), Size: g.Size()}
	if !r.Gang || t == nil {
		return r
	}
	r.Current = t.Round == g.Round() && t.Phase != contract.Stopping && t.Phase != contract.Completed
	r.Rank = t.Rank
	if r.Current && t.Rank == nil {
		for _, m := range a.rec.All() {
			if m.Round == g.Round() && m.Reported && m.Phase != contract.Completed {
				r.Reported++
			}
		}
	}
	return r
}
