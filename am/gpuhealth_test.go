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
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// sickSample is a liveness message whose one sample reads uuid sick (field=value, its values readable).
func sickSample(uuid, sick string) contract.AliveReport {
	u := 97.0
	return contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{{UUID: uuid, Util: &u, MemTotalMiB: 143771, Sick: sick}}}}}
}

// giveGPU books uuid as the GPU t's launcher reported.
func giveGPU(m *am, t *book.Container, uuid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t.Infos = map[string][]resources.Info{"gpu": {{contract.InfoIndex: "0", contract.InfoUUID: uuid}}}
}

// TestSickGPUEndsTheContainerAndTheLoopReplacesIt: a sample that reads a running TaskExecutor's GPU
// unhealthy ends that container (released, aborted, not a failure) with a gpu-unhealthy event naming
// the GPU, its node and the field; the loop asks for a replacement at once; a healthy sample of the
// other container changes nothing.
func TestSickGPUEndsTheContainerAndTheLoopReplacesIt(t *testing.T) {
	c := fakecluster.InProcess()
	c.KeepRunning = true
	m, err := newAM(config{App: "application_1700000000000_0008", Spec: gpuSpec(2, 0), Policy: noFailurePolicy, SickGPUsPerNode: 2,
		HeartbeatFast: time.Millisecond, HeartbeatSlow: 2 * time.Millisecond,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: c.InProcessScheduler(), NM: c.InProcessNM(), Log: quietLog})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _, _ = m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, func() bool { return m.Status().Counts.Running == 2 }, 10*time.Second, time.Millisecond)

	m.mu.Lock()
	a, b := m.rec.All()[0], m.rec.All()[1]
	m.mu.Unlock()
	giveGPU(m, a, "GPU-a")
	giveGPU(m, b, "GPU-b")
	require.NoError(t, m.GPUSamples(b.ID, sickSample("GPU-b", "")))
	assert.Empty(t, eventsOfType(m, contract.EventGPUUnhealthy), "a healthy GPU")
	require.NoError(t, m.GPUSamples(a.ID, sickSample("GPU-a", "ecc.errors.uncorrected.volatile.total=2")))

	evs := eventsOfType(m, contract.EventGPUUnhealthy)
	require.Len(t, evs, 1)
	e := evs[0]
	assert.Equal(t, a.ID, e.Container)
	assert.Equal(t, a.Node, e.Node)
	assert.Equal(t, "GPU-a", e.Reason)
	assert.Equal(t, contract.SeverityWarning, e.Severity)
	assert.Contains(t, e.Message, "ecc.errors.uncorrected.volatile.total=2")
	assert.Contains(t, e.Message, "not counted as a failure")
	require.Eventually(t, func() bool { return m.Status().Counts.Running == 2 && m.Status().Counts.Completed == 1 }, 10*time.Second, time.Millisecond, "a replacement runs")
	m.mu.Lock()
	assert.Equal(t, contract.ExitAborted, a.Exit.Class)
	assert.False(t, a.Exit.Class.Counts(), "a sick GPU is not the worker's failure")
	assert.Contains(t, a.Exit.Diagnostics, "GPU 0 (GPU-a)")
	m.mu.Unlock()
	assert.Zero(t, m.Status().Counts.Failed)
	c.Mu.Lock()
	assert.Equal(t, []string{a.ID}, c.Released, "the sick GPU's container was released")
	assert.Equal(t, 3, c.StartedN, "two TaskExecutors and a replacement")
	c.Mu.Unlock()

	// A late sample of the ended container changes nothing: one event, one replacement.
	require.NoError(t, m.GPUSamples(a.ID, sickSample("GPU-a", "remapped_rows.failure=Yes")))
	assert.Len(t, eventsOfType(m, contract.EventGPUUnhealthy), 1)
}

// TestSickGPUsExcludeTheNodeAtTheLimit: the first sick GPU of a node ends its container only; the
// second (taskexecutor.sick-gpus-per-node = 2) excludes the node as the failure policy excludes a
// failing one, with its timeout; the same GPU read sick twice counts once; a lost GPU is sick too;
// 0 never excludes.
func TestSickGPUsExcludeTheNodeAtTheLimit(t *testing.T) {
	for _, k := range []int{2, 0} {
		m, _, _, c := livenessAM(t)
		m.cfg.SickGPUsPerNode = k
		m.policy = decision.NewPolicy(decision.PolicyConfig{MaxFailureRate: -1, NodeMaxFailures: 3, FailureWindow: time.Hour,
			NodeExclusionTimeout: time.Hour, RestartBackoff: time.Nanosecond, RestartBackoffMax: time.Nanosecond})
		t1 := running(t, m, c, 2, "node-a:8041")
		t2 := running(t, m, c, 3, "node-a:8041")
		t3 := running(t, m, c, 4, "node-a:8041")
		giveGPU(m, t1, "GPU-1")
		giveGPU(m, t2, "GPU-1") // a replacement that got the same GPU (before the claims kept it out)
		giveGPU(m, t3, "GPU-2")
		require.NoError(t, m.GPUSamples(t1.ID, sickSample("GPU-1", "clocks_event_reasons.hw_slowdown=Active")))
		require.NoError(t, m.GPUSamples(t2.ID, sickSample("GPU-1", "clocks_event_reasons.hw_slowdown=Active")))
		assert.False(t, m.policy.IsExcluded("node-a:8041"), "one sick GPU, read twice")
		lost := contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{{UUID: "GPU-2", Problem: `utilization.gpu: the tool reports "[GPU is lost]"`, Sick: "utilization.gpu=[GPU is lost]"}}}}}
		require.NoError(t, m.GPUSamples(t3.ID, lost))
		assert.Equal(t, contract.Completed, phase(m, t3))
		evs := eventsOfType(m, contract.EventGPUUnhealthy)
		require.Len(t, evs, 3)
		assert.Contains(t, evs[2].Message, "[GPU is lost]")
		assert.Equal(t, 2, evs[2].Count, "the node's second sick GPU")
		excluded := eventsOfType(m, contract.EventNodeExcluded)
		if k == 0 {
			assert.False(t, m.policy.IsExcluded("node-a:8041"), "sick-gpus-per-node = 0 never excludes")
			assert.Empty(t, excluded)
			continue
		}
		assert.True(t, m.policy.IsExcluded("node-a:8041"), "two sick GPUs")
		add, _ := m.book.Excl.Next()
		assert.Equal(t, []string{"node-a:8041"}, add, "the blacklist addition is queued")
		require.Len(t, excluded, 1)
		assert.Equal(t, "taskexecutor.sick-gpus-per-node", excluded[0].Key)
		assert.Contains(t, excluded[0].Message, "2 of its GPUs read unhealthy")
	}
}

// TestSickGPURankRestartsTheGangRound: a gang rank whose GPU reads unhealthy ends as aborted, which
// ends its round at once: the other rank stops and the whole gang is asked for again.
func TestSickGPURankRestartsTheGangRound(t *testing.T) {
	m, _, _, c := livenessAM(t)
	m.cfg.Spec.Gang = true
	a := running(t, m, c, 2, "node-a:8041")
	b := running(t, m, c, 3, "node-b:8041")
	giveGPU(m, a, "GPU-a")
	require.NoError(t, m.GPUSamples(a.ID, sickSample("GPU-a", "remapped_rows.pending=Yes")))
	require.Equal(t, contract.Completed, phase(m, a))
	require.Equal(t, contract.Running, phase(m, b))
	m.mu.Lock()
	plan := decision.Reconcile(m.book.Want.Spec(m.cfg.Spec), m.observedLocked(m.cfg.Now()))
	m.mu.Unlock()
	assert.True(t, plan.NewRound, "the sick GPU's rank ends the round")
	require.Len(t, plan.Stop, 1)
	assert.Equal(t, b.ID, plan.Stop[0].ID, "the other rank stops")
}
