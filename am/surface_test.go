package am

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// The surface tests run the AM's loop in process against testkit/fakecluster's node model
// (GPUNodes): nodes with GPUs, the blacklist honoured, node reports for the evidence.

// surfaceCluster is a cluster of nodes with gpus GPUs each, whose stopped containers complete with
// -105 as a NodeManager's do.
func surfaceCluster(nodes int, gpus int64) *fakecluster.Cluster {
	c := fakecluster.InProcess()
	c.GPUNodes(nodes, gpus)
	c.StopCompletes = true
	return c
}

func newSurfaceAM(t *testing.T, c *fakecluster.Cluster, spec decision.Spec, pol decision.PolicyConfig) (*am, context.Context, context.CancelFunc) {
	t.Helper()
	m, err := newAM(config{App: "application_1_0001", Spec: spec, Host: "127.0.0.1", RPCPort: 1, TrackingURL: "http://127.0.0.1:1/",
		HeartbeatFast: 5 * time.Millisecond, HeartbeatSlow: 10 * time.Millisecond, LaunchWorkers: 2,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: c.InProcessScheduler(), NM: c.InProcessNM(), Log: quietLog,
		Policy: pol, Keys: configKeys{"yarn.io/gpu": "external-resource.gpu.amount"}, Cluster: c})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return m, ctx, cancel
}

// waitEvent returns the first event of l that f accepts, waiting up to d for it on a subscription
// (no polling: the log wakes it).
func waitEvent(t *testing.T, l *events.Log, d time.Duration, f func(contract.Event) bool) contract.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	sub := l.Subscribe(0)
	defer sub.Close()
	for {
		evs, err := sub.Next(ctx, 0)
		if err != nil {
			break
		}
		for _, e := range evs {
			if f(e) {
				return e
			}
		}
	}
	var b strings.Builder
	for _, e := range l.Since(0, 0) {
		fmt.Fprintf(&b, "\n  %d %s %s", e.ID, e.Type, e.Message)
	}
	t.Fatalf("no matching event within %v; events:%s", d, b.String())
	return contract.Event{}
}

func is(ty contract.EventType) func(contract.Event) bool {
	return func(e contract.Event) bool { return e.Type == ty }
}

func TestSurfaceNotEnoughResourcesThenScaleDownThroughTheAPI(t *testing.T) {
	s := surfaceCluster(2, 4)
	s.ExitOn = func(string) (int32, bool) { return 0, false } // they run until stopped
	spec := decision.Spec{Instances: 3, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 4}, MaxFailures: 1, Mode: decision.Service}
	m, ctx, cancel := newSurfaceAM(t, s, spec, decision.PolicyConfig{PendingTimeout: 50 * time.Millisecond})
	done := make(chan decision.Outcome)
	go func() { out, _ := m.Run(ctx); done <- out }()

	ev := waitEvent(t, m.events, 5*time.Second, is(contract.EventNotEnoughResources))
	require.NotNil(t, ev.Evidence)
	assert.Equal(t, 1, ev.Evidence.Pending)
	assert.Equal(t, int64(8), ev.Evidence.ClusterTotal["yarn.io/gpu"])
	assert.Equal(t, int64(0), ev.Evidence.ClusterFree["yarn.io/gpu"])
	assert.Equal(t, int64(4), ev.Evidence.LargestCap["yarn.io/gpu"])
	assert.Equal(t, "node reports", ev.Evidence.Source)
	st := m.Status()
	assert.Equal(t, 2, st.Counts.Running)
	assert.Equal(t, 1, st.Counts.Requested)
	assert.NotEmpty(t, st.Events, "status carries the latest events")

	srv := httptest.NewServer(m.Handler("s3cret"))
	defer srv.Close()
	put := func(body, secret string) *http.Response {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/api/v1/requirements", strings.NewReader(body))
		if secret != "" {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	assert.Equal(t, 401, put(`{"instances": 2}`, "").StatusCode)
	assert.Equal(t, 400, put(`{"instances": -2}`, "s3cret").StatusCode)
	assert.Equal(t, 200, put(`{"instances": 2}`, "s3cret").StatusCode)
	waitEvent(t, m.events, 5*time.Second, is(contract.EventRequirementChanged))
	waitEvent(t, m.events, 5*time.Second, is(contract.EventResourcesAvailable))
	require.Eventually(t, func() bool { c := m.Status().Counts; return c.Requested == 0 && c.Running == 2 }, 5*time.Second, 5*time.Millisecond)

	// Down to 1: the newest TaskExecutor is stopped; -105 is not a failure and is not replaced.
	assert.Equal(t, 200, put(`{"instances": 1}`, "s3cret").StatusCode)
	stopped := waitEvent(t, m.events, 5*time.Second, func(e contract.Event) bool {
		return e.Type == contract.EventCompleted && e.ExitClass == contract.ExitKilledByAM
	})
	newest := m.Status().Containers[1].ID
	assert.Equal(t, newest, stopped.Container, "the newest stops")
	assert.Equal(t, contract.SeverityInfo, stopped.Severity, "a release the AM was asked for is no warning")
	assert.Contains(t, stopped.Message, "released: no longer needed")
	assert.NotContains(t, stopped.Message, "stopped by the ApplicationMaster")
	// The allocate that reported the stop was answered; a replacement would be asked for in one of
	// the next two (the loop reconciles on the news at once). Wait for three.
	s.Mu.Lock()
	at, asked := s.Allocates, len(s.AskLog)
	s.Mu.Unlock()
	require.Eventually(t, func() bool { return s.AllocateCount() >= at+3 }, 5*time.Second, time.Millisecond)
	s.Mu.Lock()
	for _, a := range s.AskLog[asked:] {
		assert.Zero(t, a.GetNumContainers(), "no container is asked for after the stop")
	}
	s.Mu.Unlock()
	c := m.Status().Counts
	assert.Equal(t, 1, c.Running)
	assert.Equal(t, 0, c.Failed)
	assert.Equal(t, 0, c.Requested)

	cancel()
	out := <-done
	assert.Equal(t, contract.Killed, out.Status)
}

func TestSurfaceExcludesAFailingNodeAndTheRestProceeds(t *testing.T) {
	s := surfaceCluster(2, 4)
	s.ExitOn = func(node string) (int32, bool) {
		if node == "10.0.0.1:4000" {
			return 3, true
		}
		return 0, true
	}
	spec := decision.Spec{Instances: 3, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 1}, MaxFailures: 10, Mode: decision.Batch}
	m, ctx, _ := newSurfaceAM(t, s, spec, decision.PolicyConfig{NodeMaxFailures: 2, RestartBackoff: time.Millisecond, RestartBackoffMax: 5 * time.Millisecond})
	out, err := m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Succeeded, out.Status, out.Diagnostics)
	ex := waitEvent(t, m.events, time.Second, is(contract.EventNodeExcluded))
	assert.Equal(t, "10.0.0.1:4000", ex.Node)
	s.Mu.Lock()
	defer s.Mu.Unlock()
	require.NotEmpty(t, s.Blacklists)
	assert.Equal(t, []string{"10.0.0.1:4000", "10.0.0.1"}, s.Blacklists[0].Add, "blacklisted as host:port and host")
	assert.Equal(t, []string{"10.0.0.1:4000"}, m.Status().ExcludedNodes)
	assert.Equal(t, []contract.NodeExclusion{{Node: "10.0.0.1:4000", Reason: contract.ExclusionFailures}}, m.Status().Exclusions)
	for _, e := range m.events.Since(ex.ID, 0) {
		if e.Type == contract.EventAllocated {
			assert.NotEqual(t, ex.Node, e.Node, "nothing is placed on the excluded node")
		}
	}
	fin := waitEvent(t, m.events, time.Second, is(contract.EventFinished))
	assert.Equal(t, contract.Succeeded, fin.Status)
}

func TestSurfaceEveryNodeExcludedFailsTheApplication(t *testing.T) {
	s := surfaceCluster(2, 4)
	s.ExitOn = func(string) (int32, bool) { return 1, true }
	spec := decision.Spec{Instances: 1, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 1}, MaxFailures: 100, Mode: decision.Batch}
	m, ctx, _ := newSurfaceAM(t, s, spec, decision.PolicyConfig{NodeMaxFailures: 1, RestartBackoff: time.Millisecond})
	out, err := m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "every node of the cluster (2) is excluded")
	waitEvent(t, m.events, time.Second, is(contract.EventFailureLimitReached))
}

func TestSurfaceFailureRateAndPendingFail(t *testing.T) {
	s := surfaceCluster(1, 8)
	s.ExitOn = func(string) (int32, bool) { return 1, true }
	spec := decision.Spec{Instances: 1, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 1}, MaxFailures: 100, Mode: decision.Service}
	m, ctx, _ := newSurfaceAM(t, s, spec, decision.PolicyConfig{MaxFailureRate: 3, NodeMaxFailures: -1, RestartBackoff: time.Millisecond})
	out, err := m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "4 TaskExecutor failures within 5m0s, more than --max-failure-rate = 3 allows")

	s = surfaceCluster(1, 2)
	spec = decision.Spec{Instances: 1, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 4}, MaxFailures: 1, Mode: decision.Service}
	m, ctx, _ = newSurfaceAM(t, s, spec, decision.PolicyConfig{PendingTimeout: 30 * time.Millisecond, OnPendingTimeout: decision.PendingFail})
	out, err = m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "not enough resources: 1 TaskExecutor container(s)")
	assert.Contains(t, out.Diagnostics, "failing the application")
}

func TestSurfaceRejectedRequestNamesTheKey(t *testing.T) {
	s := surfaceCluster(2, 4)
	s.Maximum = resourceProto(contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4})
	spec := decision.Spec{Instances: 1, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 5}, MaxFailures: 1}
	m, ctx, _ := newSurfaceAM(t, s, spec, decision.PolicyConfig{})
	out, err := m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "external-resource.gpu.amount = 5, but the cluster allows at most 4 yarn.io/gpu")
	ev := waitEvent(t, m.events, time.Second, is(contract.EventAllocationRejected))
	assert.Equal(t, "external-resource.gpu.amount", ev.Key)
	s.Mu.Lock()
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_FAILED, s.FinishReq.GetFinalApplicationStatus())
	s.Mu.Unlock()

	// Without a maximum at registration, the RM's refusal of the ask ends it the same way.
	s = surfaceCluster(2, 4)
	s.RejectAsks = true
	s.RejectMessage = "Invalid resource request! Requested resource type=[yarn.io/gpu], Requested resource=<memory:256, vCores:1, yarn.io/gpu: 5>, maximum allowed allocation=<memory:8192, vCores:8, yarn.io/gpu: 4>"
	m, ctx, _ = newSurfaceAM(t, s, spec, decision.PolicyConfig{})
	out, err = m.Run(ctx)
	require.NoError(t, err, "the loop turns the refusal into the outcome")
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "external-resource.gpu.amount = 5, but the cluster allows at most 4")
}

func TestSurfaceLaunchFailedPreemptedAndLostNode(t *testing.T) {
	s := surfaceCluster(2, 4)
	s.RefuseStarts = 1
	preempted := false
	s.ExitOn = func(node string) (int32, bool) {
		if !preempted {
			preempted = true
			return -102, true
		}
		return 0, false
	}
	spec := decision.Spec{Instances: 1, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 1}, MaxFailures: 5, Mode: decision.Service}
	m, ctx, cancel := newSurfaceAM(t, s, spec, decision.PolicyConfig{RestartBackoff: time.Millisecond})
	done := make(chan struct{})
	go func() { _, _ = m.Run(ctx); close(done) }()

	lf := waitEvent(t, m.events, 5*time.Second, is(contract.EventLaunchFailed))
	assert.Contains(t, lf.Message, "was refused (test)")
	pe := waitEvent(t, m.events, 5*time.Second, is(contract.EventPreempted))
	assert.Contains(t, pe.Message, "not counted as a failure")
	waitEvent(t, m.events, 5*time.Second, func(e contract.Event) bool { return e.Type == contract.EventLaunched && e.ID > pe.ID })

	s.Mu.Lock()
	s.UpdatedNodes = []*hadooppb.NodeReportProto{{NodeId: s.Nodes[1], NodeState: hadooppb.NodeStateProto_NS_LOST.Enum(), HealthReport: proto.String("no heartbeat for 600s")}}
	s.Mu.Unlock()
	lost := waitEvent(t, m.events, 5*time.Second, is(contract.EventNodeUnhealthy))
	assert.Equal(t, "10.0.0.2:4000", lost.Node)
	assert.Contains(t, lost.Message, "node 10.0.0.2:4000 is LOST: no heartbeat for 600s")
	assert.Equal(t, 1, m.Status().Counts.Failed, "the launch failure counts, the preemption does not")
	cancel()
	<-done
}

// TestDeclaredInstancesAreStateNotConfig: PUT /api/v1/requirements changes the AM's declared count
// (the status, the saved state, Reconcile's spec); the configuration keeps the job's.
func TestDeclaredInstancesAreStateNotConfig(t *testing.T) {
	m := apiAM(t)
	_, err := m.SetRequirements(5, "test")
	require.NoError(t, err)
	assert.Equal(t, 2, m.cfg.Spec.Instances)
	assert.Equal(t, 5, m.Status().Requirement.Instances)
	m.mu.Lock()
	defer m.mu.Unlock()
	assert.Equal(t, 5, m.book.Want.Spec(m.cfg.Spec).Instances)
	assert.Equal(t, 5, m.book.State(&m.rec, m.policy, m.cfg.Attempt, nil, m.cfg.Now()).Instances)
}
