//go:build integration && labels

package am_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// TestPlacementSchedulingRequestsSpreadOverNodes runs on make test-labels' cluster, started with
// PLACEMENT=1 (the RM's placement-processor handler, three NodeManagers: one in the exclusive gpu
// partition, two in the default one): 4 TaskExecutors with max-per-node = 1 go to the RM as
// SchedulingRequests; three run, one on each node (the gpu partition's too: a SchedulingRequest
// carries no partition, and the placement processor does not keep it out of an exclusive one), and
// the RM rejects placing the fourth (no node left that qualifies), which the AM reports and asks
// for again (docs/job-file.md#placement).
func TestPlacementSchedulingRequestsSpreadOverNodes(t *testing.T) {
	gpuAddr, _ := gpuNode(t)
	require.Equal(t, "placement-processor", os.Getenv("YARN_AM_PLACEMENT_HANDLER"), "start the cluster with make test-labels (PLACEMENT=1)")
	job := placementJob(t, "placement-sr", 4, "max-per-node = 1\n")
	r := yarnAM(t, time.Minute, "check", job)
	require.Equal(t, 0, r.code, "check:\n%s", r)
	assert.Contains(t, r.stdout, "taskexecutor.placement: sent as SchedulingRequests with placement constraints (yarn.resourcemanager.placement-constraints.handler = placement-processor")

	id := submitDetached(t, job)
	nodes := runningNodes(t, id, 3)
	distinct := map[string]bool{}
	for _, n := range nodes {
		distinct[n] = true
	}
	assert.Len(t, distinct, 3, "max-per-node = 1: one TaskExecutor per node: %v", nodes)
	assert.Contains(t, nodes, gpuAddr, "the placement processor placed one in the exclusive gpu partition (docs/job-file.md#placement)")

	evs := waitPlacement(t, id, 2*time.Minute, "the RM rejected placing the fourth TaskExecutor", func(evs []contract.Event) bool {
		for _, e := range evs {
			if e.Severity == contract.SeverityWarning && strings.Contains(e.Message, "could not place") {
				return true
			}
		}
		return false
	})
	assert.Contains(t, evs[0].Message, "sent to the ResourceManager as SchedulingRequests with placement constraints (yarn.resourcemanager.placement-constraints.handler = placement-processor)")
	for _, e := range evs {
		assert.Empty(t, e.Node, "the AM blacklists nothing when the RM keeps the placement: %s", e.Message)
	}
	d := status(t, id)
	require.NotNil(t, d.AM)
	assert.Equal(t, 3, d.AM.Counts.Running, "still three: the fourth is never placed beside another")
}
