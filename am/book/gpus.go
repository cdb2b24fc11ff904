package book

import (
	"fmt"
	"sort"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// The records' GPU verbs: the GPU time the containers held (GPUHours) and the check that no GPU is
// held by two live containers of one node (CheckSharedGPUs).

// No GPU is held by two live containers of the application on one node (docs/running.md#events,
// gpu-shared). Under YARN's GPU isolation each container sees its GPUs numbered from 0, so indexes say
// nothing across containers; the launcher reports each GPU's UUID (contract.InfoUUID) beside its
// index, and two live containers of one node reporting the same UUID share a GPU, which YARN's
// scheduler or the node's coordination should have prevented.
//
// The container that reported the GPU second is stopped and replaced: the first may already be
// computing on it. Its end does not count as a failure of the worker (it is the node's fault, not the
// worker's), unless it keeps happening: from the (SharedGPUFreeStops+1)-th such stop on one node, the
// stopped container's end counts as a failure (Container.SharedGPUCounts), so the failure policy
// (rate, exclusion of the node) takes over instead of replacing containers on a node that keeps
// doubling up GPUs without end.

// SharedGPU is a GPU two live containers of one node reported: the later is stopped.
type SharedGPU struct {
	Later, Holder *Container
	UUID          string
	// Counts: the later's end counts as a failure (more than SharedGPUFreeStops such stops on its
	// node); StopNow: the AM stops it now (Records.Stopping).
	Counts, StopNow bool
	Event           contract.Event // gpu-shared
}

// CheckSharedGPUs compares the GPU UUIDs t just reported with those of its node's other live
// containers; on a match it counts the stop on t's node, marks t (SharedGPUCounts), moves it to
// stopping and returns the match with its gpu-shared event naming both containers and the GPU. ok
// false: t shares no GPU.
func (r *Records) CheckSharedGPUs(t *Container) (s SharedGPU, ok bool) {
	mine := reportedUUIDs(t)
	if len(mine) == 0 {
		return SharedGPU{}, false
	}
	for _, o := range r.seq {
		// A container whose worker exited has released (or is releasing) its GPUs, though YARN has
		// not yet reported its end: a new container of the node may hold them now.
		if o == t || o.Node != t.Node || o.WorkerExited || (o.Phase != contract.Running && o.Phase != contract.Launching) {
			continue
		}
		theirs := reportedUUIDs(o)
		for _, u := range sortedUUIDs(mine) {
			if _, shared := theirs[u]; !shared {
				continue
			}
			counts := r.sharedGPU(t.Node) > SharedGPUFreeStops
			t.SharedGPUCounts = counts
			return SharedGPU{Later: t, Holder: o, UUID: u, Counts: counts, StopNow: r.Stopping(t),
				Event: gpuSharedEvent(t.ID, o.ID, t.Node, mine[u], u, counts)}, true
		}
	}
	return SharedGPU{}, false
}

// sharedGPU: a container of node is stopped for a GPU another live container holds; it returns how
// many times that has happened on node, this one included.
func (r *Records) sharedGPU(node string) int {
	if r.sharedGPUStops == nil {
		r.sharedGPUStops = map[string]int{}
	}
	r.sharedGPUStops[node]++
	return r.sharedGPUStops[node]
}

// reportedUUIDs maps the device UUIDs in t's reported infos, of every resource, to the resource's name.
func reportedUUIDs(t *Container) map[string]string {
	var out map[string]string
	for name, infos := range t.Infos {
		for _, u := range contract.UUIDs(infos) {
			if u == "" {
				continue
			}
			if out == nil {
				out = map[string]string{}
			}
			out[u] = name
		}
	}
	return out
}

func sortedUUIDs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// gpuSharedEvent: container later reported the device uuid of resource on node, which the live
// container holder had reported before; later is stopped, its end counted as a failure when counts.
func gpuSharedEvent(later, holder, node, resource, uuid string, counts bool) contract.Event {
	msg := fmt.Sprintf("TaskExecutors %s and %s on %s both hold GPU %s; stopping %s (the later one) and asking for a replacement", holder, later, node, uuid, later)
	if counts {
		msg += fmt.Sprintf("; this happened more than %d times on %s, so its end counts as a failure", SharedGPUFreeStops, node)
	} else {
		msg += " (not counted as a failure)"
	}
	return contract.Event{Type: contract.EventGPUShared, Severity: contract.SeverityError, Container: later, Other: holder, Node: node,
		Infos: map[string][]contract.Info{resource: {{contract.InfoUUID: uuid}}}, Message: msg}
}

// GPUHours is the GPU time of the recorded containers up to now: every one's GPUs (Container.GPUs)
// times how long it ran (to now while it runs), in hours (the status's and the final diagnostics'
// reserved GPU-hours).
func (r *Records) GPUHours(now time.Time) float64 {
	var seconds float64
	for _, t := range r.seq {
		n := t.GPUs()
		if n == 0 || t.LaunchedAt.IsZero() {
			continue
		}
		end := t.FinishedAt
		if end.IsZero() {
			end = now
		}
		if d := end.Sub(t.LaunchedAt); d > 0 {
			seconds += float64(n) * d.Seconds()
		}
	}
	return seconds / 3600
}
