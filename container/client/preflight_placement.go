package client

import (
	"fmt"

	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/jobfile"
)

// PlacementPlan says in one line how taskexecutor.placement will be kept on this cluster, or refuses
// what its ResourceManager cannot honour (jobfile.Placement.Handled), before anything is staged. It
// reads yarn.resourcemanager.placement-constraints.handler from the client's site files, which stand
// for the RM's (the AM reads the same files, staged with the job); "" for a job without a placement
// (docs/job-file.md#placement).
func PlacementPlan(c conf, job *jobfile.Job) (string, error) {
	p := job.TaskExecutor.Placement
	if !p.Set() {
		return "", nil
	}
	v, _ := c.Get(hadoop.KeyPlacementHandler)
	sr, err := p.Handled(v, job.TaskExecutor.NodeLabel)
	if err != nil {
		return "", err
	}
	handler := hadoop.HandlerName(v)
	if sr {
		return fmt.Sprintf("taskexecutor.placement: sent as SchedulingRequests with placement constraints (%s = %s in the client's site files)", hadoop.KeyPlacementHandler, handler), nil
	}
	return fmt.Sprintf("taskexecutor.placement: kept by the ApplicationMaster (%s = %s in the client's site files: the ResourceManager takes no placement constraints; extra allocations on a node with max-per-node = %d TaskExecutors are released and the node blacklisted)",
		hadoop.KeyPlacementHandler, handler, p.MaxPerNode), nil
}
