package book

import (
	"fmt"
	"iter"
	"maps"
	"time"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// KeptLivenessGrace is how long after this attempt's start a TaskExecutor kept from an earlier
// attempt may stay silent before it is probed, whatever the timeout: its launcher finds the new
// attempt only at its next look-up of the AM's address, which backs off up to 15 s (with a quarter of
// jitter) and takes up to 10 s (docs/running.md#kept-taskexecutors-find-the-new-attempt). Without it
// a short timeout would probe every kept TaskExecutor after each AM restart.
const KeptLivenessGrace = 30 * time.Second

// Liveness is the memory of the AM's liveness check of its TaskExecutors (am/liveness.go,
// docs/running.md#liveness): when it last scanned, when its clocks (re)started, and the nodes
// excluded for a lost TaskExecutor with the probes of their NodeManagers. Its verbs are the only
// writers of its fields and of the records' liveness marks (Container's HeardAt, VouchedAt,
// Probing): Heard (a launcher's message), Due (a scan is due), Silent (the TaskExecutors to probe),
// Probed (a probe's verdict), Lost (a TaskExecutor declared lost, its node excluded), LostNodesDue
// and NodeProbeDone (the probes of those nodes), NodeBack (one answers again). The AM's mutex guards it (package doc).
type Liveness struct {
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

// Probe is one silent TaskExecutor to ask its NodeManager about (Liveness.Silent).
type Probe struct {
	C       *Container
	Node    string
	CID     *hadooppb.ContainerIdProto
	HeardAt time.Time // its launcher's last message when the probe began
	Silent  time.Duration
}

// ProbeOutcome is what a probe's verdict means for its TaskExecutor.
type ProbeOutcome int

const (
	ProbeMoot    ProbeOutcome = iota // it ended meanwhile, or its launcher spoke: nothing to do
	ProbeVouched                     // its NodeManager runs it, or could not decide: asked again a timeout later
	ProbeLost                        // declare it lost (Liveness.Lost)
)

// Heard: t's launcher said it is alive.
func (l *Liveness) Heard(t *Container, now time.Time) { t.HeardAt = now }

// Due says whether a scan is due at now and, if so, books it: one every tenth of the timeout, so
// that a loss is seen within 1.1 timeouts and a heartbeat of a large application does not pay a pass
// over every container (BenchmarkAMHeartbeat). The first scan, and the first after a pause of more
// than half the timeout, restart every clock.
func (l *Liveness) Due(now time.Time, timeout time.Duration) bool {
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
// kept from an earlier attempt and not heard yet waits KeptLivenessGrace after since at least.
func (l *Liveness) Silent(seq []*Container, now, since time.Time, timeout time.Duration) []Probe {
	var probes []Probe
	for _, t := range seq {
		if t.Phase != contract.Running || t.Probing || t.CID == nil {
			continue
		}
		if t.HeardAt.IsZero() && t.LaunchedAt.Before(since) && now.Sub(since) < KeptLivenessGrace {
			continue
		}
		last := latest(t.HeardAt, t.VouchedAt, t.LaunchedAt, since, l.resumed)
		if now.Sub(last) < timeout {
			continue
		}
		t.Probing = true
		probes = append(probes, Probe{C: t, Node: t.Node, CID: t.CID, HeardAt: t.HeardAt, Silent: now.Sub(last)})
	}
	return probes
}

// LostNodesDue lists the nodes excluded for a loss whose NodeManager is due to be asked again (not
// being asked, and last asked a timeout ago), with the container to ask about, and marks them
// being asked (NodeProbeDone ends that).
func (l *Liveness) LostNodesDue(now time.Time, timeout time.Duration) map[string]*hadooppb.ContainerIdProto {
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

// Probed books the verdict of p's probe at now: gone says its NodeManager does not answer or no
// longer knows the container.
func (l *Liveness) Probed(p Probe, gone bool, now time.Time) ProbeOutcome {
	t := p.C
	t.Probing = false
	if t.Phase != contract.Running || !t.HeardAt.Equal(p.HeardAt) {
		return ProbeMoot
	}
	if !gone {
		t.VouchedAt = now
		return ProbeVouched
	}
	return ProbeLost
}

// lost books that a TaskExecutor with container cid on node was lost at now. It says whether node
// is newly excluded for a loss; a node already excluded keeps the first lost container to probe
// its NodeManager with.
func (l *Liveness) lost(node string, cid *hadooppb.ContainerIdProto, now time.Time) bool {
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
func (l *Liveness) NodeProbeDone(node string) { delete(l.probingNode, node) }

// LostNodes are the nodes excluded for a lost TaskExecutor, in no order.
func (l *Liveness) LostNodes() iter.Seq[string] { return maps.Keys(l.lostNodes) }

// Lost declares the TaskExecutor of probe p lost at now (its launcher silent for p.Silent, over
// timeout, and evidence, its NodeManager's answer in words): its node is excluded until the RM
// reports it RUNNING or its NodeManager answers again (excl), and it ends (exit status -100, not counted as
// a failure), so that Reconcile asks for a replacement at once (and a gang starts its next round).
// It returns the lost event, why in words (the end's diagnostics, which the AM's log line says) and
// the events of its end among r; the AM releases its container.
func (l *Liveness) Lost(r *Records, p Probe, excl *Exclusions, timeout time.Duration, evidence string, now time.Time) (lost contract.Event, why string, ended []contract.Event) {
	t := p.C
	why = fmt.Sprintf("lost: its launcher has been silent for %s (taskexecutor.liveness-timeout = %s) and %s", p.Silent.Round(time.Second), timeout, evidence)
	if t.CID != nil && l.lost(t.Node, t.CID, now) {
		excl.Exclude(t.Node)
	}
	lost = contract.Event{Type: contract.EventLost, Severity: contract.SeverityWarning, Container: t.ID, Node: t.Node, Reason: "liveness-timeout",
		Message: fmt.Sprintf("TaskExecutor %s on %s %s; released, its node excluded until it is healthy again, a replacement asked for (not counted as a failure)", t.ID, t.Node, why)}
	return lost, why, r.Completed(t, decision.Exit{Status: contract.ExitStatusAborted, Class: contract.ExitAborted, Diagnostics: why})
}

// NodeBack forgets node's loss (the RM reports it RUNNING, or its NodeManager answers again) and
// lifts its exclusion (excl) unless excluded says the failure policy excludes it too (its own timeout lifts
// it then); it returns the node-exclusion-lifted event, false when nothing was lifted.
func (l *Liveness) NodeBack(node string, excl *Exclusions, excluded func(node string) bool) (contract.Event, bool) {
	if _, ok := l.lostNodes[node]; !ok {
		return contract.Event{}, false
	}
	delete(l.lostNodes, node)
	delete(l.nodeProbed, node)
	if excluded(node) {
		return contract.Event{}, false
	}
	excl.Lift(node)
	return events.NodeExclusionLifted(node), true
}

// latest is the latest of ts (the zero time when none is set).
func latest(ts ...time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}
