package am

import (
	"fmt"
	"sort"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/contract"
)

// This file is the AM's check that no GPU is held by two live containers of the application on one
// node (docs/running.md#events, gpu-shared). Under YARN's GPU isolation each container sees its GPUs
// numbered from 0, so indexes say nothing across containers; the launcher reports each GPU's UUID
// (contract.InfoUUID) beside its index, and two live containers of one node reporting the same UUID
// share a GPU, which YARN's scheduler or the node's coordination should have prevented.
//
// The container that reported the GPU second is stopped and replaced: the first may already be
// computing on it. Its end does not count as a failure of the worker (it is the node's fault, not the
// worker's), unless it keeps happening: from the (book.SharedGPUFreeStops+1)-th such stop on one node, the
// stopped container's end counts as a failure, so the failure policy (rate, exclusion of the node)
// takes over instead of replacing containers on a node that keeps doubling up GPUs without end.

// checkSharedGPUsLocked compares the GPU UUIDs t just reported with those of the node's other live
// containers; on a match it emits a gpu-shared event naming both containers and the GPU, and stops t.
// It reports whether t was stopped.
func (a *am) checkSharedGPUsLocked(t *book.Container) bool {
	mine := reportedUUIDs(t)
	if len(mine) == 0 {
		return false
	}
	for _, o := range a.rec.All() {
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
			n := a.rec.SharedGPU(t.Node)
			counts := n > book.SharedGPUFreeStops
			a.log.WithFields(logrus.Fields{"container": t.ID, "holder": o.ID, "node": t.Node, "gpu": u, "counts": counts}).
				Error("am: two live TaskExecutors hold one GPU; stopping the later")
			a.emit(gpuSharedEvent(t.ID, o.ID, t.Node, mine[u], u, counts))
			t.SharedGPUCounts = counts
			if a.rec.Stopping(t) {
				a.stopInBackground([]*book.Container{t})
			}
			return true
		}
	}
	return false
}

// reportedUUIDs maps the device UUIDs in t's reported infos, of every resource, to the resource's name.
func reportedUUIDs(t *book.Container) map[string]string {
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
		msg += fmt.Sprintf("; this happened more than %d times on %s, so its end counts as a failure", book.SharedGPUFreeStops, node)
	} else {
		msg += " (not counted as a failure)"
	}
	return contract.Event{Type: contract.EventGPUShared, Severity: contract.SeverityError, Container: later, Other: holder, Node: node,
		Infos: map[string][]contract.Info{resource: {{contract.InfoUUID: uuid}}}, Message: msg}
}
