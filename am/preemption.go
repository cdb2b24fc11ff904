package am

import (
	"context"
	"slices"
	"time"

	"github.com/yarn-am/yarn-am/am/book"
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
//
// The warnings' bookkeeping is book.Notices (Preempted sets the notices, Post wakes the long polls);
// the AM applies an allocate's message with it (allocate.go), hands the notices out (handOut) and
// answers the long polls (Notice).

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

// handOut hands out the notices just set on warned (book.Notices.Post wakes every long poll) and
// tells the framework (hook: config.OnPreemption) in a goroutine of its own: its response (a
// checkpoint, say) may call out, never under mu, never in the loop's way. The ResourceManager's
// warnings and the AM's own release of idle GPUs (idlerelease.go) both end here.
func handOut(n *book.Notices, hook func(ctx context.Context, containers []string, reason string), warned []*book.Container) {
	ids, reason := n.Post(warned)
	if hook != nil {
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
	return t.Notice, a.book.Notices.Changed(), true
}
