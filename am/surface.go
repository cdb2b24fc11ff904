package am

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// This file is the loop's side of surfacing failures: it turns what the loop observes into events,
// feeds the failure policy and acts on its decisions (blacklist updates, failing the application),
// checks for asks pending too long, and keeps the metrics' gauges current. Methods ending in Locked
// run with a.mu held.

// exitedLocked acts on a TaskExecutor's end, which records already booked (evs are the events it
// returned): events, metrics and the failure policy.
func (a *am) exitedLocked(t *book.Container, evs []contract.Event) {
	a.events.AddAll(evs)
	a.metrics.DropGPUs(t.ID) // its gauges; its GPU series stays for the status until its record is forgotten
	a.metrics.ObserveExit(t.Exit.Class)
	d := a.policy.RecordExit(a.cfg.Now(), t.Node, t.Exit.Class)
	if d.ExcludeNode == "" && t.Exit.Class == contract.ExitDiscoveryFailed && a.policy.ExcludeUnfit(a.cfg.Now(), t.Node) {
		// The node lacks what the job needs: exclude it now (docs/running.md#the-workers-own-error).
		a.book.Excl.Exclude(t.Node)
		a.log.WithFields(logrus.Fields{"node": t.Node, "reason": t.Exit.Diagnostics}).Warn("am: excluding a node that cannot run the job's workers")
		a.events.Add(nodeLacksEvent(t.Node, t.Exit.Diagnostics))
		if all, _ := a.policy.AllExcluded(a.clusterNodes); all {
			a.failLocked(fmt.Sprintf("every node of the cluster (%d) is excluded: %v; the last one cannot run this job's workers: %s",
				a.clusterNodes, a.policy.Excluded(), lacksText(t.Exit.Diagnostics)))
		}
	}
	if d.ExcludeNode != "" {
		cfg := a.policy.Config()
		a.book.Excl.Exclude(d.ExcludeNode)
		a.log.WithFields(logrus.Fields{"node": d.ExcludeNode, "failures": d.NodeFailures}).Warn("am: excluding node after repeated TaskExecutor failures")
		a.events.Add(events.NodeExcluded(d.ExcludeNode, d.NodeFailures, cfg.FailureWindow, cfg.NodeExclusionTimeout))
		if all, why := a.policy.AllExcluded(a.clusterNodes); all {
			a.failLocked(why)
		}
	}
	if d.RateExceeded {
		a.failLocked(d.Reason)
	}
}

// failLocked makes the failure policy end the application (the first reason wins).
func (a *am) failLocked(reason string) {
	if a.policyOut != nil {
		return
	}
	a.policyOut = &decision.Outcome{Status: contract.Failed, Diagnostics: reason}
	a.log.Error("am: " + reason)
	a.events.Add(events.FailureLimitReached(reason))
}

// policyOutcome is the application's end decided by the failure policy (nil while none).
func (a *am) policyOutcome() *decision.Outcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.policyOut == nil {
		return nil
	}
	out := *a.policyOut
	return &out
}

// liftExclusionsLocked removes timed-out exclusions (sent as blacklist removals).
func (a *am) liftExclusionsLocked(now time.Time) {
	for _, n := range a.policy.Lift(now) {
		if !a.book.Place.Full(n) { // still full under taskexecutor.placement.max-per-node (placement.go)
			a.book.Excl.Lift(n)
		}
		a.log.WithField("node", n).Info("am: node exclusion lifted")
		a.events.Add(events.NodeExclusionLifted(n))
	}
}

// blacklistNames are the names a node is excluded under: the scheduler matches a blacklist entry
// against its node name, which is "host" or, with yarn.scheduler.include-port-in-node-name (as in
// MiniYARNCluster), "host:port"; both are sent.
func blacklistNames(nodes []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range nodes {
		names := []string{n}
		if h := hadoop.NodeHost(n); h != n {
			names = append(names, h)
		}
		for _, x := range names {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	return out
}

// nodeUpdateLocked reports nodes the RM says are no longer usable.
func (a *am) nodeUpdateLocked(n *hadooppb.NodeReportProto) {
	st := n.GetNodeState()
	node := yarnrpc.NodeAddress(n.GetNodeId())
	switch st {
	case hadooppb.NodeStateProto_NS_RUNNING:
		if ev, ok := a.book.Live.NodeBack(node, &a.book.Excl, a.policy.IsExcluded); ok {
			a.log.WithField("node", node).Info("am: exclusion of a node that lost a TaskExecutor lifted: the ResourceManager reports it RUNNING")
			a.events.Add(ev)
		}
		return
	case hadooppb.NodeStateProto_NS_NEW:
		return
	}
	state := strings.TrimPrefix(st.String(), "NS_")
	a.log.WithFields(logrus.Fields{"node": node, "state": state}).Warn("am: node " + state)
	a.events.Add(events.NodeUnhealthy(node, state, strings.TrimSpace(n.GetHealthReport())))
}

// checkPending runs the not-enough-resources rule after each heartbeat: asks pending with no
// allocation for the timeout → an event with the cluster's capacity as evidence (node reports when
// config.Cluster is set, else the scheduler's headroom), and the configured action.
func (a *am) checkPending(ctx context.Context) {
	a.mu.Lock()
	pending := a.book.Asks.Pending()
	if a.stopping || a.policyOut != nil || a.book.Gang.Formed() && a.book.Want.Spec(a.cfg.Spec).Elastic() {
		pending = 0 // an elastic gang's round runs: what it asks for beyond is growth, not a shortage (book.Gang.Elastic)
	}
	d := a.policy.ObservePending(a.cfg.Now(), pending, a.progressed)
	a.progressed = false
	headroom := a.headroom
	a.mu.Unlock()
	if d.Cleared {
		a.events.Add(events.ResourcesAvailable("the pending containers were allocated or are no longer wanted"))
	}
	if !d.Report {
		return
	}
	nodes := a.nodes.running(ctx)
	ev := buildEvidence(a.cfg.Spec.Capability, pending, d.PendingFor, nodes, headroom)
	ev.Partition = a.cfg.NodeLabel
	e := a.events.Add(events.NotEnoughResources(ev, a.policy.Config().OnPendingTimeout))
	a.log.WithFields(logrus.Fields{"pending": pending, "pending_for": ev.PendingFor}).Warn("am: " + e.Message)
	if d.Fail {
		a.mu.Lock()
		a.failLocked(e.Message)
		a.mu.Unlock()
	}
}

// updateMetricsLocked sets the gauges from the current state.
func (a *am) updateMetricsLocked() {
	launching, running, stopping, completed := a.rec.Phases()
	byPhase := map[contract.Phase]int{contract.Launching: launching, contract.Running: running, contract.Stopping: stopping, contract.Completed: completed}
	a.metrics.SetContainers(byPhase, a.book.Asks.Pending(), a.book.Want.Count(), len(a.policy.Excluded()))
}

// SetRequirements declares the number of TaskExecutors wanted (PUT /api/v1/requirements). by says
// who asked, for the event. The framework's OnScale is asked first: it may refuse, or defer the
// change to its own later Scale (framework.Deferred: the count stays, the answer carries its note).
func (a *am) SetRequirements(instances int, by string) (contract.Requirement, error) {
	if err := (contract.RequirementsUpdate{Instances: &instances}).Validate(); err != nil {
		return contract.Requirement{}, err
	}
	if hook := a.cfg.OnScale; hook != nil {
		a.mu.Lock()
		from := a.book.Want.Count()
		a.mu.Unlock()
		if from != instances {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := hook(ctx, from, instances) // the framework's say, without mu (it may call out)
			cancel()
			var later *framework.Deferred
			if errors.As(err, &later) {
				a.events.Add(events.ScaleDeferred(from, instances, by, later.Message))
				a.mu.Lock()
				r := a.book.Want.Requirement(a.cfg.Spec, a.cfg.ExternalResources)
				a.mu.Unlock()
				r.Note = later.Message
				return r, nil
			}
			if err != nil {
				return contract.Requirement{}, err
			}
		}
	}
	return a.setInstances(instances, nil, by)
}

// Scale is framework.AMStart.Scale: the framework's own change of the count (its demand), not
// asked of its OnScale; stopFirst names the containers a scale-down stops first.
func (a *am) Scale(instances int, stopFirst []string, why string) error {
	if err := (contract.RequirementsUpdate{Instances: &instances}).Validate(); err != nil {
		return err
	}
	_, err := a.setInstances(instances, stopFirst, why)
	return err
}

// Instances is framework.AMStart.Instances: the declared number of TaskExecutors.
func (a *am) Instances() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.book.Want.Count()
}

// setInstances declares the count (and the containers a scale-down stops first), with an event when
// it changed.
func (a *am) setInstances(instances int, stopFirst []string, by string) (contract.Requirement, error) {
	a.mu.Lock()
	if a.stopping || a.policyOut != nil {
		a.mu.Unlock()
		return contract.Requirement{}, fmt.Errorf("the application is finishing; its requirement can no longer change")
	}
	old := a.book.Want.Set(instances, stopFirst, by)
	a.book.Idle.Retake(instances-old, a.cfg.Now()) // GPUs given back for idleness and declared again
	// A demand-sized job's give-back released through the framework's Scale (idlerelease.go).
	if ev, idle, ok := a.book.Idle.ScaledDown(&a.rec, old, instances, stopFirst, a.cfg.Now()); ok {
		a.events.Add(ev)
		a.log.WithFields(logrus.Fields{"container": ev.Container, "node": ev.Node, "idle": idle, "from": old, "to": instances}).
			Info("am: released a TaskExecutor for idle GPUs through the framework")
	}
	r := a.book.Want.Requirement(a.cfg.Spec, a.cfg.ExternalResources)
	a.mu.Unlock()
	if old != instances {
		a.log.WithFields(logrus.Fields{"from": old, "to": instances}).Info("am: TaskExecutor requirement changed")
		a.events.Add(events.RequirementChanged(old, instances, by))
	}
	a.poke()
	return r, nil
}
