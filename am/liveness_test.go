package am

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// probedNM is the fake cluster's NodeManagers with getContainerStatuses: down, they do not answer
// (a refused dial); up, they report the containers they started RUNNING.
type probedNM struct {
	fakecluster.NMClient
	c      *fakecluster.Cluster
	down   atomic.Bool
	probes atomic.Int32
}

func (n *probedNM) GetContainerStatuses(_ context.Context, node string, ids ...*hadooppb.ContainerIdProto) (*hadooppb.GetContainerStatusesResponseProto, error) {
	n.probes.Add(1)
	if n.down.Load() {
		return nil, &yarnrpc.ConnError{Addr: node, Op: "dial", Err: errors.New("connection refused")}
	}
	n.c.Mu.Lock()
	defer n.c.Mu.Unlock()
	resp := &hadooppb.GetContainerStatusesResponseProto{}
	for _, id := range ids {
		if slices.Contains(n.c.Started, yarnrpc.FormatContainerID(id)) {
			resp.Status = append(resp.Status, &hadooppb.ContainerStatusProto{ContainerId: id, State: hadooppb.ContainerStateProto_C_RUNNING.Enum()})
		} else {
			resp.FailedRequests = append(resp.FailedRequests, &hadooppb.ContainerExceptionMapProto{ContainerId: id,
				Exception: &hadooppb.SerializedExceptionProto{Message: proto.String("Container is not handled by this NodeManager")}})
		}
	}
	return resp, nil
}

// livenessAM is an AM on the in-process fake cluster with its clock and NM under the test's control,
// not running its loop: the test drives checkLiveness.
func livenessAM(t *testing.T) (*am, *testClock, *probedNM, *fakecluster.Cluster) {
	t.Helper()
	c := fakecluster.InProcess()
	c.KeepRunning = true
	clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	nm := &probedNM{NMClient: c.InProcessNM(), c: c}
	m, err := newAM(config{App: "application_1700000000000_0007", Spec: gpuSpec(2, 0), Now: clock.Now, Policy: noFailurePolicy,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: c.InProcessScheduler(), NM: nm, Log: quietLog})
	require.NoError(t, err)
	return m, clock, nm, c
}

// running books a running container as if it was allocated and launched (its NM started it).
func running(t *testing.T, m *am, c *fakecluster.Cluster, n int64, node string) *book.Container {
	t.Helper()
	cid := &hadooppb.ContainerIdProto{AppId: c.App, AppAttemptId: c.Att, Id: proto.Int64(n)}
	id := yarnrpc.FormatContainerID(cid)
	c.Mu.Lock()
	c.Started = append(c.Started, id)
	c.Mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	tr := m.rec.Accepted(decision.Allocation{ID: id, Node: node, AskID: 1, Resources: gpuSpec(1, 0).Capability}, &hadooppb.ContainerProto{Id: cid}, 0, false)
	m.rec.Launched(tr)
	return tr
}

// pass moves the clock by d in steps of a second, checking at each as the loop does after every
// heartbeat (a jump of more than half the timeout is a pause of the AM's: every clock restarts).
func pass(m *am, clock *testClock, d time.Duration) {
	for ; d > 0; d -= time.Second {
		clock.Add(min(d, time.Second))
		check(m)
	}
}

// check runs one liveness check and waits for its probes.
func check(m *am) {
	m.checkLiveness(context.Background())
	m.background.Wait()
}

func phase(m *am, tr *book.Container) contract.Phase {
	m.mu.Lock()
	defer m.mu.Unlock()
	return tr.Phase
}

func TestLivenessSilentLauncherOnADeadNodeManagerIsLost(t *testing.T) {
	m, clock, nm, c := livenessAM(t)
	check(m) // the first check starts the clocks
	tr := running(t, m, c, 2, "node-a:8041")
	nm.down.Store(true)

	pass(m, clock, contract.DefaultLivenessTimeout-time.Second)
	assert.Equal(t, contract.Running, phase(m, tr), "silent for less than the timeout")
	assert.Zero(t, nm.probes.Load(), "no probe before the timeout")

	pass(m, clock, 3*time.Second)
	require.Equal(t, contract.Completed, phase(m, tr), "silent past the timeout on a NodeManager that does not answer")
	assert.Equal(t, contract.ExitAborted, tr.Exit.Class)
	assert.False(t, tr.Exit.Class.Counts(), "a lost node is never the worker's failure")
	assert.Contains(t, tr.Exit.Diagnostics, "does not answer")
	m.mu.Lock()
	assert.Contains(t, m.release, tr.ID, "its container is released")
	add, _ := m.book.Excl.Next()
	assert.Equal(t, []string{"node-a:8041"}, add, "its node is excluded")
	_, _, failed := m.rec.Counts()
	assert.Zero(t, failed)
	m.mu.Unlock()
	var lost []contract.Event
	for _, e := range m.events.Latest(100) {
		if e.Type == contract.EventLost {
			lost = append(lost, e)
		}
	}
	require.Len(t, lost, 1)
	assert.Equal(t, tr.ID, lost[0].Container)
	assert.Contains(t, lost[0].Message, "silent for "+contract.DefaultLivenessTimeout.String())

	// The RM's own report of the node's end, ten minutes later, changes nothing.
	m.applyResponse(&hadooppb.AllocateResponseProto{ResponseId: proto.Int32(m.responseID), NumClusterNodes: proto.Int32(int32(m.clusterNodes)),
		CompletedContainerStatuses: []*hadooppb.ContainerStatusProto{{ContainerId: tr.CID, ExitStatus: proto.Int32(contract.ExitStatusAborted)}}}, sentRequest{})
	m.mu.Lock()
	completed, _, _ := m.rec.Counts()
	assert.Equal(t, 1, completed, "the container ended once")
	m.mu.Unlock()

	// The node comes back: the RM reports it RUNNING and its exclusion is lifted.
	m.mu.Lock()
	m.book.Excl.Drain(add, nil)
	m.mu.Unlock()
	m.applyResponse(&hadooppb.AllocateResponseProto{ResponseId: proto.Int32(m.responseID), NumClusterNodes: proto.Int32(int32(m.clusterNodes)),
		UpdatedNodes: []*hadooppb.NodeReportProto{{NodeId: &hadooppb.NodeIdProto{Host: proto.String("node-a"), Port: proto.Int32(8041)}, NodeState: hadooppb.NodeStateProto_NS_RUNNING.Enum()}}}, sentRequest{})
	m.mu.Lock()
	_, remove := m.book.Excl.Next()
	m.mu.Unlock()
	assert.Equal(t, []string{"node-a:8041"}, remove)
}

func TestLivenessSilentLauncherOnALiveNodeManagerIsNotLost(t *testing.T) {
	m, clock, nm, c := livenessAM(t)
	check(m)
	tr := running(t, m, c, 2, "node-a:8041")
	pass(m, clock, contract.DefaultLivenessTimeout+time.Second)
	assert.Equal(t, contract.Running, phase(m, tr), "its NodeManager says it runs")
	assert.Equal(t, int32(1), nm.probes.Load())

	// Asked again only a timeout later; by then the NodeManager is down: lost.
	nm.down.Store(true)
	pass(m, clock, contract.DefaultLivenessTimeout-2*time.Second)
	assert.Equal(t, int32(1), nm.probes.Load(), "vouched for: no probe before another timeout")
	pass(m, clock, 5*time.Second)
	assert.Equal(t, contract.Completed, phase(m, tr))
}

func TestLivenessAliveLauncherKeepsItsContainerWhenItsNodeManagerIsDown(t *testing.T) {
	m, clock, nm, c := livenessAM(t)
	check(m)
	tr := running(t, m, c, 2, "node-a:8041")
	nm.down.Store(true)
	srv := httptest.NewServer(m.Handler("s3cret"))
	defer srv.Close()
	for range 20 { // 20 liveness messages, one every interval
		clock.Add(contract.LivenessInterval)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/containers/"+tr.ID+contract.AlivePath, nil)
		req.Header.Set("Authorization", "Bearer s3cret")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
		check(m)
	}
	assert.Equal(t, contract.Running, phase(m, tr))
	assert.Zero(t, nm.probes.Load(), "a launcher that speaks is never probed")

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/containers/"+tr.ID+contract.AlivePath, nil)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the liveness message takes the secret")
}

func TestLivenessClockStartsAtTheAdoptionAndAfterAPause(t *testing.T) {
	m, clock, nm, c := livenessAM(t)
	nm.down.Store(true)
	// A container an earlier attempt started: its launcher's messages went to that attempt.
	clock.Add(time.Hour)
	m.started = clock.Now() // this attempt starts now
	m.mu.Lock()
	cid := &hadooppb.ContainerIdProto{AppId: c.App, AppAttemptId: c.Att, Id: proto.Int64(2)}
	tr := m.rec.Adopted(yarnrpc.FormatContainerID(cid), "node-a:8041", gpuSpec(1, 0).Capability, cid)
	m.mu.Unlock()
	check(m)
	pass(m, clock, contract.DefaultLivenessTimeout-time.Second)
	assert.Equal(t, contract.Running, phase(m, tr), "the silence is counted from this attempt's start, not from a stale time")
	assert.Zero(t, nm.probes.Load())

	// The loop could not run for a minute (an RM failover): every clock starts again.
	clock.Add(time.Minute)
	check(m)
	assert.Equal(t, contract.Running, phase(m, tr), "the AM's own pause is no launcher's silence")
	assert.Zero(t, nm.probes.Load())
	pass(m, clock, contract.DefaultLivenessTimeout+4*time.Second)
	assert.Equal(t, contract.Completed, phase(m, tr), "lost a timeout after the pause")
}

// TestLivenessLostTaskExecutorIsReplacedByTheLoop: two TaskExecutors run, their NodeManager stops
// answering and their launchers fall silent: the loop declares them lost, releases them and asks
// for replacements at once, with no failure counted.
func TestLivenessLostTaskExecutorIsReplacedByTheLoop(t *testing.T) {
	c := fakecluster.InProcess()
	c.KeepRunning = true
	clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	nm := &probedNM{NMClient: c.InProcessNM(), c: c}
	m, err := newAM(config{App: "application_1700000000000_0007", Spec: gpuSpec(2, 0), Now: clock.Now, Policy: noFailurePolicy,
		HeartbeatFast: time.Millisecond, HeartbeatSlow: 2 * time.Millisecond,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: c.InProcessScheduler(), NM: nm, Log: quietLog})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _, _ = m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, func() bool { return m.Status().Counts.Running == 2 }, 10*time.Second, time.Millisecond)

	nm.down.Store(true)
	require.Eventually(t, func() bool {
		clock.Add(100 * time.Millisecond)
		return m.Status().Counts.Completed == 2
	}, 20*time.Second, time.Millisecond, "both silent TaskExecutors on the dead NodeManager are lost")
	nm.down.Store(false)
	require.Eventually(t, func() bool { return m.Status().Counts.Running == 2 }, 10*time.Second, time.Millisecond, "two replacements run")
	s := m.Status()
	assert.Zero(t, s.Counts.Failed, "lost TaskExecutors are not failures")
	c.Mu.Lock()
	defer c.Mu.Unlock()
	assert.Equal(t, 4, c.StartedN, "two TaskExecutors and two replacements")
	assert.Len(t, c.Released, 2, "the lost containers were released")

	// The RM's own report, minutes later, when its expiry declares the node LOST: the lost containers
	// completed as aborted. It brings no second replacement and no failure (what
	// make test-liveness-expiry proves on the real RM).
	lost := append([]string{}, c.Started[:2]...)
	for _, id := range lost {
		cid, err := yarnrpc.ParseContainerID(id)
		require.NoError(t, err)
		c.Complete = append(c.Complete, &hadooppb.ContainerStatusProto{ContainerId: cid, State: hadooppb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(contract.ExitStatusAborted), Diagnostics: proto.String("Container released on a *lost* node")})
	}
	allocates := c.Allocates
	c.Mu.Unlock()
	require.Eventually(t, func() bool {
		c.Mu.Lock()
		defer c.Mu.Unlock()
		return c.Complete == nil && c.Allocates > allocates+3
	}, 10*time.Second, time.Millisecond, "the RM's report was delivered and the AM heartbeat on")
	c.Mu.Lock()
	s = m.Status()
	assert.Equal(t, 2, s.Counts.Running, "still the two replacements")
	assert.Zero(t, s.Counts.Failed, "the RM's LOST report is no failure")
	assert.Equal(t, 4, c.StartedN, "no second replacement")
}

// TestLivenessLostRankRestartsTheGangRound: a rank the liveness check declared lost ends as aborted,
// which ends its gang round at once (the other rank stops, the whole gang is asked for again), not
// after the RM's expiry.
func TestLivenessLostRankRestartsTheGangRound(t *testing.T) {
	m, clock, nm, c := livenessAM(t)
	m.cfg.Spec.Gang = true
	check(m)
	a := running(t, m, c, 2, "node-a:8041")
	b := running(t, m, c, 3, "node-b:8041")
	nm.down.Store(true)
	m.Alive(b.ID)
	for range contract.DefaultLivenessTimeout/time.Second + 2 {
		clock.Add(time.Second)
		m.Alive(b.ID) // rank b's launcher speaks; a's is silent
		check(m)
	}
	require.Equal(t, contract.Completed, phase(m, a))
	require.Equal(t, contract.Running, phase(m, b))
	m.mu.Lock()
	plan := decision.Reconcile(m.book.Want.Spec(m.cfg.Spec), m.observedLocked(clock.Now()))
	m.mu.Unlock()
	assert.True(t, plan.NewRound, "the lost rank ends the round")
	require.Len(t, plan.Stop, 1)
	assert.Equal(t, b.ID, plan.Stop[0].ID, "the other rank stops")
}

// TestLivenessLostNodeIsLiftedWhenItsNodeManagerAnswersAgain: a node excluded for a loss comes back
// when its NodeManager answers again, even though it no longer knows the lost container.
func TestLivenessLostNodeIsLiftedWhenItsNodeManagerAnswersAgain(t *testing.T) {
	m, clock, nm, c := livenessAM(t)
	check(m)
	tr := running(t, m, c, 2, "node-a:8041")
	nm.down.Store(true)
	pass(m, clock, contract.DefaultLivenessTimeout+4*time.Second)
	require.Equal(t, contract.Completed, phase(m, tr))
	st := m.Status()
	assert.Equal(t, []string{"node-a:8041"}, st.ExcludedNodes, "the status shows a node excluded for a loss")
	assert.Equal(t, []contract.NodeExclusion{{Node: "node-a:8041", Reason: contract.ExclusionLost}}, st.Exclusions)
	m.mu.Lock()
	add, _ := m.book.Excl.Next()
	m.book.Excl.Drain(add, nil)
	m.mu.Unlock()
	pass(m, clock, 10*time.Second)
	m.mu.Lock()
	_, remove := m.book.Excl.Next()
	m.mu.Unlock()
	assert.Empty(t, remove, "still excluded while its NodeManager does not answer")

	nm.down.Store(false)
	c.Mu.Lock()
	c.Started = nil // a restarted NodeManager knows none of the old containers
	c.Mu.Unlock()
	pass(m, clock, contract.DefaultLivenessTimeout+time.Second) // asked once a timeout
	m.mu.Lock()
	_, remove = m.book.Excl.Next()
	m.mu.Unlock()
	assert.Equal(t, []string{"node-a:8041"}, remove)
	st = m.Status()
	assert.Empty(t, st.ExcludedNodes, "lifted: no longer shown")
	assert.Empty(t, st.Exclusions)
}

// TestLivenessLostNodeIsLiftedWhenTheRMDropsIt: a node excluded for a loss whose NodeManager never
// answers again is lifted once the RM reports it LOST: the RM allocates nothing there any more, and
// the blacklist's host name would otherwise keep a NodeManager started again on that host (a new
// port, a new node id) from the job for good, as a gang of the chaos soak waited 15 minutes for its
// second rank with the restarted NodeManager free.
func TestLivenessLostNodeIsLiftedWhenTheRMDropsIt(t *testing.T) {
	m, clock, nm, c := livenessAM(t)
	check(m)
	tr := running(t, m, c, 2, "node-a:8041")
	nm.down.Store(true)
	pass(m, clock, contract.DefaultLivenessTimeout+4*time.Second)
	require.Equal(t, contract.Completed, phase(m, tr))
	m.mu.Lock()
	add, _ := m.book.Excl.Next()
	assert.Equal(t, []string{"node-a:8041"}, add)
	assert.Equal(t, []string{"node-a:8041", "node-a"}, blacklistNames(add), "the blacklist names the node and its host")
	m.book.Excl.Drain(add, nil)
	m.mu.Unlock()

	// A node UNHEALTHY is not gone: it may come back under its own id.
	report := func(state hadooppb.NodeStateProto) {
		m.applyResponse(&hadooppb.AllocateResponseProto{UpdatedNodes: []*hadooppb.NodeReportProto{{
			NodeId: &hadooppb.NodeIdProto{Host: proto.String("node-a"), Port: proto.Int32(8041)}, NodeState: state.Enum()}}}, sentRequest{})
	}
	report(hadooppb.NodeStateProto_NS_UNHEALTHY)
	m.mu.Lock()
	_, remove := m.book.Excl.Next()
	m.mu.Unlock()
	assert.Empty(t, remove, "still excluded while UNHEALTHY")

	report(hadooppb.NodeStateProto_NS_LOST)
	m.mu.Lock()
	_, remove = m.book.Excl.Next()
	m.mu.Unlock()
	assert.Equal(t, []string{"node-a:8041"}, remove, "lifted: the RM dropped the node")
	st := m.Status()
	assert.Empty(t, st.ExcludedNodes)
	var lifted bool
	for _, e := range st.Events {
		lifted = lifted || e.Type == contract.EventNodeExclusionLifted && e.Node == "node-a:8041"
	}
	assert.True(t, lifted, "an event says the exclusion was lifted: %+v", st.Events)
}
