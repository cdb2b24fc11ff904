package am

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
)

// Gang mode (taskexecutor.gang): distributed training needs all its ranks at once. Reconcile holds
// the containers of a round unstarted until the whole gang is allocated (Plan.Hold, Plan.StartHeld);
// a member that ends other than by success — a failure, preemption, a lost node — restarts the gang
// in a new round: the other members stop and the whole gang is asked for again (Plan.NewRound).
// Counted failures count against taskexecutor.max-failures as always; preemption and lost nodes do
// not. A new declared requirement restarts the gang at the new size. The AM gives up a round that is
// not complete by taskexecutor.gang-timeout: it releases what it holds so that other applications can
// use it, reports not-enough-resources and waits or fails as the failure policy says. An elastic
// gang (taskexecutor.min-instances) runs rounds of fewer members (elastic.go).

// gangState is the AM's side of gang mode: the current round, when it began to be asked for,
// whether it formed and published its rendezvous, and the wait after a round that timed out.
// Reconcile decides (Plan.Hold, Plan.StartHeld, Plan.NewRound); these verbs book what it decided and
// return the events to emit: Begin (the first round), Form (its held members start), NewRound,
// TimedOut and Wait (a round not complete by the gang timeout), Rank (the rendezvous), and for an
// elastic gang Elastic, Carry and Status (elastic.go). They are the only writers of its fields and
// of the round's marks on the records (book.Container.Rank; the Round of carried containers). The AM's
// mutex guards it (doc.go).
type gangState struct {
	round      int       // the current round, from 0
	roundStart time.Time // when the round began to be asked for (its deadline counts from here)
	holdUntil  time.Time // after a round timed out: no new asks before (the wait action)
	formed     bool      // the round's members were started
	ranked     bool      // the round's rendezvous is published
	// size: the members the round started with (once formed), at formedAt; expect: the size an
	// elastic gang's round forms at as soon as it holds that many (elastic.go).
	size, expect int
	formedAt     time.Time
}

// Round is the current round, from 0.
func (g *gangState) Round() int { return g.round }

// Formed says the current round's members were started.
func (g *gangState) Formed() bool { return g.formed }

// Begin: the first round begins to be asked for (at the first registration; a re-registration
// keeps the round's start).
func (g *gangState) Begin(now time.Time) {
	if g.roundStart.IsZero() {
		g.roundStart = now
	}
}

// Holding says that a round timed out and the AM waits before it asks again (Wait).
func (g *gangState) Holding(now time.Time) bool { return now.Before(g.holdUntil) }

// Held lists the current round's held containers among seq, in the order they were accepted.
func (g *gangState) Held(seq []*book.Container) []*book.Container {
	var out []*book.Container
	for _, t := range seq {
		if t.Phase == contract.Held && t.Round == g.round {
			out = append(out, t)
		}
	}
	return out
}

// Form: the gang is complete and started are the round's members (their held containers were
// started). It returns the GangFormed event, which says an elastic gang's size.
func (g *gangState) Form(started []*book.Container, spec decision.Spec, now time.Time) contract.Event {
	g.formed, g.size, g.formedAt = true, len(started), now
	nodes := map[string]bool{}
	for _, t := range started {
		nodes[t.Node] = true
	}
	ev := events.GangFormed(g.round, len(started), len(nodes), now.Sub(g.roundStart))
	if spec.Elastic() {
		ev.Message += fmt.Sprintf(" (an elastic gang of %d to %d: WORLD_SIZE %d)", spec.MinRound(), spec.Instances, len(started))
	}
	return ev
}

// NewRound starts the next round, forming at size members, asked for from now (or from the end of
// the wait after a round that timed out). change is an elastic gang's "grow" or "shrink"
// (elastic.go). It returns the GangRestarted event.
func (g *gangState) NewRound(now time.Time, size int, why, change string) contract.Event {
	g.round++
	g.roundStart, g.formed, g.ranked, g.size, g.expect = now, false, false, 0, size
	if g.holdUntil.After(now) {
		g.roundStart = g.holdUntil
	}
	return events.GangRestarted(g.round, size, change, why)
}

// TimedOut says the current round is not formed and began to be asked for at least timeout ago.
func (g *gangState) TimedOut(now time.Time, timeout time.Duration) bool {
	return !g.formed && !now.Before(g.roundStart) && now.Sub(g.roundStart) >= timeout
}

// Wait: the round timed out and gave back what it held; the AM asks for no new containers for the
// returned retry (a quarter of the timeout, at least 5 s), and the next round begins after it.
func (g *gangState) Wait(now time.Time, timeout time.Duration) (retry time.Duration) {
	retry = max(timeout/4, 5*time.Second)
	g.holdUntil = now.Add(retry)
	return retry
}

// Rank publishes the rendezvous of the current round once it formed and every member among seq
// reported: ranks in the order the AM accepted the containers, local ranks per node in rank order,
// and rank 0's node and reported port as the master address (host:port in master). ok is false
// while there is nothing (more) to publish.
func (g *gangState) Rank(seq []*book.Container) (ev contract.Event, master string, ok bool) {
	if !g.formed || g.ranked {
		return contract.Event{}, "", false
	}
	var members []*book.Container
	for _, t := range seq {
		if t.Round != g.round || t.Phase == contract.Completed && t.Exit.Class != contract.ExitSucceeded {
			continue
		}
		if t.Phase == contract.Held {
			continue // held beside an elastic gang's formed round: not one of its members (elastic.go)
		}
		if t.Phase == contract.Stopping {
			return contract.Event{}, "", false
		}
		if !t.Reported {
			return contract.Event{}, "", false // a rank is missing
		}
		members = append(members, t)
	}
	if len(members) == 0 {
		return contract.Event{}, "", false
	}
	perNode := map[string]int{}
	for _, t := range members {
		perNode[t.Node]++
	}
	host, port := hostOf(members[0].Node), members[0].Port
	local := map[string]int{}
	for i, t := range members {
		t.Rank = &contract.Rendezvous{Round: g.round, Rank: i, WorldSize: len(members), LocalRank: local[t.Node],
			LocalWorldSize: perNode[t.Node], Node: t.Node, MasterAddr: host, MasterPort: port}
		local[t.Node]++
	}
	g.ranked = true
	return events.Rendezvous(g.round, len(members)), fmt.Sprintf("%s:%d", host, port), true
}

// allocLatencyLocked is how long ask askID waited for an allocation (0 if unknown), and records it.
func (a *am) allocLatencyLocked(askID int64, now time.Time) time.Duration {
	at, ok := a.book.Asks.SentAt(askID)
	if !ok {
		return 0
	}
	a.metrics.ObserveAllocation(now.Sub(at))
	return now.Sub(at)
}

// startGangLocked launches every held member of the current round: the gang is complete.
func (a *am) startGangLocked() []*book.Container {
	out := a.gang.Held(a.rec.All())
	for _, t := range out {
		a.rec.StartHeld(t)
	}
	ev := a.gang.Form(out, a.specLocked(), a.cfg.Now())
	a.log.WithFields(logrus.Fields{"round": a.gang.Round(), "ranks": len(out)}).Info("am: " + ev.Message)
	a.emit(ev)
	a.assignRanksLocked()
	return out
}

// releaseHeldLocked gives a held container back to the RM.
func (a *am) releaseHeldLocked(t *book.Container, why string) {
	if t.CID != nil {
		a.release[t.ID] = t.CID
	}
	a.emitAll(a.rec.ReleasedHeld(t, why))
}

// newRoundLocked starts the next round of the gang, of size members (0: the declared instances);
// change is an elastic gang's "grow" or "shrink" (elastic.go), whose held containers carry over.
func (a *am) newRoundLocked(now time.Time, why, change string, size int) {
	if size <= 0 {
		size = a.book.Want.Count()
	}
	ev := a.gang.NewRound(now, size, why, change)
	if a.specLocked().Elastic() {
		a.gang.Carry(a.rec.All())
	}
	a.log.WithField("round", a.gang.Round()).Warn("am: " + ev.Message)
	a.emit(ev)
}

// checkGang gives up a round that is not complete by the gang timeout: what it holds goes back to
// the RM (other applications may need it to complete their own gangs: holding part of a gang while
// waiting for the rest is how busy clusters deadlock), the evidence of the shortage is reported,
// and the AM waits before it asks again — or fails, as the failure policy's pending action says.
func (a *am) checkGang(ctx context.Context) {
	if !a.cfg.Spec.Gang {
		return
	}
	now := a.cfg.Now()
	a.mu.Lock()
	if a.stopping || a.policyOut != nil || !a.gang.TimedOut(now, a.cfg.GangTimeout) {
		a.mu.Unlock()
		return
	}
	heldC := a.gang.Held(a.rec.All())
	want := a.book.Want.Count()
	held := len(heldC)
	if lo := a.specLocked().MinRound(); lo < want && held >= lo {
		a.mu.Unlock()
		return // an elastic gang's round forms with what it holds (elastic.go): the next plan starts it
	}
	for _, t := range heldC {
		a.releaseHeldLocked(t, fmt.Sprintf("released: the gang was not complete within taskexecutor.gang-timeout = %s", a.cfg.GangTimeout))
	}
	a.book.Asks.CancelAll() // the next round asks again
	missing := want - held
	retry := a.gang.Wait(now, a.cfg.GangTimeout)
	headroom := a.headroom
	least := ""
	if lo := a.specLocked().MinRound(); lo < want {
		least = fmt.Sprintf(" (at least %d: taskexecutor.min-instances)", lo)
	}
	a.newRoundLocked(now, fmt.Sprintf("%d of %d TaskExecutors%s were allocated within taskexecutor.gang-timeout = %s; the %d held were released and the gang is asked for again in %s",
		held, want, least, a.cfg.GangTimeout, held, retry), "", want)
	a.mu.Unlock()

	nodes := a.nodes.running(ctx)
	ev := buildEvidence(a.cfg.Spec.Capability, missing, a.cfg.GangTimeout, nodes, headroom)
	ev.Partition = a.cfg.NodeLabel
	action := a.policy.Config().OnPendingTimeout
	e := a.emit(events.NotEnoughResources(ev, action))
	a.log.WithFields(logrus.Fields{"held": held, "missing": missing}).Warn("am: " + e.Message)
	if action == decision.PendingFail {
		a.mu.Lock()
		a.failLocked("the gang of " + fmt.Sprint(a.book.Want.Count()) + " TaskExecutors could not be allocated within taskexecutor.gang-timeout: " + e.Message)
		a.mu.Unlock()
	}
}

// assignRanksLocked publishes the rendezvous of the current round once it formed and every member
// reported (gangState.Rank).
func (a *am) assignRanksLocked() {
	if !a.cfg.Spec.Gang {
		return
	}
	if ev, master, ok := a.gang.Rank(a.rec.All()); ok {
		a.log.WithFields(logrus.Fields{"round": a.gang.Round(), "master": master}).Info("am: " + ev.Message)
		a.emit(ev)
	}
}

// hostOf is the host of a node address host:port.
func hostOf(node string) string {
	return hadoop.NodeHost(node)
}

// Rendezvous is what the AM knows of container id's rendezvous (web.State; package web answers GET
// /api/v1/containers/<id>/rendezvous from it and hides rank 0's address from anonymous readers).
func (a *am) Rendezvous(id string) web.Rendezvous {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.rec.Get(id)
	g := web.Rendezvous{Gang: a.cfg.Spec.Gang, Member: t != nil, Round: a.gang.round, Size: a.gang.size}
	if !g.Gang || t == nil {
		return g
	}
	g.Current = t.Round == a.gang.round && t.Phase != contract.Stopping && t.Phase != contract.Completed
	g.Rank = t.Rank
	if g.Current && t.Rank == nil {
		for _, m := range a.rec.All() {
			if m.Round == a.gang.round && m.Reported && m.Phase != contract.Completed {
				g.Reported++
			}
		}
	}
	return g
}
