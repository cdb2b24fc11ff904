package am

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/container/contract"
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

// gangRestart says why the current round must restart ("" if it need not): ended is a member that
// ended other than by success; formed says members were started; a started round whose size no
// longer matches the declared requirement restarts at the new size.
func gangRestart(spec Spec, ended *Container, formed bool, active, succeeded int) string {
	if ended != nil {
		return fmt.Sprintf("%s on %s %s", ended.ID, ended.Node, describe(ended.Exit.Status, ended.Exit.Class))
	}
	if formed && active+succeeded != spec.Instances && !(spec.Mode != Service && active == 0) {
		return fmt.Sprintf("the requirement changed to %d TaskExecutors", spec.Instances)
	}
	return ""
}

// gangState is the AM's side of gang mode.
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

// allocLatencyLocked is how long ask askID waited for an allocation (0 if unknown), and records it.
func (a *AM) allocLatencyLocked(askID int64, now time.Time) time.Duration {
	at, ok := a.asks.SentAt(askID)
	if !ok {
		return 0
	}
	a.metrics.ObserveAllocation(now.Sub(at))
	return now.Sub(at)
}

// startGangLocked launches every held member of the current round: the gang is complete.
func (a *AM) startGangLocked() []*tracked {
	var out []*tracked
	for _, t := range a.rec.seq {
		if t.Phase == contract.Held && t.Round == a.gang.round {
			a.rec.startHeld(t)
			out = append(out, t)
		}
	}
	a.gang.formed, a.gang.size, a.gang.formedAt = true, len(out), a.cfg.Now()
	nodes := map[string]bool{}
	for _, t := range out {
		nodes[t.Node] = true
	}
	ev := GangFormedEvent(a.gang.round, len(out), len(nodes), a.cfg.Now().Sub(a.gang.roundStart))
	if spec := a.specLocked(); spec.elastic() {
		ev.Message += fmt.Sprintf(" (an elastic gang of %d to %d: WORLD_SIZE %d)", spec.minInstances(), spec.Instances, len(out))
	}
	a.log.WithFields(logrus.Fields{"round": a.gang.round, "ranks": len(out)}).Info("am: " + ev.Message)
	a.emit(ev)
	a.assignRanksLocked()
	return out
}

// releaseHeldLocked gives a held container back to the RM.
func (a *AM) releaseHeldLocked(t *tracked, why string) {
	if t.cid != nil {
		a.release[t.ID] = t.cid
	}
	a.emitAll(a.rec.releasedHeld(t, why))
}

// newRoundLocked starts the next round of the gang, of size members (0: the declared instances);
// change is an elastic gang's "grow" or "shrink" (elastic.go), whose held containers carry over.
func (a *AM) newRoundLocked(now time.Time, why, change string, size int) {
	if size <= 0 {
		size = a.instances
	}
	a.gang.round++
	a.gang.roundStart, a.gang.formed, a.gang.ranked, a.gang.size, a.gang.expect = now, false, false, 0, size
	if a.gang.holdUntil.After(now) {
		a.gang.roundStart = a.gang.holdUntil
	}
	if a.specLocked().elastic() {
		a.carryHeldLocked(a.gang.round-1, a.gang.round)
	}
	ev := GangRestartedEvent(a.gang.round, size, change, why)
	a.log.WithField("round", a.gang.round).Warn("am: " + ev.Message)
	a.emit(ev)
}

// checkGang gives up a round that is not complete by the gang timeout: what it holds goes back to
// the RM (other applications may need it to complete their own gangs: holding part of a gang while
// waiting for the rest is how busy clusters deadlock), the evidence of the shortage is reported,
// and the AM waits before it asks again — or fails, as the failure policy's pending action says.
func (a *AM) checkGang(ctx context.Context) {
	if !a.cfg.Spec.Gang {
		return
	}
	now := a.cfg.Now()
	a.mu.Lock()
	if a.gang.formed || a.stopping || a.policyOut != nil || now.Before(a.gang.roundStart) || now.Sub(a.gang.roundStart) < a.cfg.GangTimeout {
		a.mu.Unlock()
		return
	}
	held := 0
	for _, t := range a.rec.seq {
		if t.Phase == contract.Held && t.Round == a.gang.round {
			held++
		}
	}
	if lo := a.specLocked().minInstances(); lo < a.instances && held >= lo {
		a.mu.Unlock()
		return // an elastic gang's round forms with what it holds (elastic.go): the next plan starts it
	}
	for _, t := range a.rec.seq {
		if t.Phase == contract.Held && t.Round == a.gang.round {
			a.releaseHeldLocked(t, fmt.Sprintf("released: the gang was not complete within taskexecutor.gang-timeout = %s", a.cfg.GangTimeout))
		}
	}
	a.asks.CancelAll() // the next round asks again
	missing := a.instances - held
	retry := max(a.cfg.GangTimeout/4, 5*time.Second)
	a.gang.holdUntil = now.Add(retry)
	headroom := a.headroom
	least := ""
	if lo := a.specLocked().minInstances(); lo < a.instances {
		least = fmt.Sprintf(" (at least %d: taskexecutor.min-instances)", lo)
	}
	a.newRoundLocked(now, fmt.Sprintf("%d of %d TaskExecutors%s were allocated within taskexecutor.gang-timeout = %s; the %d held were released and the gang is asked for again in %s",
		held, a.instances, least, a.cfg.GangTimeout, held, retry), "", a.instances)
	a.mu.Unlock()

	nodes := a.runningNodes(ctx)
	ev := BuildEvidence(a.cfg.Spec.Capability, missing, a.cfg.GangTimeout, nodes, headroom)
	ev.Partition = a.cfg.NodeLabel
	action := a.policy.Config().OnPendingTimeout
	e := a.emit(NotEnoughResourcesEvent(ev, action))
	a.log.WithFields(logrus.Fields{"held": held, "missing": missing}).Warn("am: " + e.Message)
	if action == PendingFail {
		a.mu.Lock()
		a.failLocked("the gang of " + fmt.Sprint(a.instances) + " TaskExecutors could not be allocated within taskexecutor.gang-timeout: " + e.Message)
		a.mu.Unlock()
	}
}

// assignRanksLocked publishes the rendezvous of the current round once it formed and every member
// reported: ranks in the order the AM accepted the containers, local ranks per node in rank order,
// and rank 0's node and reported port as the master address.
func (a *AM) assignRanksLocked() {
	if !a.cfg.Spec.Gang || !a.gang.formed || a.gang.ranked {
		return
	}
	var members []*tracked
	for _, t := range a.rec.seq {
		if t.Round != a.gang.round || t.Phase == contract.Completed && t.Exit.Class != contract.ExitSucceeded {
			continue
		}
		if t.Phase == contract.Held {
			continue // held beside an elastic gang's formed round: not one of its members (elastic.go)
		}
		if t.Phase == contract.Stopping {
			return
		}
		if !t.reported {
			return // a rank is missing
		}
		members = append(members, t)
	}
	if len(members) == 0 {
		return
	}
	perNode := map[string]int{}
	for _, t := range members {
		perNode[t.Node]++
	}
	master, port := hostOf(members[0].Node), members[0].port
	local := map[string]int{}
	for i, t := range members {
		t.rank = &contract.Rendezvous{Round: a.gang.round, Rank: i, WorldSize: len(members), LocalRank: local[t.Node],
			LocalWorldSize: perNode[t.Node], Node: t.Node, MasterAddr: master, MasterPort: port}
		local[t.Node]++
	}
	a.gang.ranked = true
	ev := RendezvousEvent(a.gang.round, len(members))
	a.log.WithFields(logrus.Fields{"round": a.gang.round, "master": fmt.Sprintf("%s:%d", master, port)}).Info("am: " + ev.Message)
	a.emit(ev)
}

// hostOf is the host of a node address host:port.
func hostOf(node string) string {
	return hadoop.NodeHost(node)
}

// Rendezvous is what the AM knows of container id's rendezvous (web.State; package web answers GET
// /api/v1/containers/<id>/rendezvous from it and hides rank 0's address from anonymous readers).
func (a *AM) Rendezvous(id string) web.Rendezvous {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.rec.get(id)
	g := web.Rendezvous{Gang: a.cfg.Spec.Gang, Member: t != nil, Round: a.gang.round, Size: a.gang.size}
	if !g.Gang || t == nil {
		return g
	}
	g.Current = t.Round == a.gang.round && t.Phase != contract.Stopping && t.Phase != contract.Completed
	g.Rank = t.rank
	if g.Current && t.rank == nil {
		for _, m := range a.rec.seq {
			if m.Round == a.gang.round && m.reported && m.Phase != contract.Completed {
				g.Reported++
			}
		}
	}
	return g
}
