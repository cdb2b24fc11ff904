package am

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/container/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// fakeCluster is a fake RM scheduler port and one fake NM (both rpctest servers with TOKEN auth),
// sharing the state of the containers the "cluster" runs.
type fakeCluster struct {
	t      *testing.T
	rm, nm *rpctest.Server
	node   *hadooppb.NodeIdProto
	appID  *hadooppb.ApplicationIdProto
	att    *hadooppb.ApplicationAttemptIdProto

	mu sync.Mutex
	// knobs
	exitCode          func(n int) int32       // exit status of the n-th started container (0-based)
	misfitFirst       int                     // the first misfitFirst allocations come without GPUs
	notRegisteredAt   int                     // the allocate call (1-based) that fails with ApplicationMasterNotRegistered
	resyncAt          int                     // the allocate call (1-based) answered with AM_RESYNC (the RM forgot the attempt's requests)
	rollTokenAt       int                     // the allocate call (1-based) whose response carries a new AM-RM token
	refuseStarts      int                     // the NM refuses the first refuseStarts startContainers requests
	maximum           *hadooppb.ResourceProto // registration's maximumCapability
	rejectAsks        bool                    // allocate answers InvalidResourceRequestException to any ask
	maxAllocations    int                     // allocate grants no more than this many containers in all (0: no limit)
	repeatAllocations bool                    // every allocate response repeats the containers allocated so far (an RM that re-reports them)
	allAllocated      []*hadooppb.ContainerProto
	runHeartbeats     int                        // a started container completes after this many more allocates (0: at the next)
	age               map[string]int             // allocates seen by each running container
	previous          []*hadooppb.ContainerProto // the first registration hands these over as a previous attempt's (running; they exit 0 at the next heartbeat)
	// state
	registered   bool
	registers    int
	allocates    int
	lastRespID   int32
	lastResp     *hadooppb.AllocateResponseProto
	respIDErrors []string
	table        map[int64]int32 // allocationRequestId → containers pending at the "RM"
	capability   map[int64]*hadooppb.ResourceProto
	nextCID      int64
	allocated    int
	released     []string
	started      []string // container ids started on the NM, in order
	running      map[string]int32
	finished     []*hadooppb.ContainerStatusProto
	finishReq    *hadooppb.FinishApplicationMasterRequestProto
	askLog       []*hadooppb.ResourceRequestProto
	nmTokenSent  bool
	stopped      []string
}

var (
	amrmID   = []byte("amrm-token-1")
	amrmPW   = []byte("amrm-password-1")
	amrmID2  = []byte("amrm-token-2")
	amrmPW2  = []byte("amrm-password-2")
	nmTokID  = []byte("nm-token-1")
	nmTokPW  = []byte("nm-password-1")
	quietLog = func() logrus.FieldLogger { l := logrus.New(); l.SetOutput(io.Discard); return l }()
)

func newFakeCluster(t *testing.T) *fakeCluster {
	t.Helper()
	rm, err := rpctest.NewServer(rpctest.Options{Tokens: map[string][]byte{string(amrmID): amrmPW, string(amrmID2): amrmPW2}})
	require.NoError(t, err)
	nm, err := rpctest.NewServer(rpctest.Options{Tokens: map[string][]byte{string(nmTokID): nmTokPW}})
	require.NoError(t, err)
	t.Cleanup(func() { rm.Close(); nm.Close() })
	host, port, _ := net.SplitHostPort(nm.Addr())
	p, _ := strconv.Atoi(port)
	app := &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1700000000000), Id: proto.Int32(7)}
	f := &fakeCluster{t: t, rm: rm, nm: nm, appID: app,
		node:     &hadooppb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(int32(p))},
		att:      &hadooppb.ApplicationAttemptIdProto{ApplicationId: app, AttemptId: proto.Int32(1)},
		exitCode: func(int) int32 { return 0 },
		table:    map[int64]int32{}, capability: map[int64]*hadooppb.ResourceProto{}, running: map[string]int32{}, nextCID: 2}
	rm.Handle(yarnrpc.ApplicationMasterProtocol, "registerApplicationMaster", f.register)
	rm.Handle(yarnrpc.ApplicationMasterProtocol, "allocate", f.allocate)
	rm.Handle(yarnrpc.ApplicationMasterProtocol, "finishApplicationMaster", f.finish)
	nm.Handle(yarnrpc.ContainerManagementProtocol, "startContainers", f.start)
	nm.Handle(yarnrpc.ContainerManagementProtocol, "stopContainers", f.stop)
	return f
}

func (f *fakeCluster) register(_ context.Context, r *rpctest.Request) (proto.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered = true
	f.registers++
	f.lastRespID = 0
	f.lastResp = nil
	f.table = map[int64]int32{} // a restarted RM has an empty request table
	resp := &hadooppb.RegisterApplicationMasterResponseProto{Queue: proto.String("default"), MaximumCapability: f.maximum}
	if f.registers == 1 && len(f.previous) > 0 {
		resp.ContainersFromPreviousAttempts = f.previous
		resp.NmTokensFromPreviousAttempts = []*hadooppb.NMTokenProto{{NodeId: f.node, Token: &hadooppb.TokenProto{Identifier: nmTokID, Password: nmTokPW,
			Kind: proto.String("NMToken"), Service: proto.String("")}}}
		for _, c := range f.previous {
			f.running[yarnrpc.FormatContainerID(c.GetId())] = 0
		}
	}
	return resp, nil
}

func (f *fakeCluster) allocate(_ context.Context, r *rpctest.Request) (proto.Message, error) {
	var req hadooppb.AllocateRequestProto
	if err := r.Decode(&req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.allocates++
	if f.allocates == f.notRegisteredAt {
		f.registered = false
	}
	if !f.registered {
		return nil, &rpctest.Exception{Class: "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException",
			Message: "AM is not registered for known application attempt"}
	}
	if f.allocates == f.resyncAt {
		f.registered, f.table = false, map[int64]int32{}
		return &hadooppb.AllocateResponseProto{ResponseId: proto.Int32(f.lastRespID + 1), AMCommand: hadooppb.AMCommandProto_AM_RESYNC.Enum()}, nil
	}
	if f.lastResp != nil && req.GetResponseId()+1 == f.lastRespID {
		return f.lastResp, nil // a repeated heartbeat (its response was lost): the RM answers it again
	}
	if f.rejectAsks && len(req.GetAsk()) > 0 {
		return nil, &rpctest.Exception{Class: "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException",
			Message: "Invalid resource request, requested resource type=[yarn.io/gpu] < 0 or greater than maximum allowed allocation."}
	}
	if req.GetResponseId() != f.lastRespID {
		f.respIDErrors = append(f.respIDErrors, fmt.Sprintf("allocate %d: response_id %d, want %d", f.allocates, req.GetResponseId(), f.lastRespID))
	}
	f.lastRespID++
	resp := &hadooppb.AllocateResponseProto{ResponseId: proto.Int32(f.lastRespID)}
	for _, a := range req.GetAsk() {
		f.askLog = append(f.askLog, a)
		if a.GetResourceName() != "*" {
			continue // node and rack requests (locality.go): this fake allocates by the "*" count only
		}
		f.table[a.GetAllocationRequestId()] = a.GetNumContainers()
		f.capability[a.GetAllocationRequestId()] = a.GetCapability()
	}
	for _, id := range req.GetRelease() {
		f.released = append(f.released, yarnrpc.FormatContainerID(id))
	}
	for askID, n := range f.table {
		for ; n > 0 && (f.maxAllocations == 0 || f.allocated < f.maxAllocations); n-- {
			res := proto.Clone(f.capability[askID]).(*hadooppb.ResourceProto)
			if f.allocated < f.misfitFirst {
				res.ResourceValueMap = nil // no GPUs: must be released
			}
			cid := &hadooppb.ContainerIdProto{AppId: f.appID, AppAttemptId: f.att, Id: proto.Int64(f.nextCID)}
			f.nextCID++
			f.allocated++
			resp.AllocatedContainers = append(resp.AllocatedContainers, &hadooppb.ContainerProto{
				Id: cid, NodeId: f.node, Resource: res, AllocationRequestId: proto.Int64(askID),
				ContainerToken: &hadooppb.TokenProto{Identifier: []byte("ct-" + yarnrpc.FormatContainerID(cid)), Password: []byte("x"),
					Kind: proto.String("ContainerToken"), Service: proto.String("")},
			})
		}
		f.table[askID] = n
	}
	if f.repeatAllocations {
		fresh := resp.AllocatedContainers
		resp.AllocatedContainers = append(append([]*hadooppb.ContainerProto{}, f.allAllocated...), fresh...)
		f.allAllocated = append(f.allAllocated, fresh...)
	}
	if len(resp.AllocatedContainers) > 0 && !f.nmTokenSent {
		f.nmTokenSent = true
		resp.NmTokens = []*hadooppb.NMTokenProto{{NodeId: f.node, Token: &hadooppb.TokenProto{Identifier: nmTokID, Password: nmTokPW,
			Kind: proto.String("NMToken"), Service: proto.String("")}}}
	}
	if f.allocates == f.rollTokenAt {
		resp.AmRmToken = &hadooppb.TokenProto{Identifier: amrmID2, Password: amrmPW2, Kind: proto.String(yarnrpc.AMRMTokenKind), Service: proto.String("")}
	}
	// Containers started since the last heartbeat finish now.
	for id, code := range f.running {
		if f.age == nil {
			f.age = map[string]int{}
		}
		if f.age[id]++; f.age[id] <= f.runHeartbeats {
			continue
		}
		cid, _ := yarnrpc.ParseContainerID(id)
		resp.CompletedContainerStatuses = append(resp.CompletedContainerStatuses, &hadooppb.ContainerStatusProto{
			ContainerId: cid, State: hadooppb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(code),
			Diagnostics: proto.String(fmt.Sprintf("Exception from container-launch. Exit code: %d", code))})
		delete(f.running, id)
	}
	f.lastResp = resp
	return resp, nil
}

func (f *fakeCluster) finish(_ context.Context, r *rpctest.Request) (proto.Message, error) {
	var req hadooppb.FinishApplicationMasterRequestProto
	if err := r.Decode(&req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finishReq = &req
	return &hadooppb.FinishApplicationMasterResponseProto{IsUnregistered: proto.Bool(true)}, nil
}

func (f *fakeCluster) start(_ context.Context, r *rpctest.Request) (proto.Message, error) {
	var req hadooppb.StartContainersRequestProto
	if err := r.Decode(&req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := &hadooppb.StartContainersResponseProto{}
	for _, s := range req.GetStartContainerRequest() {
		id := string(s.GetContainerToken().GetIdentifier())[len("ct-"):]
		cid, err := yarnrpc.ParseContainerID(id)
		require.NoError(f.t, err)
		if f.refuseStarts > 0 {
			f.refuseStarts--
			resp.FailedRequests = append(resp.FailedRequests, &hadooppb.ContainerExceptionMapProto{ContainerId: cid,
				Exception: &hadooppb.SerializedExceptionProto{ClassName: proto.String("org.apache.hadoop.yarn.exceptions.YarnException"),
					Message: proto.String("Container " + id + " was refused (test)")}})
			continue
		}
		f.running[id] = f.exitCode(len(f.started))
		f.started = append(f.started, id)
		resp.SucceededRequests = append(resp.SucceededRequests, cid)
	}
	return resp, nil
}

func (f *fakeCluster) stop(_ context.Context, r *rpctest.Request) (proto.Message, error) {
	var req hadooppb.StopContainersRequestProto
	if err := r.Decode(&req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range req.GetContainerId() {
		f.stopped = append(f.stopped, yarnrpc.FormatContainerID(id))
	}
	return &hadooppb.StopContainersResponseProto{SucceededRequests: req.GetContainerId()}, nil
}

type fakeStaging struct{ deleted int }

func (s *fakeStaging) Delete(context.Context) error { s.deleted++; return nil }

func (f *fakeCluster) newAM(t *testing.T, spec Spec) (*AM, *fakeStaging) {
	t.Helper()
	co := yarnrpc.ConnOptions{Logger: quietLog}
	rm, err := yarnrpc.NewAMClientAt([]string{f.rm.Addr()}, co, yarnrpc.Token{Identifier: amrmID, Password: amrmPW, Kind: yarnrpc.AMRMTokenKind}, "alice")
	require.NoError(t, err)
	nm := yarnrpc.NewNMClient(co, yarnrpc.FormatAttemptID(f.att))
	t.Cleanup(func() { rm.Close(); nm.Close() })
	st := &fakeStaging{}
	m, err := New(Config{App: yarnrpc.FormatApplicationID(f.appID), Spec: spec, Host: "127.0.0.1", RPCPort: 1, TrackingURL: "http://127.0.0.1:1/",
		HeartbeatFast: 5 * time.Millisecond, HeartbeatSlow: 20 * time.Millisecond, LaunchWorkers: 3,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: rm, NM: nm, Staging: st, Log: quietLog})
	require.NoError(t, err)
	return m, st
}

var gpuSpec = func(n, maxFail int) Spec {
	return Spec{Instances: n, MaxFailures: maxFail, Capability: contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 1}}
}

func run(t *testing.T, m *AM) Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := m.Run(ctx)
	require.NoError(t, err)
	return out
}

func TestLoopBatchSucceeds(t *testing.T) {
	f := newFakeCluster(t)
	m, st := f.newAM(t, gpuSpec(4, 3))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Empty(t, f.respIDErrors, "every allocate carries the last response_id received")
	assert.Len(t, f.started, 4)
	assert.Equal(t, 1, f.registers)
	require.NotNil(t, f.finishReq)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, f.finishReq.GetFinalApplicationStatus())
	assert.Contains(t, f.finishReq.GetDiagnostics(), "all 4 TaskExecutors exited with code 0")
	require.NotEmpty(t, f.askLog)
	first := f.askLog[0]
	assert.EqualValues(t, 1, first.GetAllocationRequestId())
	assert.EqualValues(t, 4, first.GetNumContainers())
	assert.Equal(t, contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 1}, contract.Capability(yarnrpc.ResourceAmounts(first.GetCapability())))
	assert.Equal(t, 1, st.deleted, "staging deleted once the app ended")
	s := m.Status()
	assert.Equal(t, contract.AMState(contract.Succeeded), s.State)
	assert.Equal(t, 4, s.Counts.Completed)
	assert.Equal(t, 0, s.Counts.Failed)
}

func TestLoopReleasesMisfitsAndAsksAgain(t *testing.T) {
	f := newFakeCluster(t)
	f.misfitFirst = 2
	m, _ := f.newAM(t, gpuSpec(3, 3))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Len(t, f.released, 2, "the two containers without GPUs are released")
	assert.Len(t, f.started, 3, "exactly the requested number is launched")
	for _, r := range f.released {
		assert.NotContains(t, f.started, r, "a misfit is never launched")
	}
	// The ask was restored at the RM after the misfits: 3, then 2 (the RM decremented it for them).
	var counts []int32
	for _, a := range f.askLog {
		counts = append(counts, a.GetNumContainers())
	}
	assert.Equal(t, []int32{3, 2}, counts)
}

func TestLoopFailureLimit(t *testing.T) {
	f := newFakeCluster(t)
	f.exitCode = func(int) int32 { return 3 }
	m, _ := f.newAM(t, gpuSpec(1, 2))
	out := run(t, m)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "3 TaskExecutors failed")
	assert.Contains(t, out.Diagnostics, "exit code 3")
	assert.Contains(t, out.Diagnostics, "taskexecutor.max-failures = 2")
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Len(t, f.started, 3, "2 replacements (max-failures = 2), then the third failure ends the app")
	require.NotNil(t, f.finishReq)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_FAILED, f.finishReq.GetFinalApplicationStatus())
	assert.Contains(t, f.finishReq.GetDiagnostics(), "exit code 3")
}

func TestLoopPreemptionIsNotCounted(t *testing.T) {
	f := newFakeCluster(t)
	f.exitCode = func(n int) int32 {
		if n < 3 {
			return -102 // preempted
		}
		return 0
	}
	m, _ := f.newAM(t, gpuSpec(1, 0))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status, "preemptions are replaced without using up max-failures = 0")
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Len(t, f.started, 4)
}

func TestLoopReRegistersAfterNotRegistered(t *testing.T) {
	f := newFakeCluster(t)
	f.notRegisteredAt = 1 // the very first allocate: the ask is lost with the RM's memory
	m, _ := f.newAM(t, gpuSpec(2, 3))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Equal(t, 2, f.registers)
	assert.Empty(t, f.respIDErrors, "response_id restarts at 0 after registering again")
	require.NotEmpty(t, f.askLog)
	assert.EqualValues(t, 2, f.askLog[0].GetNumContainers(), "the outstanding ask is re-sent to the new RM")
	assert.Len(t, f.started, 2)
}

// TestLoopReRegistersAfterResync: an allocate answered with AM_RESYNC makes the AM register again
// (without holding its lock across the call) and send its outstanding asks to the new request table.
func TestLoopReRegistersAfterResync(t *testing.T) {
	f := newFakeCluster(t)
	f.resyncAt = 1 // the first allocate carried the ask; the RM forgot it
	m, _ := f.newAM(t, gpuSpec(3, 3))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Equal(t, 2, f.registers)
	assert.Empty(t, f.respIDErrors, "response_id restarts at 0 after registering again")
	require.NotEmpty(t, f.askLog, "the fake logs the asks it kept: none of the first allocate's")
	assert.EqualValues(t, 3, f.askLog[0].GetNumContainers(), "the outstanding ask is sent again after the resync")
	assert.Len(t, f.started, 3)
}

func TestLoopAMRMTokenRollover(t *testing.T) {
	f := newFakeCluster(t)
	f.rollTokenAt = 1
	f.exitCode = func(n int) int32 {
		if n == 0 {
			go f.rm.CloseConnections() // force a new connection after the roll
		}
		return 0
	}
	m, _ := f.newAM(t, gpuSpec(2, 3))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	conns := f.rm.Connections()
	require.GreaterOrEqual(t, len(conns), 2)
	assert.Equal(t, amrmID, conns[0].TokenIdentifier)
	assert.Equal(t, amrmID2, conns[len(conns)-1].TokenIdentifier, "connections after the roll use the new token")
	nmConns := f.nm.Connections()
	require.NotEmpty(t, nmConns)
	assert.Equal(t, nmTokID, nmConns[0].TokenIdentifier, "NMs are reached with the node's NMToken")
	assert.Equal(t, "TOKEN", nmConns[0].Auth)
}

func TestLoopServiceReplacesExitedAndKillDeletesStaging(t *testing.T) {
	f := newFakeCluster(t)
	spec := gpuSpec(1, 3)
	spec.Mode = Service
	m, st := f.newAM(t, spec)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Outcome, 1)
	go func() { out, _ := m.Run(ctx); done <- out }()
	require.Eventually(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.started) >= 3 }, 10*time.Second, 5*time.Millisecond,
		"a service replaces TaskExecutors that exit 0")
	cancel()
	out := <-done
	assert.Equal(t, contract.Killed, out.Status)
	assert.Equal(t, 1, st.deleted, "SIGTERM (application killed) deletes the staging directory")
}

func TestLoopLaunchFailureIsReleasedAndReplaced(t *testing.T) {
	f := newFakeCluster(t)
	f.refuseStarts = 1
	m, _ := f.newAM(t, gpuSpec(2, 1))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Len(t, f.started, 2)
	require.Len(t, f.released, 1, "the container the NM refused is given back")
	s := m.Status()
	require.Len(t, s.Containers, 3)
	var refused []contract.ContainerStatus
	for _, c := range s.Containers {
		if c.ExitClass == contract.ExitLaunchFailed {
			refused = append(refused, c)
		}
	}
	require.Len(t, refused, 1)
	assert.Equal(t, f.released[0], refused[0].ID)
	assert.Contains(t, refused[0].Diagnostics, "was refused (test)")
}

func TestLoopScale(t *testing.T) {
	if testing.Short() {
		t.Skip("scale simulation")
	}
	f := newFakeCluster(t)
	m, _ := f.newAM(t, gpuSpec(2000, 0))
	start := time.Now()
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Len(t, f.started, 2000)
	assert.Empty(t, f.released)
	assert.Empty(t, f.respIDErrors)
	t.Logf("2000 TaskExecutors through the fake RM/NM in %v (%d heartbeats)", time.Since(start).Round(time.Millisecond), f.allocates)
}

func TestLoopLogsNoSecrets(t *testing.T) {
	var buf bytes.Buffer
	log := logrus.New()
	log.SetOutput(&buf)
	log.SetLevel(logrus.DebugLevel)
	f := newFakeCluster(t)
	f.rollTokenAt = 1
	m, _ := f.newAM(t, gpuSpec(2, 1))
	m.log = log
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	require.NotEmpty(t, buf.String())
	for _, secret := range [][]byte{amrmPW, amrmPW2, nmTokPW, amrmID, nmTokID} {
		assert.NotContains(t, buf.String(), string(secret))
	}
}

func TestLoopFailsAtOnceWhenTheAskExceedsTheMaximum(t *testing.T) {
	f := newFakeCluster(t)
	f.maximum = ResourceProto(contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4})
	spec := gpuSpec(1, 1)
	spec.Capability["yarn.io/gpu"] = 5
	m, st := f.newAM(t, spec)
	out := run(t, m)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "allocation rejected: yarn.io/gpu = 5, but the cluster allows at most 4 yarn.io/gpu per container")
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Zero(t, f.allocates, "nothing is asked")
	require.NotNil(t, f.finishReq)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_FAILED, f.finishReq.GetFinalApplicationStatus())
	assert.Equal(t, 1, st.deleted)
}

func TestLoopFailsWhenTheRMRejectsTheAsk(t *testing.T) {
	f := newFakeCluster(t)
	f.rejectAsks = true
	m, _ := f.newAM(t, gpuSpec(1, 1))
	out := run(t, m)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "the ResourceManager rejected the TaskExecutor request (memory-mb=512 vcores=1 yarn.io/gpu=1)")
	assert.Contains(t, out.Diagnostics, "InvalidResourceRequestException")
}
