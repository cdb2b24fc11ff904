package am

import (
	"fmt"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/contract"
)

// This file is the AM's side of GPU health (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service):
// a launcher's sample that reads one of its container's GPUs unhealthy (contract.GPUReading.Unhealthy)
// ends that container the way a lost one is ended (released, completed as aborted, not counted as a
// failure), so Reconcile asks for a replacement at once and a gang starts its next round; the launcher
// has already kept the GPU out of the node's future claims. After taskexecutor.sick-gpus-per-node
// sick GPUs on one node, the node is excluded as the failure policy excludes a failing node.

// sickGPULocked ends t, whose GPU g read unhealthy (why; book.Unhealthy found it in its launcher's
// samples), asks for its replacement, and excludes its node at the job's sick-GPU limit
// (book.SickGPUs.Read books it).
func (a *am) sickGPULocked(t *book.Container, g contract.GPUReading, why string) {
	n, exit, ev := a.book.Sick.Read(t, g, why, a.cfg.SickGPUsPerNode)
	a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node, "gpu": g.UUID, "health": why}).
		Warn("am: TaskExecutor's GPU is unhealthy; ending it and asking for a replacement on a healthy GPU (not counted as a failure)")
	a.events.Add(ev)
	if t.CID != nil {
		a.release[t.ID] = t.CID
	}
	a.exitedLocked(t, a.rec.Completed(t, exit))
	if k := a.cfg.SickGPUsPerNode; k > 0 && n >= k && a.policy.ExcludeUnfit(a.cfg.Now(), t.Node) {
		a.book.Excl.Exclude(t.Node)
		ev := book.NodeLacksEvent(t.Node, "")
		ev.Count = n
		ev.Key = "taskexecutor.sick-gpus-per-node"
		ev.Message = fmt.Sprintf("node %s excluded for %s: %d of its GPUs read unhealthy under this job (taskexecutor.sick-gpus-per-node = %d)",
			t.Node, a.policy.Config().NodeExclusionTimeout, n, k)
		a.log.WithFields(logrus.Fields{"node": t.Node, "sick_gpus": n}).Warn("am: excluding a node whose GPUs read unhealthy")
		a.events.Add(ev)
		if all, _ := a.policy.AllExcluded(a.clusterNodes); all {
			a.failLocked(fmt.Sprintf("every node of the cluster (%d) is excluded: %v; the last one had %d unhealthy GPUs", a.clusterNodes, a.policy.Excluded(), n))
		}
	}
	a.book.Plans.News()
	a.wake.poke()
}
