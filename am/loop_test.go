package am

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// fakeCluster is the tests' fake cluster (testkit/fakecluster): a fake RM scheduler port and one
// fake NM, both rpctest servers with TOKEN auth, sharing the state of the containers the "cluster" runs.
type fakeCluster struct {
	*fakecluster.Cluster
	t *testing.T
}

var (
	amrmID   = fakecluster.AMRMID
	amrmPW   = fakecluster.AMRMPW
	amrmID2  = fakecluster.AMRMID2
	amrmPW2  = fakecluster.AMRMPW2
	nmTokPW  = fakecluster.NMTokPW
	nmTokID  = fakecluster.NMTokID
	quietLog = func() logrus.FieldLogger { l := logrus.New(); l.SetOutput(io.Discard); return l }()
)

func newFakeCluster(t *testing.T) *fakeCluster {
	t.Helper()
	return &fakeCluster{Cluster: fakecluster.New(t), t: t}
}

type fakeStaging struct{ deleted int }

func (s *fakeStaging) Delete(context.Context) error { s.deleted++; return nil }

func (f *fakeCluster) newAM(t *testing.T, spec decision.Spec) (*am, *fakeStaging) {
	t.Helper()
	co := yarnrpc.ConnOptions{Logger: quietLog}
	rm, err := yarnrpc.NewAMClientAt([]string{f.Scheduler.Addr()}, co, yarnrpc.Token{Identifier: amrmID, Password: amrmPW, Kind: yarnrpc.AMRMTokenKind}, "alice")
	require.NoError(t, err)
	nm := yarnrpc.NewNMClient(co, yarnrpc.FormatAttemptID(f.Att))
	t.Cleanup(func() { rm.Close(); nm.Close() })
	st := &fakeStaging{}
	m, err := newAM(config{App: yarnrpc.FormatApplicationID(f.App), Spec: spec, Host: "127.0.0.1", RPCPort: 1, TrackingURL: "http://127.0.0.1:1/",
		HeartbeatFast: 5 * time.Millisecond, HeartbeatSlow: 20 * time.Millisecond, LaunchWorkers: 3,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: rm, NM: nm, Staging: st, Log: quietLog})
	require.NoError(t, err)
	return m, st
}

var gpuSpec = func(n, maxFail int) decision.Spec {
	return decision.Spec{Instances: n, MaxFailures: maxFail, Capability: contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 1}}
}

func run(t *testing.T, m *am) decision.Outcome {
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
	f.Mu.Lock()
	defer f.Mu.Unlock()
	assert.Empty(t, f.RespIDErrors, "every allocate carries the last response_id received")
	assert.Len(t, f.Started, 4)
	assert.Equal(t, 1, f.Registers)
	require.NotNil(t, f.FinishReq)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, f.FinishReq.GetFinalApplicationStatus())
	assert.Contains(t, f.FinishReq.GetDiagnostics(), "all 4 TaskExecutors exited with code 0")
	require.NotEmpty(t, f.AskLog)
	first := f.AskLog[0]
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
	f.MisfitFirst = 2
	m, _ := f.newAM(t, gpuSpec(3, 3))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	f.Mu.Lock()
	defer f.Mu.Unlock()
	assert.Len(t, f.Released, 2, "the two containers without GPUs are released")
	assert.Len(t, f.Started, 3, "exactly the requested number is launched")
	for _, r := range f.Released {
		assert.NotContains(t, f.Started, r, "a misfit is never launched")
	}
	// The ask was restored at the RM after the misfits: 3, then 2 (the RM decremented it for them).
	var counts []int32
	for _, a := range f.AskLog {
		counts = append(counts, a.GetNumContainers())
	}
	assert.Equal(t, []int32{3, 2}, counts)
}

func TestLoopFailureLimit(t *testing.T) {
	f := newFakeCluster(t)
	f.ExitCode = func(int) int32 { return 3 }
	m, _ := f.newAM(t, gpuSpec(1, 2))
	out := run(t, m)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "3 TaskExecutors failed")
	assert.Contains(t, out.Diagnostics, "exit code 3")
	assert.Contains(t, out.Diagnostics, "taskexecutor.max-failures = 2")
	f.Mu.Lock()
	defer f.Mu.Unlock()
	assert.Len(t, f.Started, 3, "2 replacements (max-failures = 2), then the third failure ends the app")
	require.NotNil(t, f.FinishReq)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_FAILED, f.FinishReq.GetFinalApplicationStatus())
	assert.Contains(t, f.FinishReq.GetDiagnostics(), "exit code 3")
}

func TestLoopPreemptionIsNotCounted(t *testing.T) {
	f := newFakeCluster(t)
	f.ExitCode = func(n int) int32 {
		if n < 3 {
			return -102 // preempted
		}
		return 0
	}
	m, _ := f.newAM(t, gpuSpec(1, 0))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status, "preemptions are replaced without using up max-failures = 0")
	f.Mu.Lock()
	defer f.Mu.Unlock()
	assert.Len(t, f.Started, 4)
}

func TestLoopReRegistersAfterNotRegistered(t *testing.T) {
	f := newFakeCluster(t)
	f.NotRegisteredAt = 1 // the very first allocate: the ask is lost with the RM's memory
	m, _ := f.newAM(t, gpuSpec(2, 3))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	f.Mu.Lock()
	defer f.Mu.Unlock()
	assert.Equal(t, 2, f.Registers)
	assert.Empty(t, f.RespIDErrors, "response_id restarts at 0 after registering again")
	require.NotEmpty(t, f.AskLog)
	assert.EqualValues(t, 2, f.AskLog[0].GetNumContainers(), "the outstanding ask is re-sent to the new RM")
	assert.Len(t, f.Started, 2)
}

// TestLoopReRegistersAfterResync: an allocate answered with AM_RESYNC makes the AM register again
// (without holding its lock across the call) and send its outstanding asks to the new request table.
func TestLoopReRegistersAfterResync(t *testing.T) {
	f := newFakeCluster(t)
	f.ResyncAt = 1 // the first allocate carried the ask; the RM forgot it
	m, _ := f.newAM(t, gpuSpec(3, 3))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	f.Mu.Lock()
	defer f.Mu.Unlock()
	assert.Equal(t, 2, f.Registers)
	assert.Empty(t, f.RespIDErrors, "response_id restarts at 0 after registering again")
	require.NotEmpty(t, f.AskLog, "the fake logs the asks it kept: none of the first allocate's")
	assert.EqualValues(t, 3, f.AskLog[0].GetNumContainers(), "the outstanding ask is sent again after the resync")
	assert.Len(t, f.Started, 3)
}

func TestLoopAMRMTokenRollover(t *testing.T) {
	f := newFakeCluster(t)
	f.RollTokenAt = 1
	f.ExitCode = func(n int) int32 {
		if n == 0 {
			go f.Scheduler.CloseConnections() // force a new connection after the roll
		}
		return 0
	}
	m, _ := f.newAM(t, gpuSpec(2, 3))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	conns := f.Scheduler.Connections()
	require.GreaterOrEqual(t, len(conns), 2)
	assert.Equal(t, amrmID, conns[0].TokenIdentifier)
	assert.Equal(t, amrmID2, conns[len(conns)-1].TokenIdentifier, "connections after the roll use the new token")
	nmConns := f.NM.Connections()
	require.NotEmpty(t, nmConns)
	assert.Equal(t, nmTokID, nmConns[0].TokenIdentifier, "NMs are reached with the node's NMToken")
	assert.Equal(t, "TOKEN", nmConns[0].Auth)
}

func TestLoopServiceReplacesExitedAndKillDeletesStaging(t *testing.T) {
	f := newFakeCluster(t)
	spec := gpuSpec(1, 3)
	spec.Mode = decision.Service
	m, st := f.newAM(t, spec)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan decision.Outcome, 1)
	go func() { out, _ := m.Run(ctx); done <- out }()
	require.Eventually(t, func() bool { f.Mu.Lock(); defer f.Mu.Unlock(); return len(f.Started) >= 3 }, 10*time.Second, 5*time.Millisecond,
		"a service replaces TaskExecutors that exit 0")
	cancel()
	out := <-done
	assert.Equal(t, contract.Killed, out.Status)
	assert.Equal(t, 1, st.deleted, "SIGTERM (application killed) deletes the staging directory")
}

func TestLoopLaunchFailureIsReleasedAndReplaced(t *testing.T) {
	f := newFakeCluster(t)
	f.RefuseStarts = 1
	m, _ := f.newAM(t, gpuSpec(2, 1))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status)
	f.Mu.Lock()
	defer f.Mu.Unlock()
	assert.Len(t, f.Started, 2)
	require.Len(t, f.Released, 1, "the container the NM refused is given back")
	s := m.Status()
	require.Len(t, s.Containers, 3)
	var refused []contract.ContainerStatus
	for _, c := range s.Containers {
		if c.ExitClass == contract.ExitLaunchFailed {
			refused = append(refused, c)
		}
	}
	require.Len(t, refused, 1)
	assert.Equal(t, f.Released[0], refused[0].ID)
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
	f.Mu.Lock()
	defer f.Mu.Unlock()
	assert.Len(t, f.Started, 2000)
	assert.Empty(t, f.Released)
	assert.Empty(t, f.RespIDErrors)
	t.Logf("2000 TaskExecutors through the fake RM/NM in %v (%d heartbeats)", time.Since(start).Round(time.Millisecond), f.Allocates)
}

func TestLoopLogsNoSecrets(t *testing.T) {
	var buf bytes.Buffer
	log := logrus.New()
	log.SetOutput(&buf)
	log.SetLevel(logrus.DebugLevel)
	f := newFakeCluster(t)
	f.RollTokenAt = 1
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
	f.Maximum = resourceProto(contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4})
	spec := gpuSpec(1, 1)
	spec.Capability["yarn.io/gpu"] = 5
	m, st := f.newAM(t, spec)
	out := run(t, m)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "allocation rejected: yarn.io/gpu = 5, but the cluster allows at most 4 yarn.io/gpu per container")
	f.Mu.Lock()
	defer f.Mu.Unlock()
	assert.Zero(t, f.Allocates, "nothing is asked")
	require.NotNil(t, f.FinishReq)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_FAILED, f.FinishReq.GetFinalApplicationStatus())
	assert.Equal(t, 1, st.deleted)
}

func TestLoopFailsWhenTheRMRejectsTheAsk(t *testing.T) {
	f := newFakeCluster(t)
	f.RejectAsks = true
	m, _ := f.newAM(t, gpuSpec(1, 1))
	out := run(t, m)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "the ResourceManager rejected the TaskExecutor request (memory-mb=512 vcores=1 yarn.io/gpu=1)")
	assert.Contains(t, out.Diagnostics, "InvalidResourceRequestException")
}
