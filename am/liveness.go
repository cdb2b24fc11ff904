package am

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
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

// livenessProbeTimeout bounds one getContainerStatuses of a probe: a NodeManager that does not answer
// within it is taken as down. Short, since it adds to the time a lost worker waits for its
// replacement when its node is gone without refusing connections (docs/running.md#liveness); a
// NodeManager that runs answers in milliseconds.
const livenessProbeTimeout = 5 * time.Second

// keptLivenessGrace is how long after this attempt's start a TaskExecutor kept from an earlier
// attempt may stay silent before it is probed, whatever the timeout: its launcher finds the new
// attempt only at its next look-up of the AM's address, which backs off up to 15 s (with a quarter of
// jitter) and takes up to 10 s (docs/running.md#kept-taskexecutors-find-the-new-attempt). Without it
// a short timeout would probe every kept TaskExecutor after each AM restart.
const keptLivenessGrace = 30 * time.Second

// livenessState is the liveness check's memory: when it last scanned, when its clocks (re)started,
// and the nodes excluded for a lost TaskExecutor with the probes of their NodeManagers. Its verbs are
// the only writers of its fields and of the records' liveness marks (book.Container's HeardAt,
// VouchedAt, Probing): Heard (a launcher's message), Due (a scan is due), Silent (the TaskExecutors to probe),
// Probed (a probe's verdict), Lost (a node excluded for a loss), LostNodesDue and NodeProbeDone (the
// probes of those nodes), NodeBack (one answers again). The AM's mutex guards it (doc.go).
type livenessState struct {
	// scanned is when the last scan ran; resumed is when the check (re)started counting: a loop that
	// could not run for a while (an RM failover, a stalled process) restarts every clock, so that its
	// own pause is never a launcher's silence.
	scanned, resumed time.Time
	// lostNodes are the nodes excluded because a TaskExecutor on them was lost, with that container's
	// id to probe their NodeManager with; the exclusion is lifted when the RM reports the node RUNNING
	// or its NodeManager answers again.
	lostNodes map[string]*hadooppb.ContainerIdProto
	// probingNode: a lost node's NodeManager is being asked; nodeProbed: when it was last asked (once
	// a timeout, so that a node that never comes back costs little and logs little).
	probingNode map[string]bool
	nodeProbed  map[string]time.Time
}

// Heard: t's launcher said it is alive.
func (l *livenessState) Heard(t *book.Container, now time.Time) { t.HeardAt = now }

// Due says whether a scan is due at now and, if so, books it: one every tenth of the timeout, so
// that a loss is seen within 1.1 timeouts and a heartbeat of a large application does not pay a pass
// over every container (BenchmarkAMHeartbeat). The first scan, and the first after a pause of more
// than half the timeout, restart every clock.
func (l *livenessState) Due(now time.Time, timeout time.Duration) bool {
	if l.scanned.IsZero() || now.Sub(l.scanned) > timeout/2 {
		l.resumed = now // the first scan, or the loop paused: every clock starts now
	}
	if now.Sub(l.scanned) < timeout/10 {
		return false
	}
	l.scanned = now
	return true
}

// Silent lists the running TaskExecutors among seq that nothing vouched for in timeout — not their
// launcher, not their NodeManager, not their launch, and neither since (the attempt's start) nor the
// check's own clock started that long ago — and marks them probing (one probe at a time each). One
// kept from an earlier attempt and not heard yet waits keptLivenessGrace after since at least.
func (l *livenessState) Silent(seq []*book.Container, now, since time.Time, timeout time.Duration) []livenessProbe {
	var probes []livenessProbe
	for _, t := range seq {
		if t.Phase != contract.Running || t.Probing || t.CID == nil {
			continue
		}
		if t.HeardAt.IsZero() && t.LaunchedAt.Before(since) && now.Sub(since) < keptLivenessGrace {
			continue
		}
		last := latest(t.HeardAt, t.VouchedAt, t.LaunchedAt, since, l.resumed)
		if now.Sub(last) < timeout {
			continue
		}
		t.Probing = true
		probes = append(probes, livenessProbe{t: t, node: t.Node, cid: t.CID, heardAt: t.HeardAt, silent: now.Sub(last)})
	}
	return probes
}

// LostNodesDue lists the nodes excluded for a loss whose NodeManager is due to be asked again (not
// being asked, and last asked a timeout ago), with the container to ask about, and marks them
// being asked (NodeProbeDone ends that).
func (l *livenessState) LostNodesDue(now time.Time, timeout time.Duration) map[string]*hadooppb.ContainerIdProto {
	var nodes map[string]*hadooppb.ContainerIdProto
	for n, cid := range l.lostNodes {
		if !l.probingNode[n] && now.Sub(l.nodeProbed[n]) >= timeout {
			if nodes == nil {
				nodes = map[string]*hadooppb.ContainerIdProto{}
			}
			nodes[n] = cid
			l.probingNode[n], l.nodeProbed[n] = true, now
		}
	}
	return nodes
}

// probeOutcome is what a probe's verdict means for its TaskExecutor.
type probeOutcome int

const (
	probeMoot    probeOutcome = iota // it ended meanwhile, or its launcher spoke: nothing to do
	probeVouched                     // its NodeManager runs it, or could not decide: asked again a timeout later
	probeLost                        // declare it lost (the AM's lostLocked)
)

// Probed books the verdict of p's probe (its NodeManager's answer) at now.
func (l *livenessState) Probed(p livenessProbe, verdict nmVerdict, now time.Time) probeOutcome {
	t := p.t
	t.Probing = false
	if t.Phase != contract.Running || !t.HeardAt.Equal(p.heardAt) {
		return probeMoot
	}
	if verdict != nmDown && verdict != nmForgot {
		t.VouchedAt = now
		return probeVouched
	}
	return probeLost
}

// Lost books that a TaskExecutor with container cid on node was lost at now. It says whether node
// is newly excluded for a loss (the AM queues its blacklist addition); a node already excluded keeps
// the first lost container to probe its NodeManager with.
func (l *livenessState) Lost(node string, cid *hadooppb.ContainerIdProto, now time.Time) bool {
	if l.lostNodes == nil {
		l.lostNodes, l.probingNode, l.nodeProbed = map[string]*hadooppb.ContainerIdProto{}, map[string]bool{}, map[string]time.Time{}
	}
	if _, ok := l.lostNodes[node]; ok {
		return false
	}
	l.lostNodes[node], l.nodeProbed[node] = cid, now
	return true
}

// NodeProbeDone: the probe of a lost node's NodeManager returned.
func (l *livenessState) NodeProbeDone(node string) { delete(l.probingNode, node) }

// NodeBack forgets node's loss (the RM reports it RUNNING, or its NodeManager answers again); false
// if it was not excluded for one.
func (l *livenessState) NodeBack(node string) bool {
	if _, ok := l.lostNodes[node]; !ok {
		return false
	}
	delete(l.lostNodes, node)
	delete(l.nodeProbed, node)
	return true
}

// LostNodes are the nodes excluded for a lost TaskExecutor, in no order.
func (l *livenessState) LostNodes() iter.Seq[string] { return maps.Keys(l.lostNodes) }

// Alive records that the launcher of container id is alive; false if the container is not one of
// this AM's.
func (a *am) Alive(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.rec.Get(id)
	if t == nil {
		return false
	}
	a.live.Heard(t, a.cfg.Now())
	return true
}

// livenessProbe is one silent TaskExecutor to ask its NodeManager about.
type livenessProbe struct {
	t       *book.Container
	node    string
	cid     *hadooppb.ContainerIdProto
	heardAt time.Time // its launcher's last message when the probe began
	silent  time.Duration
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
	if !a.live.Due(now, timeout) {
		a.mu.Unlock()
		return
	}
	probes := a.live.Silent(a.rec.All(), now, a.started, timeout)
	nodes := a.live.LostNodesDue(now, timeout)
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

// probe asks a silent TaskExecutor's NodeManager and books the verdict.
func (a *am) probe(ctx context.Context, p livenessProbe) {
	defer a.background.Done()
	verdict, evidence := askNM(ctx, a.cfg.NM, p.node, p.cid)
	a.mu.Lock()
	defer a.mu.Unlock()
	t := p.t
	switch a.live.Probed(p, verdict, a.cfg.Now()) {
	case probeVouched:
		a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node, "silent": p.silent.Round(time.Second).String()}).
			Info("am: TaskExecutor's launcher is silent, but not lost: " + evidence)
	case probeLost:
		a.lostLocked(t, p.silent, evidence)
	}
}

// lostLocked declares t lost: its container is released, its node excluded until the RM reports it
// RUNNING or its NodeManager answers again, and its end (exit status -100, not counted as a failure)
// makes Reconcile ask for a replacement at once (and a gang start its next round).
func (a *am) lostLocked(t *book.Container, silent time.Duration, evidence string) {
	why := fmt.Sprintf("lost: its launcher has been silent for %s (taskexecutor.liveness-timeout = %s) and %s", silent.Round(time.Second), a.cfg.LivenessTimeout, evidence)
	a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node}).Warn("am: TaskExecutor " + why + "; releasing it and asking for a replacement (not counted as a failure)")
	if t.CID != nil {
		a.release[t.ID] = t.CID
		if a.live.Lost(t.Node, t.CID, a.cfg.Now()) {
			a.book.Excl.Exclude(t.Node)
		}
	}
	a.emit(lostEvent(t.ID, t.Node, why))
	a.exitedLocked(t, a.rec.Completed(t, decision.Exit{Status: contract.ExitStatusAborted, Class: contract.ExitAborted, Diagnostics: why}))
	a.news = true
	a.poke()
}

// probeLostNode asks a node excluded for a loss whether its NodeManager answers again.
func (a *am) probeLostNode(ctx context.Context, node string, cid *hadooppb.ContainerIdProto) {
	defer a.background.Done()
	verdict, _ := askNM(ctx, a.cfg.NM, node, cid)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.live.NodeProbeDone(node)
	if verdict != nmDown && ctx.Err() == nil {
		a.nodeBackLocked(node, "its NodeManager answers again")
	}
}

// nodeBackLocked lifts the exclusion of a node excluded for a loss (the RM reports it RUNNING, or
// its NodeManager answers again).
func (a *am) nodeBackLocked(node, why string) {
	if !a.live.NodeBack(node) {
		return
	}
	if a.policy.IsExcluded(node) {
		return // the failure policy excluded it too; its own timeout lifts it
	}
	a.book.Excl.Lift(node)
	a.log.WithField("node", node).Info("am: exclusion of a node that lost a TaskExecutor lifted: " + why)
	a.emit(events.NodeExclusionLifted(node))
}

// lostEvent: a TaskExecutor was declared lost by the AM's liveness check.
func lostEvent(id, node, why string) contract.Event {
	return contract.Event{Type: contract.EventLost, Severity: contract.SeverityWarning, Container: id, Node: node, Reason: "liveness-timeout",
		Message: fmt.Sprintf("TaskExecutor %s on %s %s; released, its node excluded until it is healthy again, a replacement asked for (not counted as a failure)", id, node, why)}
}
