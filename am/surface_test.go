package am

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/container/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// schedRM is an in-process RM and NM (the RM and NM interfaces) with a little scheduler: nodes with a
// GPU capacity each, the application's blacklist honoured, containers that run until stopped or until
// exitOn says they end.
type schedRM struct {
	mu        sync.Mutex
	nodes     []*hadooppb.NodeIdProto
	gpus      map[string]int64 // free GPUs per node
	maximum   contract.Capability
	reject    error
	blacklist map[string]bool
	blSent    [][2][]string // additions, removals per allocate
	table     map[int64]int32
	capa      map[int64]*hadooppb.ResourceProto
	next      int64
	where     map[string]string // container → node
	size      map[string]int64
	running   map[string]bool
	done      []*hadooppb.ContainerStatusProto
	stopped   []string
	exitOn    func(node string) (int32, bool) // a started container ends at once with this status
	finishReq *hadooppb.FinishApplicationMasterRequestProto
	appID     *hadooppb.ApplicationIdProto
	updated   []*hadooppb.NodeReportProto // sent with the next allocate response
	refuse    int                         // the NM refuses the first refuse starts
	allocates int                         // allocate calls answered
	askedAt   []int                       // the allocate calls (1-based) that asked for containers
}

func newSchedRM(nodes int, gpusPerNode int64) *schedRM {
	s := &schedRM{gpus: map[string]int64{}, blacklist: map[string]bool{}, table: map[int64]int32{}, capa: map[int64]*hadooppb.ResourceProto{},
		next: 2, where: map[string]string{}, size: map[string]int64{}, running: map[string]bool{},
		appID: &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1), Id: proto.Int32(1)}}
	for i := 0; i < nodes; i++ {
		n := &hadooppb.NodeIdProto{Host: proto.String(fmt.Sprintf("10.0.0.%d", i+1)), Port: proto.Int32(4000)}
		s.nodes = append(s.nodes, n)
		s.gpus[yarnrpc.NodeAddress(n)] = gpusPerNode
	}
	return s
}

func (s *schedRM) Register(context.Context, *hadooppb.RegisterApplicationMasterRequestProto) (*hadooppb.RegisterApplicationMasterResponseProto, error) {
	r := &hadooppb.RegisterApplicationMasterResponseProto{Queue: proto.String("default")}
	if s.maximum != nil {
		r.MaximumCapability = ResourceProto(s.maximum)
	}
	return r, nil
}

func (s *schedRM) SetToken(yarnrpc.Token) error { return nil }

func (s *schedRM) Finish(_ context.Context, req *hadooppb.FinishApplicationMasterRequestProto) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finishReq = req
	return true, nil
}

func (s *schedRM) Allocate(_ context.Context, req *hadooppb.AllocateRequestProto) (*hadooppb.AllocateResponseProto, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reject != nil && len(req.GetAsk()) > 0 {
		return nil, s.reject
	}
	if bl := req.GetBlacklistRequest(); bl != nil {
		s.blSent = append(s.blSent, [2][]string{bl.GetBlacklistAdditions(), bl.GetBlacklistRemovals()})
		for _, n := range bl.GetBlacklistAdditions() {
			s.blacklist[n] = true
		}
		for _, n := range bl.GetBlacklistRemovals() {
			delete(s.blacklist, n)
		}
	}
	s.allocates++
	for _, a := range req.GetAsk() {
		if a.GetNumContainers() > 0 {
			s.askedAt = append(s.askedAt, s.allocates)
		}
		s.table[a.GetAllocationRequestId()] = a.GetNumContainers()
		s.capa[a.GetAllocationRequestId()] = a.GetCapability()
	}
	for _, id := range req.GetRelease() {
		s.free(yarnrpc.FormatContainerID(id))
	}
	resp := &hadooppb.AllocateResponseProto{ResponseId: proto.Int32(req.GetResponseId() + 1), NumClusterNodes: proto.Int32(int32(len(s.nodes)))}
	for askID, n := range s.table {
		c := contract.Capability(yarnrpc.ResourceAmounts(s.capa[askID]))
		for ; n > 0; n-- {
			var node *hadooppb.NodeIdProto
			for _, nd := range s.nodes {
				addr := yarnrpc.NodeAddress(nd)
				if !s.blacklist[addr] && !s.blacklist[nd.GetHost()] && s.gpus[addr] >= c["yarn.io/gpu"] {
					node = nd
					break
				}
			}
			if node == nil {
				break
			}
			addr := yarnrpc.NodeAddress(node)
			s.gpus[addr] -= c["yarn.io/gpu"]
			cid := &hadooppb.ContainerIdProto{AppId: s.appID, AppAttemptId: &hadooppb.ApplicationAttemptIdProto{ApplicationId: s.appID, AttemptId: proto.Int32(1)}, Id: proto.Int64(s.next)}
			s.next++
			id := yarnrpc.FormatContainerID(cid)
			s.where[id], s.size[id] = addr, c["yarn.io/gpu"]
			resp.AllocatedContainers = append(resp.AllocatedContainers, &hadooppb.ContainerProto{Id: cid, NodeId: node, Resource: s.capa[askID], AllocationRequestId: proto.Int64(askID)})
		}
		s.table[askID] = n
	}
	free := int64(0)
	for _, g := range s.gpus {
		free += g
	}
	resp.Limit = ResourceProto(contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": free})
	resp.CompletedContainerStatuses, s.done = s.done, nil
	resp.UpdatedNodes, s.updated = s.updated, nil
	return resp, nil
}

func (s *schedRM) free(id string) {
	if node, ok := s.where[id]; ok {
		s.gpus[node] += s.size[id]
		delete(s.where, id)
	}
}

func (s *schedRM) complete(id string, code int32) {
	cid, _ := yarnrpc.ParseContainerID(id)
	s.free(id)
	delete(s.running, id)
	s.done = append(s.done, &hadooppb.ContainerStatusProto{ContainerId: cid, State: hadooppb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(code),
		Diagnostics: proto.String(fmt.Sprintf("exit %d", code))})
}

// GetClusterNodes makes schedRM a ClusterNodes too.
func (s *schedRM) GetClusterNodes(context.Context, ...hadooppb.NodeStateProto) ([]*hadooppb.NodeReportProto, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*hadooppb.NodeReportProto
	for _, n := range s.nodes {
		addr := yarnrpc.NodeAddress(n)
		out = append(out, &hadooppb.NodeReportProto{NodeId: n, NodeState: hadooppb.NodeStateProto_NS_RUNNING.Enum(),
			Capability: ResourceProto(contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4}),
			Used:       ResourceProto(contract.Capability{"memory-mb": 0, "vcores": 0, "yarn.io/gpu": 4 - s.gpus[addr]})})
	}
	return out, nil
}

// schedNM is the NM side of schedRM.
type schedNM struct{ s *schedRM }

func (n schedNM) SetToken(string, yarnrpc.Token) error { return nil }

func (n schedNM) StartContainers(_ context.Context, node string, reqs ...*hadooppb.StartContainerRequestProto) (*hadooppb.StartContainersResponseProto, error) {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	if n.s.refuse > 0 {
		n.s.refuse--
		return nil, fmt.Errorf("startContainers: %w", &yarnrpc.RemoteError{Class: "org.apache.hadoop.yarn.exceptions.YarnException", Message: "localization failed: no space left"})
	}
	return &hadooppb.StartContainersResponseProto{}, nil
}

func (n schedNM) StopContainers(_ context.Context, node string, ids ...*hadooppb.ContainerIdProto) (*hadooppb.StopContainersResponseProto, error) {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	for _, id := range ids {
		s := yarnrpc.FormatContainerID(id)
		n.s.stopped = append(n.s.stopped, s)
		n.s.complete(s, -105)
	}
	return &hadooppb.StopContainersResponseProto{SucceededRequests: ids}, nil
}

// startedHook: containers are "started" by the loop's launch; schedRM learns of them through the
// launched events and ends those exitOn picks.
func (s *schedRM) watch(ctx context.Context, l *EventLog) {
	sub := l.Subscribe(0)
	go func() {
		defer sub.Close()
		for {
			evs, err := sub.Next(ctx, 0)
			if err != nil {
				return
			}
			for _, e := range evs {
				if e.Type != contract.EventLaunched {
					continue
				}
				s.mu.Lock()
				s.running[e.Container] = true
				if s.exitOn != nil {
					if code, ok := s.exitOn(e.Node); ok {
						s.complete(e.Container, code)
					}
				}
				s.mu.Unlock()
			}
		}
	}()
}

func newSurfaceAM(t *testing.T, s *schedRM, spec Spec, pol PolicyConfig) (*AM, context.Context, context.CancelFunc) {
	t.Helper()
	m, err := New(Config{App: "application_1_0001", Spec: spec, Host: "127.0.0.1", RPCPort: 1, TrackingURL: "http://127.0.0.1:1/",
		HeartbeatFast: 5 * time.Millisecond, HeartbeatSlow: 10 * time.Millisecond, LaunchWorkers: 2,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: s, NM: schedNM{s}, Log: quietLog,
		Policy: pol, Keys: ConfigKeys{"yarn.io/gpu": "external-resource.gpu.amount"}, Cluster: s})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	s.watch(ctx, m.Events())
	return m, ctx, cancel
}

func waitEvent(t *testing.T, l *EventLog, d time.Duration, f func(contract.Event) bool) contract.Event {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, e := range l.Since(0, 0) {
			if f(e) {
				return e
			}
		}
		time.Sleep(5 * time.Millisecond)
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
	s := newSchedRM(2, 4)
	spec := Spec{Instances: 3, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 4}, MaxFailures: 1, Mode: Service}
	m, ctx, cancel := newSurfaceAM(t, s, spec, PolicyConfig{PendingTimeout: 50 * time.Millisecond})
	done := make(chan Outcome)
	go func() { out, _ := m.Run(ctx); done <- out }()

	ev := waitEvent(t, m.Events(), 5*time.Second, is(contract.EventNotEnoughResources))
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
	waitEvent(t, m.Events(), 5*time.Second, is(contract.EventRequirementChanged))
	waitEvent(t, m.Events(), 5*time.Second, is(contract.EventResourcesAvailable))
	require.Eventually(t, func() bool { c := m.Status().Counts; return c.Requested == 0 && c.Running == 2 }, 5*time.Second, 5*time.Millisecond)

	// Down to 1: the newest TaskExecutor is stopped; -105 is not a failure and is not replaced.
	assert.Equal(t, 200, put(`{"instances": 1}`, "s3cret").StatusCode)
	stopped := waitEvent(t, m.Events(), 5*time.Second, func(e contract.Event) bool {
		return e.Type == contract.EventCompleted && e.ExitClass == contract.ExitKilledByAM
	})
	newest := m.Status().Containers[1].ID
	assert.Equal(t, newest, stopped.Container, "the newest stops")
	// The allocate that reported the stop was answered; a replacement would be asked for in one of
	// the next two (the loop reconciles on the news at once). Wait for three.
	s.mu.Lock()
	at := s.allocates
	s.mu.Unlock()
	require.Eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.allocates >= at+3 }, 5*time.Second, time.Millisecond)
	s.mu.Lock()
	for _, n := range s.askedAt {
		assert.LessOrEqual(t, n, at, "no container is asked for after the stop")
	}
	s.mu.Unlock()
	c := m.Status().Counts
	assert.Equal(t, 1, c.Running)
	assert.Equal(t, 0, c.Failed)
	assert.Equal(t, 0, c.Requested)

	cancel()
	out := <-done
	assert.Equal(t, contract.Killed, out.Status)
}

func TestSurfaceExcludesAFailingNodeAndTheRestProceeds(t *testing.T) {
	s := newSchedRM(2, 4)
	s.exitOn = func(node string) (int32, bool) {
		if node == "10.0.0.1:4000" {
			return 3, true
		}
		return 0, true
	}
	spec := Spec{Instances: 3, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 1}, MaxFailures: 10, Mode: Batch}
	m, ctx, _ := newSurfaceAM(t, s, spec, PolicyConfig{NodeMaxFailures: 2, RestartBackoff: time.Millisecond, RestartBackoffMax: 5 * time.Millisecond})
	out, err := m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Succeeded, out.Status, out.Diagnostics)
	ex := waitEvent(t, m.Events(), time.Second, is(contract.EventNodeExcluded))
	assert.Equal(t, "10.0.0.1:4000", ex.Node)
	s.mu.Lock()
	defer s.mu.Unlock()
	require.NotEmpty(t, s.blSent)
	assert.Equal(t, []string{"10.0.0.1:4000", "10.0.0.1"}, s.blSent[0][0], "blacklisted as host:port and host")
	assert.Equal(t, []string{"10.0.0.1:4000"}, m.Status().ExcludedNodes)
	assert.Equal(t, []contract.NodeExclusion{{Node: "10.0.0.1:4000", Reason: contract.ExclusionFailures}}, m.Status().Exclusions)
	for _, e := range m.Events().Since(ex.ID, 0) {
		if e.Type == contract.EventAllocated {
			assert.NotEqual(t, ex.Node, e.Node, "nothing is placed on the excluded node")
		}
	}
	fin := waitEvent(t, m.Events(), time.Second, is(contract.EventFinished))
	assert.Equal(t, contract.Succeeded, fin.Status)
}

func TestSurfaceEveryNodeExcludedFailsTheApplication(t *testing.T) {
	s := newSchedRM(2, 4)
	s.exitOn = func(string) (int32, bool) { return 1, true }
	spec := Spec{Instances: 1, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 1}, MaxFailures: 100, Mode: Batch}
	m, ctx, _ := newSurfaceAM(t, s, spec, PolicyConfig{NodeMaxFailures: 1, RestartBackoff: time.Millisecond})
	out, err := m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "every node of the cluster (2) is excluded")
	waitEvent(t, m.Events(), time.Second, is(contract.EventFailureLimitReached))
}

func TestSurfaceFailureRateAndPendingFail(t *testing.T) {
	s := newSchedRM(1, 8)
	s.exitOn = func(string) (int32, bool) { return 1, true }
	spec := Spec{Instances: 1, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 1}, MaxFailures: 100, Mode: Service}
	m, ctx, _ := newSurfaceAM(t, s, spec, PolicyConfig{MaxFailureRate: 3, NodeMaxFailures: -1, RestartBackoff: time.Millisecond})
	out, err := m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "4 TaskExecutor failures within 5m0s, more than --max-failure-rate = 3 allows")

	s = newSchedRM(1, 2)
	spec = Spec{Instances: 1, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 4}, MaxFailures: 1, Mode: Service}
	m, ctx, _ = newSurfaceAM(t, s, spec, PolicyConfig{PendingTimeout: 30 * time.Millisecond, OnPendingTimeout: PendingFail})
	out, err = m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "not enough resources: 1 TaskExecutor container(s)")
	assert.Contains(t, out.Diagnostics, "failing the application")
}

func TestSurfaceRejectedRequestNamesTheKey(t *testing.T) {
	s := newSchedRM(2, 4)
	s.maximum = contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4}
	spec := Spec{Instances: 1, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 5}, MaxFailures: 1}
	m, ctx, _ := newSurfaceAM(t, s, spec, PolicyConfig{})
	out, err := m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "external-resource.gpu.amount = 5, but the cluster allows at most 4 yarn.io/gpu")
	ev := waitEvent(t, m.Events(), time.Second, is(contract.EventAllocationRejected))
	assert.Equal(t, "external-resource.gpu.amount", ev.Key)
	s.mu.Lock()
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_FAILED, s.finishReq.GetFinalApplicationStatus())
	s.mu.Unlock()

	// Without a maximum at registration, the RM's refusal of the ask ends it the same way.
	s = newSchedRM(2, 4)
	s.reject = fmt.Errorf("allocate: %w", &yarnrpc.RemoteError{Class: "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException",
		Message: "Invalid resource request! Requested resource type=[yarn.io/gpu], Requested resource=<memory:256, vCores:1, yarn.io/gpu: 5>, maximum allowed allocation=<memory:8192, vCores:8, yarn.io/gpu: 4>"})
	m, ctx, _ = newSurfaceAM(t, s, spec, PolicyConfig{})
	out, err = m.Run(ctx)
	require.NoError(t, err, "the loop turns the refusal into the outcome")
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "external-resource.gpu.amount = 5, but the cluster allows at most 4")
}

func TestSurfaceLaunchFailedPreemptedAndLostNode(t *testing.T) {
	s := newSchedRM(2, 4)
	s.refuse = 1
	preempted := false
	s.exitOn = func(node string) (int32, bool) {
		if !preempted {
			preempted = true
			return -102, true
		}
		return 0, false
	}
	spec := Spec{Instances: 1, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 1}, MaxFailures: 5, Mode: Service}
	m, ctx, cancel := newSurfaceAM(t, s, spec, PolicyConfig{RestartBackoff: time.Millisecond})
	done := make(chan struct{})
	go func() { _, _ = m.Run(ctx); close(done) }()

	lf := waitEvent(t, m.Events(), 5*time.Second, is(contract.EventLaunchFailed))
	assert.Contains(t, lf.Message, "localization failed: no space left")
	pe := waitEvent(t, m.Events(), 5*time.Second, is(contract.EventPreempted))
	assert.Contains(t, pe.Message, "not counted as a failure")
	waitEvent(t, m.Events(), 5*time.Second, func(e contract.Event) bool { return e.Type == contract.EventLaunched && e.ID > pe.ID })

	s.mu.Lock()
	s.updated = []*hadooppb.NodeReportProto{{NodeId: s.nodes[1], NodeState: hadooppb.NodeStateProto_NS_LOST.Enum(), HealthReport: proto.String("no heartbeat for 600s")}}
	s.mu.Unlock()
	lost := waitEvent(t, m.Events(), 5*time.Second, is(contract.EventNodeUnhealthy))
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
	assert.Equal(t, 5, m.specLocked().Instances)
	assert.Equal(t, 5, m.stateLocked().Instances)
}
