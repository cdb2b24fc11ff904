package am

import (
	"strings"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/jobfile"
)

// Placement (taskexecutor.placement, docs/job-file.md#placement) goes one of two ways, by the
// ResourceManager's yarn.resourcemanager.placement-constraints.handler (hadoop.PlacementSchedulingRequests):
//
//   - placement-processor or scheduler: every TaskExecutor ask is sent as a SchedulingRequest
//     (Hadoop 3.1+, YARN-6592) carrying the allocation tag book.TaskExecutorTag and a placement
//     constraint (book.PlacementConstraint): at most max-per-node containers with that tag on a node
//     (a cardinality of 0..max-per-node-1 on the tag, scope node) and each node attribute condition;
//     the RM places them and a request it cannot place comes back in rejected_scheduling_requests,
//     whose asks are sent again (book.Placement.Rejected).
//   - disabled (YARN's default): ResourceRequests as without a placement, and the AM keeps
//     max-per-node itself: Reconcile releases an allocation on a node that already runs
//     max-per-node TaskExecutors (decision.Spec.MaxPerNode) and a node that is full is blacklisted
//     until one of them ends (book.Placement.Fill), so the scheduler stops offering it. Node
//     attributes cannot be honoured this way: the AM refuses them (check does first).
//
// What the AM remembers of it is book.Placement; this file holds what the AM checks at the start
// and what it reads of the ResourceManager's answers.

// checkPlacement is jobfile.Placement.Handled with YARN's handler names (it refuses what the RM
// cannot honour; check and submit refuse it first, client.PlacementPlan).
func checkPlacement(p jobfile.Placement, handler, nodeLabel string) (schedulingRequests bool, err error) {
	return p.Handled(handler, nodeLabel)
}

// activeNodes is the node of each of active, for book.Placement.Fill.
func activeNodes(active []*book.Container) []string {
	nodes := make([]string, len(active))
	for i, t := range active {
		nodes[i] = t.Node
	}
	return nodes
}

// placementRefusedText is what a ResourceManager says, in the exception that fails the whole
// allocate, when its placement handler cannot place SchedulingRequests: the handler is disabled on
// the RM, or it is "scheduler" with a scheduler that has no placement constraints. The site files
// staged with the job named a handler all the same (the RM was reconfigured, or the client's
// configuration is not the cluster's).
const placementRefusedText = "cannot handle placement constraints"

// placementRefused says whether err is an allocate the ResourceManager failed for its
// SchedulingRequests. From the next heartbeat the asks go as ResourceRequests and the AM keeps
// max-per-node itself, as with the handler disabled, and says so in a placement warning
// (book.Placement.Refused); the refused request placed nothing, so its asks are still to be sent.
// Node attributes cannot be kept that way: the job ends, naming the key (a rejectedError).
func placementRefused(err error) bool {
	return err != nil && strings.Contains(err.Error(), placementRefusedText)
}

// rejectedError ends the loop: the RM refused the TaskExecutor request itself.
type rejectedError struct{ ev contract.Event }

func (e *rejectedError) Error() string { return e.ev.Message }
