package book

import (
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// Want is how many TaskExecutors the AM wants now: the one place that decides the count, and the
// only writer of it. Its sources set it through its verbs: the job file's taskexecutor.instances
// or a framework's demand at the start (NewWant), an earlier attempt's declared count (Restore), and
// every change afterwards (Set: PUT /api/v1/requirements from `yarn-am scale` or a driver, a
// framework's Scale for its demand or its autoscaler, the release of a container whose GPUs stayed
// idle). Reconcile reads it as Spec.Instances. The AM's mutex guards it (package doc).
type Want struct {
	count int
	// by names the source of count: WantJobFile, WantDemand, WantRestored or the by of the Set that
	// changed it last.
	by string
	// stopFirst names the containers a scale-down stops before the newest (a framework's idle
	// workers), set with count by Set and cleared by the next.
	stopFirst map[string]bool
}

// Sources of the count at the start (Want.By).
const (
	WantJobFile  = "job file"           // taskexecutor.instances
	WantDemand   = "framework's demand" // a framework that sizes its workers starts low (framework.AM.Instances)
	WantRestored = "earlier attempt"    // the declared count an earlier attempt saved
)

// NewWant starts the count at n, from by (WantJobFile or WantDemand).
func NewWant(n int, by string) Want { return Want{count: n, by: by} }

// Count is the number of TaskExecutors wanted.
func (w *Want) Count() int { return w.count }

// By names who set the count last.
func (w *Want) By() string { return w.by }

// StopFirst names the containers a scale-down stops before the newest (nil: none); the caller does
// not change it.
func (w *Want) StopFirst() map[string]bool { return w.stopFirst }

// Set changes the count to n on by's word, with the containers a scale-down stops first, and
// returns the count before.
func (w *Want) Set(n int, stopFirst []string, by string) (from int) {
	from, w.count, w.by = w.count, n, by
	w.stopFirst = nil
	for _, id := range stopFirst {
		if w.stopFirst == nil {
			w.stopFirst = map[string]bool{}
		}
		w.stopFirst[id] = true
	}
	return from
}

// Spec is the desired state now: the job's s (as configured) with the count wanted as its Instances.
func (w *Want) Spec(s decision.Spec) decision.Spec {
	s.Instances = w.count
	return s
}

// Requirement is the declared requirement as the API shows it (GET /api/v1/requirements): the
// job's s with the count wanted, and the YARN type of each external resource.
func (w *Want) Requirement(s decision.Spec, external map[string]string) contract.Requirement {
	mode := map[decision.Mode]string{decision.Batch: "batch", decision.Service: "service", decision.Driver: "driver"}[s.Mode]
	return contract.Requirement{Instances: w.count, Resources: s.Capability, MaxFailures: s.MaxFailures, Mode: mode,
		ExternalResources: external}
}

// Restore takes the count an earlier attempt declared; it says whether that changed the count.
func (w *Want) Restore(n int) bool {
	if n == w.count {
		return false
	}
	w.count, w.by, w.stopFirst = n, WantRestored, nil
	return true
}
