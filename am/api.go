package am

import (
	"fmt"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
)

// This file is the AM's side of its HTTP API (docs/running.md#http-api): package web serves the
// routes, auth, event stream, status page and connection bounds, and reads and changes the AM only
// through web.State, which *am implements here (and in liveness.go, preemption.go, gang.go and
// surface.go: Alive, Notice, Rendezvous, SetRequirements), every method taking mu itself.

// Status returns a snapshot of the AM's state.
func (a *am) Status() contract.Status {
	evs := a.events.Latest(contract.StatusEvents)
	a.mu.Lock()
	defer a.mu.Unlock()
	s := contract.Status{App: a.cfg.App, State: a.state, Diagnostics: a.diagnostics, Requirement: a.book.Want.Requirement(a.cfg.Spec, a.cfg.ExternalResources),
		Containers: []contract.ContainerStatus{}, Events: evs}
	s.ExcludedNodes, s.Exclusions = book.ExclusionStatus(a.book.Live.LostNodes(), a.policy.Excluded())
	if f := a.book.End.Failed(); s.Diagnostics == "" && f != nil {
		s.Diagnostics = f.Diagnostics
	}
	s.DriverStderrTail = a.driver.stderrTail() // web serves it only with the secret (visibility.go)
	s.Now, s.Started = a.cfg.Now(), a.started
	s.Gang = a.book.Gang.Status(a.book.Want.Spec(a.cfg.Spec), a.rec.All())
	s.Nodes, s.NodesAt = a.book.Nodes.Listing()
	s.Asks, s.Counts.Requested = a.book.Asks.Status()
	a.rec.Compact()
	s.Counts.Completed, _, s.Counts.Failed = a.rec.Counts()
	s.FinishedNotListed = s.Counts.Completed - len(a.rec.Finished())
	for _, t := range a.rec.All() {
		cs := contract.ContainerStatus{ID: t.ID, Node: t.Node, State: t.Phase, Resources: t.Resources, Infos: t.Infos, Rank: t.Rank, Topology: t.Topology,
			RequestedAt: t.RequestedAt, AllocatedAt: t.AllocatedAt, LaunchedAt: t.LaunchedAt, FinishedAt: t.FinishedAt}
		switch t.Phase {
		case contract.Launching:
			s.Counts.Allocated++
		case contract.Running:
			s.Counts.Running++
		case contract.Stopping:
			s.Counts.Stopping++
		case contract.Completed:
			st := t.Exit.Status
			cs.ExitStatus, cs.ExitClass, cs.Diagnostics = &st, t.Exit.Class, t.Exit.Diagnostics
		}
		if cs.Diagnostics == "" && t.ReportFailure != "" {
			cs.Diagnostics = t.ReportFailure
		}
		cs.StderrTail = t.Exit.StderrTail
		if t.Notice != nil {
			cs.PreemptionDeadline = t.Notice.Deadline
		}
		cs.GPUs = a.gpus.Status(t.ID) // gpuusage.go
		s.Containers = append(s.Containers, cs)
	}
	a.gpus.NewestHistories(s.Containers) // the web UI's utilisation chart
	s.GPUUsage = a.gpus.JobUsage(a.rec.GPUHours(s.Now), a.book.Idle.Hours(s.Now))
	return s
}

// Report records a launcher's report: web.ErrUnknownContainer if the container is not one of this
// AM's, web.ErrNotRunning if it is not launching or running (a finished, stopping or held container's
// launcher has nothing to report, and accepting its reports would let a holder of the secret grow the
// AM's memory through containers that are gone; docs/security.md#flood-bounds).
func (a *am) Report(id string, r contract.ContainerReport) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.rec.Get(id)
	if t == nil {
		return web.ErrUnknownContainer
	}
	if t.Phase != contract.Running && t.Phase != contract.Launching {
		return fmt.Errorf("%w: %s is %s", web.ErrNotRunning, id, t.Phase)
	}
	if err := checkTopologies(r.Topology, r.Infos); err != nil {
		// The infos stand on their own; a topology that is not a matrix of GPUs is not drawn nor told.
		a.log.WithFields(logrus.Fields{"container": id, "node": t.Node}).Warnf("am: the launcher's GPU topology is ignored: %v", err)
		r.Topology = nil
	}
	a.events.AddAll(a.rec.Reported(t, r))
	if r.WorkerExit() {
		return nil // the worker's exit (diagnostics.go): no infos, nothing to check or assign
	}
	log := a.log.WithFields(logrus.Fields{"container": id, "node": t.Node})
	if r.Failure != "" {
		log.WithField("resource", r.FailedResource).Warn("am: launcher reports " + t.ReportFailure)
	}
	for name, infos := range r.Infos {
		log.WithFields(logrus.Fields{"resource": name, "infos": infos}).Info("am: resource infos reported")
	}
	// No GPU held by two live containers of one node (docs/running.md#events): the later is stopped.
	sh, shared := a.rec.CheckSharedGPUs(t)
	if !shared {
		if ev, master, ok := a.book.Gang.Rank(a.rec.All()); ok {
			a.log.WithFields(logrus.Fields{"round": a.book.Gang.Round(), "master": master}).Info("am: " + ev.Message)
			a.events.Add(ev)
		}
		return nil
	}
	a.log.WithFields(logrus.Fields{"container": t.ID, "holder": sh.Holder.ID, "node": t.Node, "gpu": sh.UUID, "counts": sh.Counts}).
		Error("am: two live TaskExecutors hold one GPU; stopping the later")
	a.events.Add(sh.Event)
	if sh.StopNow {
		a.launch.stopInBackground([]*book.Container{t})
	}
	return nil
}

// Requirement is the declared requirement (GET /api/v1/requirements).
func (a *am) Requirement() contract.Requirement {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.book.Want.Requirement(a.cfg.Spec, a.cfg.ExternalResources)
}

// Unknown returns those of ids that are not (or no longer) containers the AM keeps: the report
// counter forgets them (web.State).
func (a *am) Unknown(ids []string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, id := range ids {
		if a.rec.Get(id) == nil {
			out = append(out, id)
		}
	}
	return out
}

// WantNodes notes that the status is being read for the page's device map (nodes.go, nodeLister.wanted).
func (a *am) WantNodes() { a.nodes.wanted() }

// Web is what package web serves of this AM: its state, events and metrics.
func (a *am) Web() web.Backend {
	return web.Backend{State: a, Events: eventSource{a.events}, Metrics: a.metrics.Handler()}
}

// EventsHandler serves l on GET /api/v1/events without a bound on streams (tests, embedding);
// heartbeat <= 0 uses the default.
func EventsHandler(l *events.Log, heartbeat time.Duration) http.HandlerFunc {
	return web.EventsHandler(eventSource{l}, heartbeat)
}

// eventSource is an events.Log as web.EventLog: the same log, its subscriptions as web.Subscription.
type eventSource struct{ *events.Log }

func (s eventSource) Subscribe(after uint64) web.Subscription { return s.Log.Subscribe(after) }

// checkTopologies says what is wrong with a report's GPU topologies: more resources than
// contract.MaxTopologyResources, one of a resource the report has no infos of, or one that is not a
// matrix of GPUs (contract.GPUTopology.Check).
func checkTopologies(tops map[string]contract.GPUTopology, infos map[string][]contract.Info) error {
	if len(tops) > contract.MaxTopologyResources {
		return fmt.Errorf("%d resources, at most %d", len(tops), contract.MaxTopologyResources)
	}
	for name, top := range tops {
		if _, ok := infos[name]; !ok {
			return fmt.Errorf("resource %.40q has no infos in the report", name)
		}
		if err := top.Check(); err != nil {
			return fmt.Errorf("resource %.40q: %w", name, err)
		}
	}
	return nil
}
