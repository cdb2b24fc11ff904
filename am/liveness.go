package am

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// This file is the AM's own liveness check of its TaskExecutors (docs/running.md#liveness): a node
// whose NodeManager died is declared LOST by the RM only after yarn.nm.liveness-monitor.expiry-interval-ms
// (10 minutes by default), during which a gang of GPUs would sit idle. Every launcher says it is
// alive every contract.LivenessInterval; a running TaskExecutor whose launcher has been silent for
// config.LivenessTimeout is probed at its NodeManager (getContainerStatuses), and declared lost only
// when the NodeManager does not answer or no longer knows the container. A launcher that is alive
// keeps its container whatever its NodeManager does; a NodeManager that says the container runs
// keeps it too (a launcher of an older release, or one that cannot reach this attempt's API).
//
// The check's memory and its verbs are book.Liveness (Heard, Due, Silent, Probed, Lost,
// LostNodesDue, NodeProbeDone, NodeBack; it alone writes a record's liveness marks); this file is
// the AM's side: the probes of the NodeManagers, outside the lock.

// livenessProbeTimeout bounds one getContainerStatuses of a probe: a NodeManager that does not answer
// within it is taken as down. Short, since it adds to the time a lost worker waits for its
// replacement when its node is gone without refusing connections (docs/running.md#liveness); a
// NodeManager that runs answers in milliseconds.
const livenessProbeTimeout = 5 * time.Second

// Alive records that the launcher of container id is alive; false if the container is not one of
// this AM's.
func (a *am) Alive(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.rec.Get(id)
	if t == nil {
		return false
	}
	a.book.Live.Heard(t, a.cfg.Now())
	return true
}

// checkLiveness runs after each heartbeat: it starts a probe (in the background, never under mu) for
// every running TaskExecutor silent for the timeout, and for every node excluded for a loss.
func (a *am) checkLiveness(ctx context.Context) {
	timeout := a.cfg.LivenessTimeout
	if timeout < 0 {
		return
	}
	a.mu.Lock()
	now := a.cfg.Now()
	if !a.book.Live.Due(now, timeout) {
		a.mu.Unlock()
		return
	}
	probes := a.book.Live.Silent(a.rec.All(), now, a.started, timeout)
	nodes := a.book.Live.LostNodesDue(now, timeout)
	a.mu.Unlock()
	for _, p := range probes {
		a.background.Add(1)
		go a.probe(ctx, p)
	}
	for n, cid := range nodes {
		a.background.Add(1)
		go a.probeLostNode(ctx, n, cid)
	}
}

// nmVerdict is what a NodeManager's answer says of a container.
type nmVerdict int

const (
	nmRunning nmVerdict = iota // it runs the container: not lost
	nmUnsure                   // no answer that decides (no NMToken, a refusal, the AM stopping): not lost
	nmDown                     // it does not answer: lost
	nmForgot                   // it answers, but no longer knows the container: lost
)

// containerStatuser is the NodeManager seam's optional probe (yarnrpc.NMClient has it).
type containerStatuser interface {
	GetContainerStatuses(ctx context.Context, node string, ids ...*hadooppb.ContainerIdProto) (*hadooppb.GetContainerStatusesResponseProto, error)
}

// askNM asks node's NodeManager (through client) for container cid; the string is the evidence, in
// words.
func askNM(ctx context.Context, client nm, node string, cid *hadooppb.ContainerIdProto) (nmVerdict, string) {
	s, ok := client.(containerStatuser)
	if !ok {
		return nmUnsure, "the NodeManager client cannot ask for container statuses"
	}
	c, cancel := context.WithTimeout(ctx, livenessProbeTimeout)
	defer cancel()
	resp, err := s.GetContainerStatuses(c, node, cid)
	var conn *yarnrpc.ConnError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nmUnsure, ctx.Err().Error()
	case errors.As(err, &conn), errors.Is(err, context.DeadlineExceeded):
		return nmDown, fmt.Sprintf("its NodeManager %s does not answer (%v)", node, err)
	default:
		return nmUnsure, fmt.Sprintf("its NodeManager %s answered with an error: %v", node, err)
	}
	id := yarnrpc.FormatContainerID(cid)
	for _, st := range resp.GetStatus() {
		if yarnrpc.FormatContainerID(st.GetContainerId()) != id {
			continue
		}
		if st.GetState() == hadooppb.ContainerStateProto_C_COMPLETE {
			return nmUnsure, fmt.Sprintf("its NodeManager %s reports it complete; the RM reports its end", node)
		}
		return nmRunning, fmt.Sprintf("its NodeManager %s reports it %s", node, strings.TrimPrefix(st.GetState().String(), "C_"))
	}
	for _, f := range resp.GetFailedRequests() {
		if yarnrpc.FormatContainerID(f.GetContainerId()) == id {
			return nmForgot, fmt.Sprintf("its NodeManager %s no longer knows it (%s)", node, strings.TrimSpace(f.GetException().GetMessage()))
		}
	}
	return nmForgot, fmt.Sprintf("its NodeManager %s does not list it", node)
}

// probe asks a silent TaskExecutor's NodeManager and books the verdict: one that does not answer,
// or no longer knows the container, has its TaskExecutor declared lost (book.Liveness.Lost): its
// container is released, and its end makes Reconcile ask for a replacement at once (and a gang
// start its next round).
func (a *am) probe(ctx context.Context, p book.Probe) {
	defer a.background.Done()
	verdict, evidence := askNM(ctx, a.cfg.NM, p.Node, p.CID)
	a.mu.Lock()
	defer a.mu.Unlock()
	t := p.C
	now := a.cfg.Now()
	switch a.book.Live.Probed(p, verdict == nmDown || verdict == nmForgot, now) {
	case book.ProbeVouched:
		a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node, "silent": p.Silent.Round(time.Second).String()}).
			Info("am: TaskExecutor's launcher is silent, but not lost: " + evidence)
	case book.ProbeLost:
		lost, why, ended := a.book.Live.Lost(&a.rec, p, &a.book.Excl, a.cfg.LivenessTimeout, evidence, now)
		a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node}).Warn("am: TaskExecutor " + why + "; releasing it and asking for a replacement (not counted as a failure)")
		if t.CID != nil {
			a.release[t.ID] = t.CID
		}
		a.events.Add(lost)
		a.exitedLocked(t, ended)
		a.book.Plans.News()
		a.wake.poke()
	}
}

// probeLostNode asks a node excluded for a loss whether its NodeManager answers again, and lifts
// the exclusion if it does (book.Liveness.NodeBack).
func (a *am) probeLostNode(ctx context.Context, node string, cid *hadooppb.ContainerIdProto) {
	defer a.background.Done()
	verdict, _ := askNM(ctx, a.cfg.NM, node, cid)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.book.Live.NodeProbeDone(node)
	if verdict == nmDown || ctx.Err() != nil {
		return
	}
	if ev, ok := a.book.Live.NodeBack(node, &a.book.Excl, a.policy.IsExcluded); ok {
		a.log.WithField("node", node).Info("am: exclusion of a node that lost a TaskExecutor lifted: its NodeManager answers again")
		a.events.Add(ev)
	}
}
