package am

import (
	"context"
	"errors"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/internal/hadoop"
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
	v := a.book.Judge(t, a.policy, a.cfg.Now(), a.clusterNodes) // book.Judge: exclusions, the application's end
	if v.Unfit != "" {
		a.log.WithFields(logrus.Fields{"node": v.Unfit, "reason": t.Exit.Diagnostics}).Warn("am: excluding a node that cannot run the job's workers")
	}
	if v.Excluded != "" {
		a.log.WithFields(logrus.Fields{"node": v.Excluded, "failures": v.NodeFailures}).Warn("am: excluding node after repeated TaskExecutor failures")
	}
	if v.Failed != "" {
		a.log.Error("am: " + v.Failed)
	}
	a.events.AddAll(v.Events)
}

// failLocked makes the failure policy end the application (book.End.Fail: the first reason wins).
func (a *am) failLocked(reason string) {
	if ev, first := a.book.End.Fail(reason); first {
		a.log.Error("am: " + reason)
		a.events.Add(ev)
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

// checkPending runs the not-enough-resources rule after each heartbeat: asks pending with no
// allocation for the timeout → an event with the cluster's capacity as evidence (node reports when
// config.Cluster is set, else the scheduler's headroom), and the configured action.
func (a *am) checkPending(ctx context.Context) {
	a.mu.Lock()
	pending := a.book.Asks.Pending()
	if a.book.End.Ending() || a.book.Gang.Formed() && a.book.Want.Spec(a.cfg.Spec).Elastic() {
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
	old, err := a.book.Declare(instances, stopFirst, by, a.cfg.Now())
	if err != nil {
		a.mu.Unlock()
		return contract.Requirement{}, err
	}
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
	a.wake.poke()
	return r, nil
}
