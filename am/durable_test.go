package am

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

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
		return nil, errNoState
	}
	return append([]byte{}, m.data...), nil
}

func (m *memState) SaveState(_ context.Context, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data, m.saves = append([]byte{}, data...), m.saves+1
	return nil
}

func TestStateIsBoundedAndKeepsTheNewestEvents(t *testing.T) {
	s := state{Version: stateVersion, Instances: 4, Infos: map[string]info{}}
	for i := 0; i < 2000; i++ {
		s.Events = append(s.Events, contract.Event{ID: uint64(i + 1), Type: contract.EventLaunched, Message: fmt.Sprintf("container %d launched on a node with a long name", i)})
	}
	data, err := encodeState(s)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(data), maxStateBytes)
	back, err := decodeState(data)
	require.NoError(t, err)
	require.NotEmpty(t, back.Events)
	assert.EqualValues(t, 2000, back.Events[len(back.Events)-1].ID, "the newest events are kept")
	assert.Equal(t, 4, back.Instances)

	other, _ := json.Marshal(state{Version: stateVersion + 1})
	st, err := decodeState(other)
	require.NoError(t, err)
	assert.Nil(t, st, "a state of another layout is ignored")
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
	prev := state{Version: stateVersion, Attempt: "appattempt_1700000000000_0007_000001", Instances: 3, Completed: 1, Succeeded: 1,
		Infos:  map[string]info{"container_1700000000000_0007_01_000002": {"gpu": {{"index": "1"}}}},
		Events: []contract.Event{{Type: contract.EventLaunched, Message: "container_1700000000000_0007_01_000002 launched"}}}
	store.data, _ = encodeState(prev)

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
	s, err := decodeState(data)
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
