package book

import (
	"fmt"
	"time"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
)

// Gang is the AM's memory of gang mode (taskexecutor.gang, am/gang.go): the current round, when it
// began to be asked for, whether it formed and published its rendezvous, and the wait after a round
// that timed out. Reconcile decides (Plan.Hold, Plan.StartHeld, Plan.NewRound); these verbs book
// what it decided and return the events to emit: Begin (the first round), Start and Form (its held
// members start), Next and NewRound, GiveUp with TimedOut and Wait (a round not complete by the
// gang timeout), Rank (the rendezvous), and for an elastic gang Elastic, Carry and
// Status (below, "Elastic gangs"). They are the only writers of its fields and of the round's marks on the
// records (Container.Rank; the Round of carried containers). The AM's mutex guards it (package
// doc).
type Gang struct {
	round      int       // the current round, from 0
	roundStart time.Time // when the round began to be asked for (its deadline counts from here)
	holdUntil  time.Time // after a round timed out: no new asks before (the wait action)
	formed     bool      // the round's members were started
	ranked     bool      // the round's rendezvous is published
	// size: the members the round started with (once formed), at formedAt; expect: the size an
	// elastic gang's round forms at as soon as it holds that many (Elastic).
	size, expect int
	formedAt     time.Time
}

// Round is the current round, from 0.
func (g *Gang) Round() int { return g.round }

// Formed says the current round's members were started.
func (g *Gang) Formed() bool { return g.formed }

// Size is the number of members the current round started with (0 before it formed).
func (g *Gang) Size() int { return g.size }

// Begin: the first round begins to be asked for (at the first registration; a re-registration
// keeps the round's start).
func (g *Gang) Begin(now time.Time) {
	if g.roundStart.IsZero() {
		g.roundStart = now
	}
}

// Holding says that a round timed out and the AM waits before it asks again (Wait).
func (g *Gang) Holding(now time.Time) bool { return now.Before(g.holdUntil) }

// Held lists the current round's held containers among seq, in the order they were accepted.
func (g *Gang) Held(seq []*Container) []*Container {
	var out []*Container
	for _, t := range seq {
		if t.Phase == contract.Held && t.Round == g.round {
			out = append(out, t)
		}
	}
	return out
}

// Start: the gang is complete; every held member of the current round among r is launched now. It
// returns them and the events: the GangFormed event, and the rendezvous when every member already
// reported (Rank).
func (g *Gang) Start(r *Records, spec decision.Spec, now time.Time) (started []*Container, evs []contract.Event) {
	started = g.Held(r.All())
	for _, t := range started {
		r.StartHeld(t)
	}
	evs = []contract.Event{g.Form(started, spec, now)}
	if ev, _, ok := g.Rank(r.All()); ok {
		evs = append(evs, ev)
	}
	return started, evs
}

// Form: the gang is complete and started are the round's members (their held containers were
// started). It returns the GangFormed event, which says an elastic gang's size.
func (g *Gang) Form(started []*Container, spec decision.Spec, now time.Time) contract.Event {
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

// Next starts the next round of the gang among r, of size members (0: spec.Instances); change is an
// elastic gang's "grow" or "shrink", whose held containers carry over. It returns the
// GangRestarted event.
func (g *Gang) Next(r *Records, spec decision.Spec, now time.Time, why, change string, size int) contract.Event {
	if size <= 0 {
		size = spec.Instances
	}
	ev := g.NewRound(now, size, why, change)
	if spec.Elastic() {
		g.Carry(r.All())
	}
	return ev
}

// NewRound starts the next round, forming at size members, asked for from now (or from the end of
// the wait after a round that timed out). change is an elastic gang's "grow" or "shrink".
// It returns the GangRestarted event.
func (g *Gang) NewRound(now time.Time, size int, why, change string) contract.Event {
	g.round++
	g.roundStart, g.formed, g.ranked, g.size, g.expect = now, false, false, 0, size
	if g.holdUntil.After(now) {
		g.roundStart = g.holdUntil
	}
	return events.GangRestarted(g.round, size, change, why)
}

// TimedOut says the current round is not formed and began to be asked for at least timeout ago.
func (g *Gang) TimedOut(now time.Time, timeout time.Duration) bool {
	return !g.formed && !now.Before(g.roundStart) && now.Sub(g.roundStart) >= timeout
}

// Wait: the round timed out and gave back what it held; the AM asks for no new containers for the
// returned retry (a quarter of the timeout, at least 5 s), and the next round begins after it.
func (g *Gang) Wait(now time.Time, timeout time.Duration) (retry time.Duration) {
	retry = max(timeout/4, 5*time.Second)
	g.holdUntil = now.Add(retry)
	return retry
}

// GangGiveUp is what a gang round that was not complete by the gang timeout gave back
// (Gang.GiveUp): the held containers released (the AM releases their containers at the RM),
// the events of their ends and the next round's GangRestarted, and the counts the
// not-enough-resources evidence names.
type GangGiveUp struct {
	Released       []*Container
	Ended          []contract.Event
	Restarted      contract.Event
	Held, Missing  int
	Retry, Timeout time.Duration
}

// GiveUp gives up the current round of the gang among r if it is not complete by timeout: what it
// holds goes back to the RM (other applications may need it to complete their own gangs: holding
// part of a gang while waiting for the rest is how busy clusters deadlock), its asks are cancelled,
// and the next round is asked for after the wait. An elastic gang's round that holds its minimum
// forms with it instead (the next plan starts it): false, as when nothing timed out.
func (g *Gang) GiveUp(r *Records, asks *Asks, spec decision.Spec, now time.Time, timeout time.Duration) (GangGiveUp, bool) {
	if !g.TimedOut(now, timeout) {
		return GangGiveUp{}, false
	}
	held := g.Held(r.All())
	want := spec.Instances
	lo := spec.MinRound()
	if lo < want && len(held) >= lo {
		return GangGiveUp{}, false
	}
	out := GangGiveUp{Released: held, Held: len(held), Missing: want - len(held), Timeout: timeout}
	for _, t := range held {
		out.Ended = append(out.Ended, r.ReleasedHeld(t, fmt.Sprintf("released: the gang was not complete within taskexecutor.gang-timeout = %s", timeout))...)
	}
	asks.CancelAll() // the next round asks again
	out.Retry = g.Wait(now, timeout)
	least := ""
	if lo < want {
		least = fmt.Sprintf(" (at least %d: taskexecutor.min-instances)", lo)
	}
	out.Restarted = g.Next(r, spec, now, fmt.Sprintf("%d of %d TaskExecutors%s were allocated within taskexecutor.gang-timeout = %s; the %d held were released and the gang is asked for again in %s",
		len(held), want, least, timeout, len(held), out.Retry), "", want)
	return out, true
}

// Rank publishes the rendezvous of the current round once it formed and every member among seq
// reported: ranks in the order the AM accepted the containers, local ranks per node in rank order,
// and rank 0's node and reported port as the master address (host:port in master). ok is false
// while there is nothing (more) to publish.
func (g *Gang) Rank(seq []*Container) (ev contract.Event, master string, ok bool) {
	if !g.formed || g.ranked {
		return contract.Event{}, "", false
	}
	var members []*Container
	for _, t := range seq {
		if t.Round != g.round || t.Phase == contract.Completed && t.Exit.Class != contract.ExitSucceeded {
			continue
		}
		if t.Phase == contract.Held {
			continue // held beside an elastic gang's formed round: not one of its members (Elastic gangs, below)
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
	host, port := hadoop.NodeHost(members[0].Node), members[0].Port
	local := map[string]int{}
	for i, t := range members {
		t.Rank = &contract.Rendezvous{Round: g.round, Rank: i, WorldSize: len(members), LocalRank: local[t.Node],
			LocalWorldSize: perNode[t.Node], Node: t.Node, MasterAddr: host, MasterPort: port}
		local[t.Node]++
	}
	g.ranked = true
	return events.Rendezvous(g.round, len(members)), fmt.Sprintf("%s:%d", host, port), true
}

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
// Reconcile decides (elasticRestart, elasticForms); Gang feeds it what time decides (Elastic) and
// remembers each round's expected size.

// Elastic is what time decides for an elastic gang's current round (nothing when spec is no elastic
// gang): the size it forms at, whether its gang-timeout deadline passed unformed, whether it has
// run for interval since it formed.
func (g *Gang) Elastic(spec decision.Spec, now time.Time, interval, timeout time.Duration) decision.ElasticObserved {
	if !spec.Elastic() {
		return decision.ElasticObserved{}
	}
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
func (g *Gang) Carry(seq []*Container) {
	for _, t := range seq {
		if t.Phase == contract.Held && t.Round == g.round-1 {
			t.Round = g.round
		}
	}
}

// Status is the status document's gang section for spec (nil when the application is no gang): the
// round, its size once formed, the bounds of an elastic gang's size and the containers held among
// seq.
func (g *Gang) Status(spec decision.Spec, seq []*Container) *contract.GangStatus {
	if !spec.Gang {
		return nil
	}
	s := &contract.GangStatus{Round: g.round, Formed: g.formed, MinInstances: spec.MinRound(), MaxInstances: spec.Instances}
	if g.formed {
		s.Size = g.size
	}
	s.Held = len(g.Held(seq))
	return s
}
