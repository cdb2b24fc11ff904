package am

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func newPlacementAM(t *testing.T, c *fakecluster.Cluster, instances int, p jobfile.Placement, handler string) (*am, context.Context, context.CancelFunc) {
	t.Helper()
	spec := decision.Spec{Instances: instances, MaxFailures: 3, Capability: contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 1}}
	m, err := newAM(config{App: "application_1_0001", Spec: spec, Host: "127.0.0.1", RPCPort: 1, TrackingURL: "http://127.0.0.1:1/",
		HeartbeatFast: 5 * time.Millisecond, HeartbeatSlow: 10 * time.Millisecond, LaunchWorkers: 2,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: c.InProcessScheduler(), NM: c.InProcessNM(), Log: quietLog,
		Keys: configKeys{"yarn.io/gpu": "external-resource.gpu.amount"}, Cluster: c, Placement: p, PlacementHandler: handler})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return m, ctx, cancel
}

// TestPlacementWithoutAHandlerTheAMKeepsMaxPerNode: the RM's handler is disabled (YARN's default),
// so 3 TaskExecutors with max-per-node = 1 on 2 nodes go out as plain ResourceRequests; the fake
// RM puts every container on the first node with room, and the AM releases the extra ones,
// blacklists each node once it runs one, and leaves the third pending: one TaskExecutor per node.
func TestPlacementWithoutAHandlerTheAMKeepsMaxPerNode(t *testing.T) {
	c := surfaceCluster(2, 4)
	c.ExitOn = func(string) (int32, bool) { return 0, false } // they run until stopped
	m, ctx, cancel := newPlacementAM(t, c, 3, jobfile.Placement{MaxPerNode: 1}, "")
	done := make(chan struct{})
	go func() { defer close(done); _, _ = m.Run(ctx) }()

	mode := waitEvent(t, m.events, 10*time.Second, is(contract.EventPlacement))
	assert.Contains(t, mode.Message, "kept by the ApplicationMaster: the ResourceManager's yarn.resourcemanager.placement-constraints.handler is disabled")
	full := map[string]bool{}
	waitEvent(t, m.events, 10*time.Second, func(e contract.Event) bool {
		if e.Type == contract.EventPlacement && e.Node != "" {
			full[e.Node] = true
		}
		return len(full) == 2
	})
	// Both nodes are full and blacklisted: what the RM hands out from here on is released, and no
	// third TaskExecutor starts however many heartbeats pass.
	base := c.AllocateCount()
	require.Eventually(t, func() bool { return c.AllocateCount() > base+20 }, 10*time.Second, time.Millisecond)

	c.Mu.Lock()
	nodes := map[string]bool{}
	for _, id := range c.Started {
		nodes[c.NodeOf(id)] = true
	}
	started, released, sched, asks := len(c.Started), len(c.Released), len(c.SchedLog), len(c.AskLog)
	var added []string
	for _, b := range c.Blacklists {
		added = append(added, b.Add...)
	}
	c.Mu.Unlock()
	assert.Equal(t, 2, started, "one TaskExecutor per node, the third waits")
	assert.Len(t, nodes, 2, "on two distinct nodes")
	assert.Positive(t, released, "the extra allocations on a full node went back")
	assert.Subset(t, added, []string{"10.0.0.1:4000", "10.0.0.2:4000"}, "both full nodes blacklisted")
	assert.Zero(t, sched, "no SchedulingRequest to an RM without a handler")
	assert.Positive(t, asks)
	m.mu.Lock()
	pending := m.book.Asks.Pending()
	m.mu.Unlock()
	assert.Equal(t, 1, pending, "the third is still asked for")
	cancel()
	<-done
}

// TestPlacementWithAHandlerSendsSchedulingRequests: with the placement-processor handler the asks go
// as SchedulingRequests carrying the TaskExecutor tag, the count and the constraint (at most
// max-per-node on a node, AND each node attribute); a rejected one is an event and is sent again.
func TestPlacementWithAHandlerSendsSchedulingRequests(t *testing.T) {
	c := surfaceCluster(2, 4)
	c.RejectScheduling = 1
	p := jobfile.Placement{MaxPerNode: 2, NodeAttributes: []jobfile.NodeAttribute{{Name: "gpu_model", Value: "H200"}, {Name: "rm.yarn.io/os", Value: "windows", Not: true}}}
	m, ctx, _ := newPlacementAM(t, c, 2, p, "placement-processor")
	out, err := m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Succeeded, out.Status)

	c.Mu.Lock()
	defer c.Mu.Unlock()
	assert.Empty(t, c.AskLog, "no ResourceRequest")
	require.Len(t, c.SchedLog, 2, "the rejected request was sent again")
	s := c.SchedLog[0]
	assert.Equal(t, c.SchedLog[0].GetAllocationRequestId(), c.SchedLog[1].GetAllocationRequestId())
	assert.Equal(t, []string{book.TaskExecutorTag}, s.GetAllocationTags())
	assert.EqualValues(t, 2, s.GetResourceSizing().GetNumAllocations())
	assert.EqualValues(t, 1, yarnrpc.ResourceAmounts(s.GetResourceSizing().GetResources())["yarn.io/gpu"])
	and := s.GetPlacementConstraint().GetCompositeConstraint()
	require.NotNil(t, and)
	assert.Equal(t, hadooppb.CompositePlacementConstraintProto_AND, and.GetCompositeType())
	require.Len(t, and.GetChildConstraints(), 3)
	card := and.GetChildConstraints()[0].GetSimpleConstraint()
	assert.Equal(t, "node", card.GetScope())
	assert.EqualValues(t, 0, card.GetMinCardinality())
	assert.EqualValues(t, 1, card.GetMaxCardinality(), "max-per-node 2: a node qualifies while it has at most 1")
	assert.Equal(t, hadooppb.PlacementConstraintTargetProto_ALLOCATION_TAG, card.GetTargetExpressions()[0].GetTargetType())
	assert.Equal(t, []string{book.TaskExecutorTag}, card.GetTargetExpressions()[0].GetTargetValues())
	eq, ne := and.GetChildConstraints()[1].GetSimpleConstraint(), and.GetChildConstraints()[2].GetSimpleConstraint()
	assert.Equal(t, hadooppb.NodeAttributeOpCodeProto_EQ, eq.GetAttributeOpCode())
	assert.Equal(t, "gpu_model", eq.GetTargetExpressions()[0].GetTargetKey())
	assert.Equal(t, []string{"H200"}, eq.GetTargetExpressions()[0].GetTargetValues())
	assert.Equal(t, hadooppb.NodeAttributeOpCodeProto_NE, ne.GetAttributeOpCode())
	assert.Equal(t, "rm.yarn.io/os", ne.GetTargetExpressions()[0].GetTargetKey())

	var msgs []string
	for _, e := range m.events.Since(0, 0) {
		if e.Type == contract.EventPlacement {
			msgs = append(msgs, e.Message)
		}
	}
	require.Len(t, msgs, 2, "%q", msgs)
	assert.Contains(t, msgs[0], "sent to the ResourceManager as SchedulingRequests with placement constraints (yarn.resourcemanager.placement-constraints.handler = placement-processor)")
	assert.Contains(t, msgs[1], "could not place 2 TaskExecutors under taskexecutor.placement (max-per-node = 2, node-attributes = [\"gpu_model=H200\", \"rm.yarn.io/os!=windows\"]): RRP_COULD_NOT_PLACE_ON_NODE; asking again")
}

func TestCheckPlacementRefusesWhatTheHandlerCannotHonour(t *testing.T) {
	attrs := jobfile.Placement{NodeAttributes: []jobfile.NodeAttribute{{Name: "gpu_model", Value: "H200"}}}
	_, err := checkPlacement(attrs, "", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `taskexecutor.placement.node-attributes = ["gpu_model=H200"]: the ResourceManager's yarn.resourcemanager.placement-constraints.handler is "disabled"`)

	_, err = checkPlacement(jobfile.Placement{MaxPerNode: 1}, "scheduler", "gpu")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `taskexecutor.node-label = "gpu" with taskexecutor.placement`)

	_, err = checkPlacement(jobfile.Placement{MaxPerNode: 1}, "processor", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `yarn.resourcemanager.placement-constraints.handler = "processor": not a handler YARN knows`)

	sr, err := checkPlacement(jobfile.Placement{MaxPerNode: 1}, "disabled", "gpu")
	assert.NoError(t, err, "the AM keeps max-per-node with a node label")
	assert.False(t, sr)
	sr, err = checkPlacement(jobfile.Placement{}, "placement-processor", "gpu")
	assert.NoError(t, err)
	assert.False(t, sr, "no placement: ResourceRequests as ever")
}

// TestPlacementRefusedByTheRMFallsBackToTheAM: the site files staged with the job say
// placement-processor, but the RM's handler is disabled, so the allocate carrying SchedulingRequests
// fails as a whole. The AM says so once, sends the same asks as ResourceRequests and keeps
// max-per-node itself: the job runs, one TaskExecutor per node, and no heartbeat failure is counted.
func TestPlacementRefusedByTheRMFallsBackToTheAM(t *testing.T) {
	c := surfaceCluster(2, 4)
	c.NoPlacementHandler = true
	c.ExitOn = func(string) (int32, bool) { return 0, false } // they run until stopped
	m, ctx, cancel := newPlacementAM(t, c, 2, jobfile.Placement{MaxPerNode: 1}, "placement-processor")
	done := make(chan struct{})
	go func() { defer close(done); _, _ = m.Run(ctx) }()
	require.Eventually(t, func() bool { return c.StartedCount() == 2 }, 10*time.Second, time.Millisecond)
	base := c.AllocateCount()
	require.Eventually(t, func() bool { return c.AllocateCount() > base+10 }, 10*time.Second, time.Millisecond)

	c.Mu.Lock()
	nodes := map[string]bool{}
	for _, id := range c.Started {
		nodes[c.NodeOf(id)] = true
	}
	asks, sched := len(c.AskLog), len(c.SchedLog)
	c.Mu.Unlock()
	assert.Len(t, nodes, 2, "one TaskExecutor on each node")
	assert.Positive(t, asks, "the asks went again as ResourceRequests")
	assert.Zero(t, sched, "the RM took no SchedulingRequest")

	var refused []contract.Event
	for _, e := range m.events.Since(0, 0) {
		if e.Type == contract.EventPlacement && e.Severity == contract.SeverityWarning {
			refused = append(refused, e)
		}
	}
	require.Len(t, refused, 1, "said once")
	assert.Contains(t, refused[0].Message, "is now kept by the ApplicationMaster: the ResourceManager refuses SchedulingRequests although the job's site files say yarn.resourcemanager.placement-constraints.handler = placement-processor")
	assert.Contains(t, refused[0].Message, "cannot handle placement constraints (fake)", "what the RM said")
	assert.Equal(t, contract.StateRunning, m.Status().State, "the job runs on")
	cancel()
	<-done
}

// TestPlacementRefusedByTheRMEndsAJobWithNodeAttributes: node attributes cannot be kept by the AM, so
// an RM that refuses SchedulingRequests ends the job with an error naming the key, not a job that
// silently runs anywhere.
func TestPlacementRefusedByTheRMEndsAJobWithNodeAttributes(t *testing.T) {
	c := surfaceCluster(2, 4)
	c.NoPlacementHandler = true
	p := jobfile.Placement{NodeAttributes: []jobfile.NodeAttribute{{Name: "gpu_model", Value: "H200"}}}
	m, ctx, _ := newPlacementAM(t, c, 2, p, "placement-processor")
	out, _ := m.Run(ctx)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, `taskexecutor.placement.node-attributes = ["gpu_model=H200"] cannot be honoured: the ResourceManager refuses SchedulingRequests`)
	c.Mu.Lock()
	started := len(c.Started)
	c.Mu.Unlock()
	assert.Zero(t, started, "no TaskExecutor placed without its attributes")
}
