package am

import (
	"fmt"
	"strconv"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// This file is the AM's side of GPU health (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service):
// a launcher's sample that reads one of its container's GPUs unhealthy (contract.GPUReading.Unhealthy)
// ends that container the way a lost one is ended (released, completed as aborted, not counted as a
// failure), so Reconcile asks for a replacement at once and a gang starts its next round; the launcher
// has already kept the GPU out of the node's future claims. After taskexecutor.sick-gpus-per-node
// sick GPUs on one node, the node is excluded as the failure policy excludes a failing node.

// sickGPUCheckLocked ends t when one of r's readings says a GPU of t is unhealthy (the newest sample's
// first such reading).
func (a *am) sickGPUCheckLocked(t *book.Container, r contract.AliveReport) {
	if t.Phase != contract.Running && t.Phase != contract.Launching {
		return
	}
	for i := len(r.GPUSamples) - 1; i >= 0; i-- {
		for _, g := range r.GPUSamples[i].GPUs {
			if why := g.Unhealthy(); why != "" {
				a.sickGPULocked(t, g, why)
				return
			}
		}
	}
}

// sickGPULocked ends t, whose GPU g read unhealthy (why), asks for its replacement, and excludes its
// node at the job's sick-GPU limit.
func (a *am) sickGPULocked(t *book.Container, g contract.GPUReading, why string) {
	if a.book.Sick == nil {
		a.book.Sick = book.SickGPUs{}
	}
	n := a.book.Sick.Sick(t.Node, g.UUID)
	text := fmt.Sprintf("its GPU %d (%s) on %s is unhealthy: %s", g.Index, g.UUID, t.Node, why)
	a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node, "gpu": g.UUID, "health": why}).
		Warn("am: TaskExecutor's GPU is unhealthy; ending it and asking for a replacement on a healthy GPU (not counted as a failure)")
	a.emit(sickGPUEvent(t.ID, t.Node, g, why, n, a.cfg.SickGPUsPerNode))
	if t.CID != nil {
		a.release[t.ID] = t.CID
	}
	a.exitedLocked(t, a.rec.Completed(t, decision.Exit{Status: contract.ExitStatusAborted, Class: contract.ExitAborted, Diagnostics: text}))
	if k := a.cfg.SickGPUsPerNode; k > 0 && n >= k && a.policy.ExcludeUnfit(a.cfg.Now(), t.Node) {
		a.book.Excl.Exclude(t.Node)
		ev := nodeLacksEvent(t.Node, "")
		ev.Count = n
		ev.Key = "taskexecutor.sick-gpus-per-node"
		ev.Message = fmt.Sprintf("node %s excluded for %s: %d of its GPUs read unhealthy under this job (taskexecutor.sick-gpus-per-node = %d)",
			t.Node, a.policy.Config().NodeExclusionTimeout, n, k)
		a.log.WithFields(logrus.Fields{"node": t.Node, "sick_gpus": n}).Warn("am: excluding a node whose GPUs read unhealthy")
		a.emit(ev)
		if all, _ := a.policy.AllExcluded(a.clusterNodes); all {
			a.failLocked(fmt.Sprintf("every node of the cluster (%d) is excluded: %v; the last one had %d unhealthy GPUs", a.clusterNodes, a.policy.Excluded(), n))
		}
	}
	a.news = true
	a.poke()
}

// sickGPUEvent: container id's GPU g on node read unhealthy (why); n is the node's count of sick GPUs,
// k the limit (0: never excluded).
func sickGPUEvent(id, node string, g contract.GPUReading, why string, n, k int) contract.Event {
	limit := "taskexecutor.sick-gpus-per-node is off"
	if k > 0 {
		limit = "at " + strconv.Itoa(k) + " (taskexecutor.sick-gpus-per-node) the node is excluded"
	}
	return contract.Event{Type: contract.EventGPUUnhealthy, Severity: contract.SeverityWarning, Container: id, Node: node,
		Reason: g.UUID, Key: "taskexecutor.sick-gpus-per-node", Count: n,
		Message: fmt.Sprintf("GPU %d (%s) of TaskExecutor %s on %s is unhealthy: %s; the container is ended and a replacement asked for on a healthy GPU (not counted as a failure); the GPU is kept out of the node's claims until it reads healthy; %d sick GPU(s) on the node, %s",
			g.Index, g.UUID, id, node, why, n, limit)}
}
