package am

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Preemption warnings (docs/running.md#preemption). The CapacityScheduler's preemption monitor names
// the containers it is about to take back in every allocate response until it kills them, which it
// does yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill after the first naming.
// The AM warns each named container once, in the heartbeat that first names it: a
// preemption-warning event with the deadline as the AM knows it, the deadline in the container's
// status, and a notice its launcher is waiting for (GET /api/v1/containers/{id}/notices, a long
// poll, so that the worker learns within a round trip, not at its next liveness message). The AM
// cannot read the RM's own setting: config.PreemptionWait is the value of the key in the site files
// the AM was given (process.go), else the scheduler's default; the deadline is an estimate.
//
// Both of the message's contracts are read: the strict one (these containers will go) and the
// negotiable one (containers the RM would take to free the resources it lists; the scheduler
// currently kills exactly those too). In gang mode every running rank of the current round is
// warned with the named one, because the gang restarts as a whole when one rank goes and its ranks
// checkpoint together. The kill itself arrives as a completed container with exit status -102
// (preempted): it is replaced without counting as a failure (TestLoopPreemptionIsNotCounted), and a
// gang restarts as a new round (TestPreemptionOfAGangRankRestartsTheRound).

// preemptionWait is config.PreemptionWait with its default.
func (a *am) preemptionWait() time.Duration {
	if a.cfg.PreemptionWait <= 0 {
		return contract.DefaultPreemptionWait
	}
	return a.cfg.PreemptionWait
}

// preemptedIDs lists the containers either contract of msg names, each once, in the message's order.
func preemptedIDs(msg *hadooppb.PreemptionMessageProto) []string {
	var out []string
	add := func(cs []*hadooppb.PreemptionContainerProto) {
		for _, c := range cs {
			if c.GetId() == nil {
				continue
			}
			if id := yarnrpc.FormatContainerID(c.GetId()); !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	add(msg.GetStrictContract().GetContainer())
	add(msg.GetContract().GetContainer())
	return out
}

// warnable says whether t has a worker to warn: launched or being launched, not yet warned.
func warnable(t *book.Container) bool {
	return t != nil && t.Notice == nil && (t.Phase == contract.Running || t.Phase == contract.Launching)
}

// preemptionLocked applies an allocate response's preemption message: every container it names that
// is not warned yet, and in gang mode every rank of the round of such a container, is warned now.
func (a *am) preemptionLocked(msg *hadooppb.PreemptionMessageProto) {
	if msg == nil {
		return
	}
	var named []string
	var warn []*book.Container
	for _, id := range preemptedIDs(msg) {
		t := a.rec.Get(id)
		if t == nil || t.Phase == contract.Completed {
			continue // released by us, already ended, or not a TaskExecutor (the AM's own container)
		}
		named = append(named, id)
		if warnable(t) {
			warn = append(warn, t)
		}
	}
	if len(warn) == 0 {
		return
	}
	var round *int
	if a.cfg.Spec.Gang {
		r := a.gang.Round()
		round = &r
		for _, t := range a.rec.All() {
			if t.Round == r && warnable(t) && !slices.Contains(warn, t) {
				warn = append(warn, t)
			}
		}
	}
	now := a.cfg.Now()
	deadline := now.Add(a.preemptionWait())
	for _, t := range warn {
		t.Notice = &contract.PreemptionNotice{Container: t.ID, Containers: named, WarnedAt: now, Deadline: deadline, Round: round}
		why := "the ResourceManager named it"
		if !slices.Contains(named, t.ID) {
			why = fmt.Sprintf("a rank of its gang round %d was named", *round)
		}
		ev := a.emit(events.PreemptionWarning(t.ID, t.Node, deadline, a.preemptionWait(), why))
		a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node, "deadline": deadline.Format(time.RFC3339)}).Warn("am: " + ev.Message)
	}
	a.noticesLocked(warn)
}

// noticesLocked hands out the notices just set on warned: it wakes every long poll (each finds its
// own notice, or goes back to waiting) and tells the framework (OnPreemption). The ResourceManager's
// warnings and the AM's own release of idle GPUs (idlerelease.go) both end here.
func (a *am) noticesLocked(warned []*book.Container) {
	close(a.noticed)
	a.noticed = make(chan struct{})
	if hook := a.cfg.OnPreemption; hook != nil {
		ids := make([]string, len(warned))
		reason := ""
		for i, t := range warned {
			ids[i] = t.ID
			if t.Notice != nil {
				reason = t.Notice.Reason // one warning's notices share their reason
			}
		}
		// The framework's own response (a checkpoint, say) may call out: never under mu, never in
		// the loop's way.
		go hook(context.Background(), ids, reason)
	}
}

// Notice returns container id's preemption notice (nil when it is not warned), the channel that is
// closed at the next warning, and whether the container is one of this AM's.
func (a *am) Notice(id string) (*contract.PreemptionNotice, <-chan struct{}, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.rec.Get(id)
	if t == nil {
		return nil, nil, false
	}
	return t.Notice, a.noticed, true
}
