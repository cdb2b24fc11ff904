package am

import (
	"context"
	"math"
	"runtime"
	rtmetrics "runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// noFailurePolicy turns off the failure policy's rate limit, node exclusion and restart backoff, so
// that only taskexecutor.max-failures (Reconcile) judges failures.
var noFailurePolicy = decision.PolicyConfig{MaxFailureRate: -1, NodeMaxFailures: -1, FailureWindow: time.Nanosecond,
	RestartBackoff: time.Nanosecond, RestartBackoffMax: time.Nanosecond}

// finishedListed counts the finished containers a status lists.
func finishedListed(s contract.Status) int {
	n := 0
	for _, c := range s.Containers {
		if c.State == contract.Completed {
			n++
		}
	}
	return n
}

func TestLoopServiceKeepsTheLatestFinishedContainersOnly(t *testing.T) {
	const total, history = 5000, 100
	f := newFakeCluster(t)
	f.MaxAllocations = total
	failing := func(n int) bool { return n%7 == 3 }
	f.ExitCode = func(n int) int32 {
		if failing(n) {
			return 3
		}
		return 0
	}
	spec := gpuSpec(50, total) // max-failures above what can fail: the service runs on
	spec.Mode = decision.Service
	m, _ := f.newAM(t, spec)
	m.cfg.FinishedHistory, m.rec = history, book.NewRecords(history, m.cfg.Now)
	m.policy = decision.NewPolicy(noFailurePolicy)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan decision.Outcome, 1)
	go func() { out, _ := m.Run(ctx); done <- out }()

	maxListed, maxRecords := 0, 0
	require.Eventually(t, func() bool {
		s := m.Status()
		maxListed = max(maxListed, finishedListed(s))
		m.mu.Lock()
		records := len(m.rec.Finished())
		m.mu.Unlock()
		maxRecords = max(maxRecords, records)
		return s.Counts.Completed == total
	}, 60*time.Second, 2*time.Millisecond, "every container the fake RM granted finishes")
	s := m.Status()
	cancel()
	assert.Equal(t, contract.Killed, (<-done).Status)

	wantFailed := 0
	for n := 0; n < total; n++ {
		if failing(n) {
			wantFailed++
		}
	}
	assert.Equal(t, total, s.Counts.Completed, "the count of finished containers is exact")
	assert.Equal(t, wantFailed, s.Counts.Failed, "the count of failed containers is exact")
	assert.Equal(t, history, finishedListed(s), "the latest --finished-history finished containers are listed")
	assert.Equal(t, total-history, s.FinishedNotListed)
	assert.LessOrEqual(t, maxListed, history, "never more finished containers listed than --finished-history")
	assert.LessOrEqual(t, maxRecords, history, "never more finished containers recorded than --finished-history")
	m.mu.Lock()
	assert.LessOrEqual(t, len(m.rec.All()), history+spec.Instances)
	assert.Equal(t, total-history, m.rec.Forgotten().Succeeded+m.rec.Forgotten().Failed)
	for _, tr := range m.rec.All() {
		assert.Nil(t, tr.Token, "a started container's token is dropped")
	}
	m.mu.Unlock()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	assert.Len(t, f.Started, total)
	latest := map[string]bool{}
	for _, id := range f.Started[total-2*history:] { // finished in batches of a heartbeat, in any order within one
		latest[id] = true
	}
	for _, c := range s.Containers {
		assert.True(t, latest[c.ID], "%s is one of the latest containers", c.ID)
	}
}

func TestLoopFailureLimitCountsForgottenFailures(t *testing.T) {
	f := newFakeCluster(t)
	f.ExitCode = func(int) int32 { return 3 }
	spec := gpuSpec(2, 20)
	spec.Mode = decision.Service
	m, _ := f.newAM(t, spec)
	m.cfg.FinishedHistory, m.rec = 2, book.NewRecords(2, m.cfg.Now)
	m.policy = decision.NewPolicy(noFailurePolicy)
	out := run(t, m)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Regexp(t, `^2[12] TaskExecutors failed, more than taskexecutor.max-failures = 20 allows \(exit code 3 ×2[12]\)`, out.Diagnostics,
		"failures whose records were dropped still count (two run at once: the 21st and 22nd can end together)")
	s := m.Status()
	assert.GreaterOrEqual(t, s.Counts.Failed, 21)
	assert.Equal(t, s.Counts.Failed, s.Counts.Completed)
	assert.LessOrEqual(t, finishedListed(s), 2)
}

func TestReconcileCountsForgottenContainers(t *testing.T) {
	failed := decision.Container{ID: "c9", Node: "n1:1", Phase: contract.Completed, Exit: decision.Exit{Status: 3, Class: contract.ExitFailed}}
	spec := decision.Spec{Instances: 1, Capability: te, MaxFailures: 3, Mode: decision.Service}
	obs := decision.Observed{Containers: []decision.Container{failed}, NextAskID: 1,
		Forgotten: decision.Forgotten{Succeeded: 40, Failed: 3, FailedExits: map[int32]int{3: 2, 1: 1}}}
	p := decision.Reconcile(spec, obs)
	assert.True(t, p.LimitReached)
	assert.Equal(t, 4, p.FailureCount)
	require.NotNil(t, p.Done)
	assert.Contains(t, p.Done.Diagnostics, "4 TaskExecutors failed, more than taskexecutor.max-failures = 3 allows (exit code 1 ×1, exit code 3 ×3)\n- c9 on n1:1")
	assert.Empty(t, p.Send, "nothing more is asked for")

	obs.Forgotten.Failed, obs.Forgotten.FailedExits = 2, map[int32]int{3: 2}
	p = decision.Reconcile(spec, obs)
	assert.False(t, p.LimitReached, "3 failures, 3 allowed")
	assert.Equal(t, []decision.AskUpdate{{ID: 1, Count: 1}}, p.Send, "a service replaces its TaskExecutor whatever succeeded before")

	batch := decision.Spec{Instances: 5, Capability: te, MaxFailures: 3}
	p = decision.Reconcile(batch, decision.Observed{NextAskID: 1, Forgotten: decision.Forgotten{Succeeded: 3}})
	assert.Equal(t, []decision.AskUpdate{{ID: 1, Count: 2}}, p.Send, "batch: the forgotten successes are done")
	p = decision.Reconcile(batch, decision.Observed{NextAskID: 1, Containers: []decision.Container{{ID: "c1", Phase: contract.Completed, Exit: decision.Exit{Class: contract.ExitSucceeded}}},
		Forgotten: decision.Forgotten{Succeeded: 4}})
	require.NotNil(t, p.Done)
	assert.Equal(t, contract.Succeeded, p.Done.Status)
}

func TestNewRejectsANegativeFinishedHistory(t *testing.T) {
	_, err := newAM(config{FinishedHistory: -1, LaunchContext: &hadooppb.ContainerLaunchContextProto{}, RM: nopRM{}, NM: nopNM{}, Log: quietLog})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--finished-history")
	assert.Contains(t, err.Error(), "-1")
	m, err := newAM(config{LaunchContext: &hadooppb.ContainerLaunchContextProto{}, RM: nopRM{}, NM: nopNM{}, Log: quietLog})
	require.NoError(t, err)
	assert.Equal(t, DefaultFinishedHistory, m.cfg.FinishedHistory)
}

// churnCluster is the tests' fake cluster (testkit/fakecluster), in process, for a service whose
// TaskExecutors end as soon as they start: every allocate grants what is asked (up to a limit of
// containers in all) and completes every container started since the previous one. It keeps nothing
// per container (Lean), so the heap it adds does not grow with the containers it ran; its container
// tokens are of a real one's size (~1 KB), which the AM must not keep.
type churnCluster struct{ *fakecluster.Cluster }

func newChurnCluster() churnCluster {
	c := fakecluster.InProcess()
	c.Lean, c.TokenSize = true, 1024
	return churnCluster{c}
}

func (c churnCluster) setLimit(n int) { c.Mu.Lock(); c.MaxAllocations = n; c.Mu.Unlock() }

// liveHeap is the heap a full collection finds live, the least of five: the AM's loop keeps running
// (nanosecond heartbeats) while it is measured, and what one of its heartbeats holds at the moment of
// a collection (the response, the request, timers) is not what the records keep. (MemStats.HeapAlloc
// read after a GC would also count what the loop allocated since the collection ended.)
func liveHeap() uint64 {
	least := uint64(math.MaxUint64)
	for range 5 {
		runtime.GC()
		s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
		rtmetrics.Read(s)
		least = min(least, s[0].Value.Uint64())
	}
	return least
}

// TestServiceMemoryPerCompletedContainerIsFlat runs a service through 25,000 TaskExecutors that end
// as soon as they start and measures the live heap: past the first --finished-history containers (and
// the event log's capacity) it must not grow with every container (it did by ~1.8 KB each when every
// record was kept).
func TestServiceMemoryPerCompletedContainerIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 25,000 containers")
	}
	const warm, more = 5_000, 20_000
	c := newChurnCluster()
	c.setLimit(warm)
	m, err := newAM(config{App: "application_1700000000000_0009", Host: "127.0.0.1", RPCPort: 1, TrackingURL: "http://127.0.0.1:1/",
		Spec:          decision.Spec{Instances: 500, Mode: decision.Service, Capability: contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": 1}},
		HeartbeatFast: time.Nanosecond, HeartbeatSlow: time.Millisecond, Policy: noFailurePolicy,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: c.InProcessScheduler(), NM: c.InProcessNM(), Log: quietLog})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _, _ = m.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// finished waits until n containers have finished: the cluster grants no more, so the AM is idle
	// (heartbeating with its asks outstanding) when the heap is measured.
	finished := func(n int) {
		t.Helper()
		require.Eventually(t, func() bool { return m.Status().Counts.Completed == n }, 5*time.Minute, 20*time.Millisecond)
	}
	finished(warm)
	before := liveHeap()
	c.setLimit(warm + more)
	finished(warm + more)
	after := liveHeap()

	perContainer := (float64(after) - float64(before)) / more
	t.Logf("live heap %.1f MiB after %d containers, %.1f MiB after %d: %.1f bytes per further container",
		float64(before)/(1<<20), warm, float64(after)/(1<<20), warm+more, perContainer)
	// Keeping every record costs 761 B per container (1.8 KB with the tokens); the heap measured at two
	// idle points still differs by up to ~2 MB (±100 B per container here) under -race on a busy machine.
	assert.Less(t, perContainer, 200.0, "the live heap does not grow with every finished container")
	s := m.Status()
	assert.Equal(t, warm+more, s.Counts.Completed)
	assert.Equal(t, DefaultFinishedHistory, finishedListed(s))
	assert.Equal(t, warm+more-DefaultFinishedHistory, s.FinishedNotListed)
}
