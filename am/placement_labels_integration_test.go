//go:build integration && labels

package am_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
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
	r := e2e.YarnAM(t, time.Minute, "check", job)
	require.Equal(t, 0, r.Code, "check:\n%s", r)
	assert.Contains(t, r.Stdout, "taskexecutor.placement: sent as SchedulingRequests with placement constraints (yarn.resourcemanager.placement-constraints.handler = placement-processor")

	id := e2e.SubmitDetached(t, job)
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
	d := e2e.Status(t, id)
	require.NotNil(t, d.AM)
	assert.Equal(t, 3, d.AM.Counts.Running, "still three: the fourth is never placed beside another")
}

// TestPlacementSchedulingRequestsNodeAttributes runs on make test-labels' cluster (PLACEMENT=1),
// whose harness sets the centrally managed node attribute rm.yarn.io/gpu_model: H200 on the last
// node by address, A100 on the others (testdata/minicluster/README.md). Sent as SchedulingRequests,
// node-attributes = ["rm.yarn.io/gpu_model=H200"] puts both TaskExecutors on the H200 node, "!="
// keeps both off it, and a value no node has is rejected by the RM, which the AM reports
// (docs/job-file.md#placement).
func TestPlacementSchedulingRequestsNodeAttributes(t *testing.T) {
	require.Equal(t, "placement-processor", os.Getenv("YARN_AM_PLACEMENT_HANDLER"), "start the cluster with make test-labels (PLACEMENT=1)")
	h200 := nodeWithAttribute(t, "rm.yarn.io", "gpu_model", "H200")

	eq := e2e.SubmitDetached(t, placementJob(t, "attr-eq", 2, `node-attributes = ["rm.yarn.io/gpu_model=H200"]`+"\n"))
	for _, n := range runningNodes(t, eq, 2) {
		assert.Equal(t, h200, n, "gpu_model=H200: only the H200 node qualifies")
	}
	e2e.KillQuietly(eq)

	ne := e2e.SubmitDetached(t, placementJob(t, "attr-ne", 2, `node-attributes = ["rm.yarn.io/gpu_model!=H200"]`+"\n"))
	for _, n := range runningNodes(t, ne, 2) {
		assert.NotEqual(t, h200, n, "gpu_model!=H200: any node but the H200 one")
	}
	e2e.KillQuietly(ne)

	none := e2e.SubmitDetached(t, placementJob(t, "attr-none", 1, `node-attributes = ["rm.yarn.io/gpu_model=V100"]`+"\n"))
	up := e2e.WaitFor(t, none, 2*time.Minute, "the AM running", func(d e2e.StatusDoc) bool { return d.AM != nil || e2e.IsEnded(d.Report.State) })
	require.NotNil(t, up.AM, "%+v", up.Report)
	waitPlacement(t, none, 2*time.Minute, "the RM rejected placing a TaskExecutor no node qualifies for", func(evs []contract.Event) bool {
		for _, e := range evs {
			if e.Severity == contract.SeverityWarning && strings.Contains(e.Message, "could not place") {
				return true
			}
		}
		return false
	})
	d := e2e.Status(t, none)
	require.NotNil(t, d.AM)
	assert.Equal(t, 0, d.AM.Counts.Running, "no node has gpu_model=V100")
}

// nodeWithAttribute is the address of the one running node whose node attribute prefix/name has
// value, as the RM's node reports say.
func nodeWithAttribute(t *testing.T, prefix, name, value string) string {
	t.Helper()
	rm, err := e2e.RMClient()
	require.NoError(t, err)
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes, err := rm.GetClusterNodes(ctx, hadooppb.NodeStateProto_NS_RUNNING)
	require.NoError(t, err)
	var found []string
	for _, n := range nodes {
		for _, a := range n.GetNodeAttributes() {
			k := a.GetAttributeKey()
			if k.GetAttributePrefix() == prefix && k.GetAttributeName() == name && a.GetAttributeValue() == value {
				found = append(found, yarnrpc.NodeAddress(n.GetNodeId()))
			}
		}
	}
	require.Len(t, found, 1, "one node with %s/%s=%s among %d (the harness sets it with PLACEMENT=1)", prefix, name, value, len(nodes))
	require.Greater(t, len(nodes), 1, "the other nodes lack it, or the test proves nothing")
	return found[0]
}
