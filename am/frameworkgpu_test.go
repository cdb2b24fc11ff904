package am

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// The framework reads a TaskExecutor's latest GPU utilisation as a fraction, the mean over its
// GPUs that reported one (framework.AMStart.GPUUtilisation, a Flink autoscaler's GPU signal);
// a container without a sample, or not the AM's, has none.
func TestGPUUtilisationForTheFramework(t *testing.T) {
	c := fakecluster.InProcess()
	c.KeepRunning = true
	m, err := newAM(config{App: "application_1700000000000_0009", Spec: gpuSpec(2, 0), Policy: noFailurePolicy,
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
	_, ok := m.GPUUtilisation(a.ID)
	assert.False(t, ok, "no sample yet")
	m.mu.Lock()
	a.Infos = map[string][]resources.Info{"gpu": {{contract.InfoIndex: "0", contract.InfoUUID: "GPU-a"}, {contract.InfoIndex: "1", contract.InfoUUID: "GPU-a2"}}}
	m.mu.Unlock()
	u1, u2 := 90.0, 100.0
	require.NoError(t, m.GPUSamples(a.ID, contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{
		{UUID: "GPU-a", Util: &u1, MemTotalMiB: 143771}, {UUID: "GPU-a2", Util: &u2, MemTotalMiB: 143771}}}}}))
	got, ok := m.GPUUtilisation(a.ID)
	require.True(t, ok)
	assert.InDelta(t, 0.95, got, 1e-9)
	_, ok = m.GPUUtilisation(b.ID)
	assert.False(t, ok, "the other container sent none")
	_, ok = m.GPUUtilisation("container_1700000000000_0009_01_000099")
	assert.False(t, ok, "not one of the AM's")
}
