package book

import (
	"fmt"
	"strconv"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// SickGPUs are the GPUs of each node that read unhealthy under the job's containers. Its verbs: Read
// (a container's GPU read unhealthy) and Sick (a GPU booked sick, as an earlier attempt's state
// restores them).
// The AM's mutex guards it (package doc).
type SickGPUs map[string]map[string]bool

// Sick books uuid of node as sick and says how many sick GPUs the node has now.
func (s SickGPUs) Sick(node, uuid string) int {
	if s[node] == nil {
		s[node] = map[string]bool{}
	}
	s[node][uuid] = true
	return len(s[node])
}

// Unhealthy is the reading of r that says a GPU is unhealthy, and why: the newest sample's first such
// reading (ok false: none does).
func Unhealthy(r contract.AliveReport) (g contract.GPUReading, why string, ok bool) {
	for i := len(r.GPUSamples) - 1; i >= 0; i-- {
		for _, g := range r.GPUSamples[i].GPUs {
			if why := g.Unhealthy(); why != "" {
				return g, why, true
			}
		}
	}
	return contract.GPUReading{}, "", false
}

// Read books container t's GPU g read unhealthy (why) on its node, where limit sick GPUs exclude the
// node (taskexecutor.sick-gpus-per-node; 0: never): it returns the node's count of sick GPUs now, the
// container's end (aborted: ended as a lost one is, not counted as a failure) and the gpu-unhealthy
// event.
func (s *SickGPUs) Read(t *Container, g contract.GPUReading, why string, limit int) (n int, exit decision.Exit, ev contract.Event) {
	if *s == nil {
		*s = SickGPUs{}
	}
	n = s.Sick(t.Node, g.UUID)
	exit = decision.Exit{Status: contract.ExitStatusAborted, Class: contract.ExitAborted,
		Diagnostics: fmt.Sprintf("its GPU %d (%s) on %s is unhealthy: %s", g.Index, g.UUID, t.Node, why)}
	return n, exit, sickGPUEvent(t.ID, t.Node, g, why, n, limit)
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
