package am

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

type memState struct {
	mu    sync.Mutex
	data  []byte
	saves int
}

func (m *memState) LoadState(context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data == nil {
		return nil, book.ErrNoState
	}
	return append([]byte{}, m.data...), nil
}

func (m *memState) SaveState(_ context.Context, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data, m.saves = append([]byte{}, data...), m.saves+1
	return nil
}

func TestPolicyMemorySurvivesARestart(t *testing.T) {
	now := time.Unix(1700000000, 0)
	p := decision.NewPolicy(decision.PolicyConfig{NodeMaxFailures: 2, NodeExclusionTimeout: time.Hour})
	p.RecordExit(now, "n1:1", contract.ExitFailed)
	d := p.RecordExit(now.Add(time.Second), "n1:1", contract.ExitFailed)
	require.Equal(t, "n1:1", d.ExcludeNode)
	data, err := json.Marshal(p.Snapshot())
	require.NoError(t, err)
	var snap decision.PolicyState
	require.NoError(t, json.Unmarshal(data, &snap))
	q := decision.NewPolicy(decision.PolicyConfig{NodeMaxFailures: 2, NodeExclusionTimeout: time.Hour})
	q.Restore(snap)
	assert.Equal(t, []string{"n1:1"}, q.Excluded())
	assert.True(t, p.RestartAt(now.Add(2*time.Second)).Equal(q.RestartAt(now.Add(2*time.Second))), "the restart backoff carries over")
}

// TestLoopAdoptsThePreviousAttempt: the register response hands over two running containers and the
// saved state says one more already succeeded and the driver declared 3: the new attempt launches
// nothing, finishes when the two adopted ones exit 0, and counts 3 completions.
func TestLoopAdoptsThePreviousAttempt(t *testing.T) {
	f := newFakeCluster(t)
	att1 := &hadooppb.ApplicationAttemptIdProto{ApplicationId: f.App, AttemptId: proto.Int32(1)}
	for i := int64(2); i <= 3; i++ {
		f.Previous = append(f.Previous, &hadooppb.ContainerProto{Id: &hadooppb.ContainerIdProto{AppId: f.App, AppAttemptId: att1, Id: proto.Int64(i)},
			NodeId: f.Node, Resource: &hadooppb.ResourceProto{Memory: proto.Int64(512), VirtualCores: proto.Int32(1),
				ResourceValueMap: []*hadooppb.ResourceInformationProto{{Key: proto.String("yarn.io/gpu"), Value: proto.Int64(1)}}}})
	}
	f.NextCID = 10
	store := &memState{}
	prev := book.State{Version: book.StateVersion, Attempt: "appattempt_1700000000000_0007_000001", Instances: 3, Completed: 1, Succeeded: 1,
		Infos:  map[string]book.Infos{"container_1700000000000_0007_01_000002": {"gpu": {{"index": "1"}}}},
		Events: []contract.Event{{Type: contract.EventLaunched, Message: "container_1700000000000_0007_01_000002 launched"}}}
	store.data, _ = book.EncodeState(prev)

	m, st := f.newAM(t, gpuSpec(2, 3))
	m.cfg.State, m.cfg.Attempt = store, "appattempt_1700000000000_0007_000002"
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status, out.Diagnostics)
	f.Mu.Lock()
	assert.Empty(t, f.Started, "nothing is launched twice")
	assert.Empty(t, f.AskLog, "nothing is asked for: 2 adopted + 1 succeeded = 3 declared")
	f.Mu.Unlock()
	s := m.Status()
	assert.Equal(t, 3, s.Counts.Completed)
	assert.Equal(t, 3, s.Requirement.Instances, "the driver's requirement carries over")
	var restarted, oldEvent bool
	for _, e := range s.Events {
		restarted = restarted || e.Type == contract.EventAMRestarted
		oldEvent = oldEvent || e.Message == "container_1700000000000_0007_01_000002 launched"
	}
	assert.True(t, restarted)
	assert.True(t, oldEvent, "the earlier attempt's events are in the history")
	assert.Equal(t, 1, st.deleted)
}

// TestLoopSavesItsState: a running AM saves what a later attempt needs.
func TestLoopSavesItsState(t *testing.T) {
	f := newFakeCluster(t)
	f.ExitCode = func(int) int32 { return 0 }
	store := &memState{}
	m, _ := f.newAM(t, gpuSpec(2, 3))
	m.cfg.State = store
	ctx, cancel := context.WithCancel(context.Background())
	m.cfg.KeepStagingOnKill = true
	spec := m.cfg.Spec
	spec.Mode = decision.Service
	m.cfg.Spec = spec
	done := make(chan struct{})
	go func() { _, _ = m.Run(ctx); close(done) }()
	require.Eventually(t, func() bool { f.Mu.Lock(); defer f.Mu.Unlock(); return len(f.Started) >= 3 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	<-done
	data, err := store.LoadState(context.Background())
	require.NoError(t, err)
	s, err := book.DecodeState(data)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, s.Completed, 1)
	assert.Equal(t, 2, s.Instances)
	assert.NotEmpty(t, s.Events)
}

// TestLoopIgnoresAContainerTheRMReportsAgain: after a work-preserving RM restart the RM may hand out
// an allocation the AM already took; it must not be launched a second time.
func TestLoopIgnoresAContainerTheRMReportsAgain(t *testing.T) {
	f := newFakeCluster(t)
	f.RepeatAllocations, f.RunHeartbeats = true, 5
	m, _ := f.newAM(t, gpuSpec(2, 3))
	out := run(t, m)
	assert.Equal(t, contract.Succeeded, out.Status, out.Diagnostics)
	f.Mu.Lock()
	defer f.Mu.Unlock()
	assert.Len(t, f.Started, 2, "each container is started once: %v", f.Started)
	for _, r := range f.Released {
		assert.NotContains(t, f.Started, r, "a running container is never released as excess")
	}
}

// TestSickGPUsAndGivenBackGPUTimeSurviveARestart: a node's sick GPU and the GPU time given back for
// idleness under the first attempt carry over: one more sick GPU on that node under the second
// attempt reaches taskexecutor.sick-gpus-per-node = 2 and excludes it, and the GPU-hours given back
// go on counting from the first attempt's.
func TestSickGPUsAndGivenBackGPUTimeSurviveARestart(t *testing.T) {
	store := &memState{}
	m1, clock1, _, c1 := livenessAM(t)
	m1.cfg.SickGPUsPerNode, m1.cfg.State = 2, store
	t1 := running(t, m1, c1, 2, "node-a:8041")
	giveGPU(m1, t1, "GPU-1")
	require.NoError(t, m1.GPUSamples(t1.ID, sickSample("GPU-1", "clocks_event_reasons.hw_slowdown=Active")))
	m1.mu.Lock()
	m1.book.Idle.Given(1, clock1.Now())
	m1.mu.Unlock()
	clock1.Add(time.Hour)
	m1.saveState(context.Background())
	assert.False(t, m1.policy.IsExcluded("node-a:8041"), "one sick GPU of 2")

	m2, clock2, _, c2 := livenessAM(t)
	m2.cfg.SickGPUsPerNode, m2.cfg.State, m2.cfg.Attempt = 2, store, "appattempt_1700000000000_0007_000002"
	clock2.t = clock1.Now()
	m2.policy = decision.NewPolicy(decision.PolicyConfig{MaxFailureRate: -1, NodeMaxFailures: 3, FailureWindow: time.Hour,
		NodeExclusionTimeout: time.Hour, RestartBackoff: time.Nanosecond, RestartBackoffMax: time.Nanosecond})
	m2.adopt(context.Background(), &hadooppb.RegisterApplicationMasterResponseProto{})
	m2.mu.Lock()
	hours := m2.book.Idle.Hours(clock2.Now())
	m2.mu.Unlock()
	assert.InDelta(t, 1.0, hours, 0.01, "the first attempt's GPU-hour given back")
	t2 := running(t, m2, c2, 3, "node-a:8041")
	giveGPU(m2, t2, "GPU-2")
	require.NoError(t, m2.GPUSamples(t2.ID, sickSample("GPU-2", "clocks_event_reasons.hw_slowdown=Active")))
	assert.True(t, m2.policy.IsExcluded("node-a:8041"), "GPU-1 under attempt 1 and GPU-2 under attempt 2")
	evs := eventsOfType(m2, contract.EventGPUUnhealthy)
	require.NotEmpty(t, evs)
	assert.Equal(t, 2, evs[len(evs)-1].Count, "the node's second sick GPU, counting the first attempt's")
}
