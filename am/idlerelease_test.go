package am

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// idleAM runs an AM of spec with taskexecutor.idle-gpu-release = 20s, samples every 5 s and a
// preemption wait of 10 s, on the in-process cluster and a fake clock, until the test ends.
func idleAM(t *testing.T, spec decision.Spec, maxAllocations int, opts ...func(*config)) (*am, *testClock, *fakecluster.Cluster) {
	t.Helper()
	c := fakecluster.InProcess()
	c.KeepRunning = true
	c.MaxAllocations = maxAllocations
	clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	spec.MaxFailures = 0
	cfg := config{App: "application_1700000000000_0044", Spec: spec, Now: clock.Now, Policy: noFailurePolicy,
		GangTimeout: time.Hour, ElasticInterval: time.Hour, HeartbeatFast: time.Millisecond, HeartbeatSlow: 2 * time.Millisecond,
		GPUSampleInterval: 5 * time.Second, IdleGPURelease: 20 * time.Second, PreemptionWait: 10 * time.Second,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: c.InProcessScheduler(), NM: c.InProcessNM(), Log: quietLog}
	for _, o := range opts {
		o(&cfg)
	}
	m, err := newAM(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _, _ = m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return m, clock, c
}

// runningIDs waits for n running TaskExecutors and has each report one GPU, "GPU-<id>", as its
// launcher does; it returns their ids in the order the AM accepted them.
func runningIDs(t *testing.T, m *am, n int) []string {
	t.Helper()
	var ids []string
	require.Eventually(t, func() bool {
		ids = ids[:0]
		for _, c := range m.Status().Containers {
			if c.State == contract.Running {
				ids = append(ids, c.ID)
			}
		}
		return len(ids) == n
	}, 10*time.Second, time.Millisecond, "%d running", n)
	for _, id := range ids {
		require.NoError(t, m.Report(id, contract.ContainerReport{Infos: map[string][]contract.Info{"gpu": {{contract.InfoIndex: "0", contract.InfoUUID: "GPU-" + id}}}}))
	}
	return ids
}

// sample feeds id's launcher's message of one sample, its GPU at util, taken now.
func sample(t *testing.T, m *am, id string, util float64) {
	t.Helper()
	require.NoError(t, m.GPUSamples(id, contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{
		{UUID: "GPU-" + id, Util: &util, MemTotalMiB: 81920}}}}}))
}

func idleEvents(m *am) []contract.Event {
	var out []contract.Event
	for _, e := range m.events.Latest(500) {
		switch e.Type {
		case contract.EventIdleGPURelease, contract.EventIdleGPUReleased, contract.EventIdleGPUKept:
			out = append(out, e)
		}
	}
	return out
}

func eventTypes(evs []contract.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Type)+" "+e.Container)
	}
	return out
}

// TestIdleGPUReleaseShrinksAnElasticGangToItsMinimum: an elastic gang of 3 (min 2) where one rank's
// GPU reads 0 % while the others' are busy. A busy blip restarts the spell; after 20 s all idle the
// round's 3 ranks are warned (notices with the idle rank named and the reason); at the deadline, not
// before, the AM releases it: the count goes to 2, the gang restarts at 2, nothing is replaced or
// counted as failed, and the GPU-hours given back grow with the clock. In the new round, at the
// minimum, an idle rank is kept with one event per idle spell.
func TestIdleGPUReleaseShrinksAnElasticGangToItsMinimum(t *testing.T) {
	m, clock, c := idleAM(t, elasticSpec(3, 2), 3)
	gangNow(t, m, "round 0 formed at 3", func(g contract.GangStatus) bool { return g.Formed && g.Size == 3 })
	ids := runningIDs(t, m, 3)
	idle, busy := ids[1], []string{ids[0], ids[2]}
	tick := func(idleUtil float64) {
		sample(t, m, idle, idleUtil)
		for _, id := range busy {
			sample(t, m, id, 90)
		}
		clock.Add(5 * time.Second)
	}
	for range 4 { // 0 %, 0 s to 15 s
		tick(0)
	}
	tick(30) // a busy blip at 20 s ends the spell
	for range 4 {
		tick(0) // 25 s to 40 s: 15 s idle
	}
	assert.Empty(t, idleEvents(m), "no spell of 20 s yet")
	tick(0.5) // 45 s: 20 s under 5 %
	evs := idleEvents(m)
	require.Len(t, evs, 1, "%v", eventTypes(evs))
	warned := evs[0]
	assert.Equal(t, contract.EventIdleGPURelease, warned.Type)
	assert.Equal(t, idle, warned.Container)
	assert.Equal(t, "taskexecutor.idle-gpu-release", warned.Key)
	assert.Contains(t, warned.Message, "have been idle (every sample under 5%) for 20s (taskexecutor.idle-gpu-release = 20s): the 3 ranks of its gang round are told to checkpoint")
	assert.Contains(t, warned.Message, "(from 3 TaskExecutors to 2)")
	for _, id := range ids {
		n, _, ok := m.Notice(id)
		require.True(t, ok)
		require.NotNil(t, n, "rank %s warned", id)
		assert.Equal(t, contract.NoticeIdleGPURelease, n.Reason)
		assert.Equal(t, []string{idle}, n.Containers)
		assert.Equal(t, 10*time.Second, n.Deadline.Sub(n.WarnedAt), "the preemption warning's grace")
		assert.WithinDuration(t, warned.Deadline, n.Deadline, 0)
	}

	heartbeats(t, c, 5) // 50 s: 5 s before the deadline
	assert.Equal(t, 3, m.Instances(), "not released before the deadline")
	clock.Add(5 * time.Second)
	require.Eventually(t, func() bool { return m.Instances() == 2 }, 10*time.Second, time.Millisecond, "released at the deadline")
	evs = idleEvents(m)
	require.Len(t, evs, 2, "%v", eventTypes(evs))
	assert.Equal(t, contract.EventIdleGPUReleased, evs[1].Type)
	assert.Equal(t, idle, evs[1].Container)
	assert.Contains(t, evs[1].Message, "the job runs with 2 TaskExecutors instead of 3, and the container is not replaced")
	restarted := gangEvents(m, contract.EventGangRestarted)
	require.Len(t, restarted, 1)
	assert.Contains(t, restarted[0].Message, "gang restarts as round 1 at 2 TaskExecutors: the requirement changed to 2 TaskExecutors")
	changed := gangEvents(m, contract.EventRequirementChanged)
	require.Len(t, changed, 1)
	assert.Contains(t, changed[0].Message, "from 3 to 2 (idle-gpu-release)")

	c.Mu.Lock()
	c.MaxAllocations = 10
	c.Mu.Unlock()
	g := gangNow(t, m, "round 1 formed at 2", func(g contract.GangStatus) bool { return g.Round == 1 && g.Formed })
	assert.Equal(t, 2, g.Size)
	heartbeats(t, c, 5)
	assert.Equal(t, 5, c.StartedCount(), "3 in round 0, 2 in round 1: the released one is not replaced")
	st := m.Status()
	assert.Zero(t, st.Counts.Failed, "a release is no failure")
	require.NotNil(t, st.GPUUsage)
	assert.InDelta(t, 0, st.GPUUsage.GivenBackGPUHours, 1e-9, "given back from the release on")
	clock.Add(time.Hour)
	assert.InDelta(t, 1, m.Status().GPUUsage.GivenBackGPUHours, 1e-9, "1 GPU given back for an hour")
	assert.Contains(t, m.gpuDiagnostics("done"), "1.000 GPU-hours given back (taskexecutor.idle-gpu-release)")

	// Round 1 at the minimum: an idle rank is kept, said once per idle spell.
	round1 := runningIDs(t, m, 2)
	for range 8 {
		sample(t, m, round1[0], 0)
		clock.Add(5 * time.Second)
	}
	sample(t, m, round1[0], 90)
	for range 5 {
		sample(t, m, round1[0], 0)
		clock.Add(5 * time.Second)
	}
	evs = idleEvents(m)
	require.Len(t, evs, 4, "%v", eventTypes(evs))
	for _, e := range evs[2:] {
		assert.Equal(t, contract.EventIdleGPUKept, e.Type)
		assert.Equal(t, round1[0], e.Container)
		assert.Contains(t, e.Message, "cannot be released: the elastic gang runs at its minimum, taskexecutor.min-instances = 2; it keeps its GPUs")
	}
	n, _, _ := m.Notice(round1[0])
	assert.Nil(t, n, "a kept rank is not warned")
	assert.Equal(t, 2, m.Instances())

	// The requirement going back up takes the given-back GPU back: the hours stop growing.
	before := m.Status().GPUUsage.GivenBackGPUHours
	_, err := m.SetRequirements(3, "test")
	require.NoError(t, err)
	clock.Add(time.Hour)
	assert.InDelta(t, before, m.Status().GPUUsage.GivenBackGPUHours, 1e-9)
}

// TestIdleGPUKeptByAFixedJob: a job of a fixed count (no gang), a rigid gang, and a job whose
// framework sizes it from its demand cannot give an idle container back: one idle-gpu-kept event per
// container and idle spell, no notice, the count stays.
func TestIdleGPUKeptByAFixedJob(t *testing.T) {
	for name, tc := range map[string]struct {
		spec   decision.Spec
		demand bool
		want   string
	}{
		"fixed count":  {gpuSpec(2, 0), false, "the job keeps a fixed number of TaskExecutors (2): only an elastic gang"},
		"rigid gang":   {gangSpec(2), false, "the gang has a fixed size of 2 (taskexecutor.min-instances is not below instances)"},
		"demand-sized": {gpuSpec(2, 0), true, "the job's framework sizes its TaskExecutors from its work's demand (2 now), and gives none back for idleness"},
	} {
		t.Run(name, func(t *testing.T) {
			m, clock, c := idleAM(t, tc.spec, 2, func(c *config) { c.DemandSized = tc.demand })
			ids := runningIDs(t, m, 2)
			for range 12 { // 55 s of 0 %
				for _, id := range ids {
					sample(t, m, id, 0)
				}
				clock.Add(5 * time.Second)
			}
			heartbeats(t, c, 5)
			evs := idleEvents(m)
			require.Len(t, evs, 2, "one per container: %v", eventTypes(evs))
			for _, e := range evs {
				assert.Equal(t, contract.EventIdleGPUKept, e.Type)
				assert.Contains(t, e.Message, "have been idle for 20s (taskexecutor.idle-gpu-release = 20s), but it cannot be released: "+tc.want)
				n, _, _ := m.Notice(e.Container)
				assert.Nil(t, n)
			}
			assert.ElementsMatch(t, ids, []string{evs[0].Container, evs[1].Container})
			assert.Equal(t, 2, m.Instances())
			assert.Equal(t, 2, c.StartedCount())
			assert.Zero(t, m.Status().GPUUsage.GivenBackGPUHours)
			assert.NotContains(t, m.gpuDiagnostics(""), "given back")
		})
	}
}

// TestIdleGPUReleaseOffAndMissingSamples: with the key off nothing is said however long a GPU idles;
// with it on, samples that stop (a gap of more than three intervals) start the spell again.
func TestIdleGPUReleaseOffAndMissingSamples(t *testing.T) {
	m, clock, c := idleAM(t, elasticSpec(2, 1), 2)
	m.cfg.IdleGPURelease = 0
	ids := runningIDs(t, m, 2)
	for range 20 {
		sample(t, m, ids[0], 0)
		clock.Add(5 * time.Second)
	}
	assert.Empty(t, idleEvents(m), "off")

	m2, clock2, _ := idleAM(t, elasticSpec(2, 1), 2)
	ids = runningIDs(t, m2, 2)
	for range 3 {
		sample(t, m2, ids[0], 0) // 0, 5, 10 s
		clock2.Add(5 * time.Second)
	}
	clock2.Add(11 * time.Second) // the next sample 16 s after the last: more than 3 × 5 s
	for range 4 {
		sample(t, m2, ids[0], 0) // 26, 31, 36, 41 s: 15 s since the gap
		clock2.Add(5 * time.Second)
	}
	assert.Empty(t, idleEvents(m2), "the gap started the spell again")
	sample(t, m2, ids[0], 0)
	require.Len(t, idleEvents(m2), 1, "20 s after the gap")
	heartbeats(t, c, 1)
	assert.True(t, strings.HasPrefix(idleEvents(m2)[0].Message, "the 1 GPU(s) of TaskExecutor "+ids[0]))
}

// fakeGiveBack is a demand-sized framework's GiveBack: it can shrink above one TaskExecutor, and
// records the containers Release is asked for (err: its refusal).
type fakeGiveBack struct {
	asked chan string
	err   error
}

func (f *fakeGiveBack) giveBack() *framework.GiveBack {
	return &framework.GiveBack{
		Can: func(from int) error {
			if from <= 1 {
				return errors.New("the work runs on 1 TaskExecutor, its fewest")
			}
			return nil
		},
		Release: func(_ context.Context, container string) error {
			f.asked <- container
			return f.err
		},
	}
}

// TestIdleGPUGivenBackThroughADemandSizedFramework: a job whose framework sizes it from its demand
// (a Flink job in demand mode) and gives back through its GiveBack: after 20 s idle the container is
// warned as a preemption (one release at a time), at the deadline the framework's Release is asked
// for it and nothing is stopped yet; the framework's Scale down naming it (once its work left it) is
// the release: idle-gpu-released, the requirement 2 → 1, the container's end an info release, the
// GPU-hours given back counted. At one TaskExecutor the framework's Can refuses: idle-gpu-kept with
// its reason. A Release that fails keeps the GPUs with its error.
func TestIdleGPUGivenBackThroughADemandSizedFramework(t *testing.T) {
	fb := &fakeGiveBack{asked: make(chan string, 4)}
	m, clock, c := idleAM(t, gpuSpec(2, 0), 2, func(c *config) { c.DemandSized, c.GiveBack = true, fb.giveBack() })
	c.Mu.Lock()
	c.StopCompletes = true // the stopped container's end is reported, as a NodeManager does
	c.Mu.Unlock()
	ids := runningIDs(t, m, 2)
	for range 5 { // 0 to 20 s at 0 %
		for _, id := range ids {
			sample(t, m, id, 0)
		}
		clock.Add(5 * time.Second)
	}
	evs := idleEvents(m)
	require.Len(t, evs, 1, "one release at a time: %v", eventTypes(evs))
	assert.Equal(t, contract.EventIdleGPURelease, evs[0].Type)
	idle := evs[0].Container
	n, _, _ := m.Notice(idle)
	require.NotNil(t, n, "warned as a preemption (the framework's checkpoint)")
	assert.Equal(t, contract.NoticeIdleGPURelease, n.Reason)

	clock.Add(10 * time.Second) // the deadline
	select {
	case got := <-fb.asked:
		assert.Equal(t, idle, got, "the framework is asked to give back the idle container")
	case <-time.After(10 * time.Second):
		t.Fatal("GiveBack.Release not called at the deadline")
	}
	heartbeats(t, c, 5)
	assert.Equal(t, 2, m.Instances(), "nothing stopped before the framework's work left a TaskExecutor")
	assert.Len(t, idleEvents(m), 1)

	require.NoError(t, m.Scale(1, []string{idle}, "Flink demand: 1 slots → 1 TaskManagers: "+idle+" released, Flink freed its slots"))
	evs = idleEvents(m)
	require.Len(t, evs, 2, "%v", eventTypes(evs))
	assert.Equal(t, contract.EventIdleGPUReleased, evs[1].Type)
	assert.Equal(t, idle, evs[1].Container)
	assert.Contains(t, evs[1].Message, "the job runs with 1 TaskExecutors instead of 2")
	released := waitEvent(t, m.events, 10*time.Second, func(e contract.Event) bool { return e.Type == contract.EventCompleted })
	assert.Equal(t, idle, released.Container)
	assert.Equal(t, contract.SeverityInfo, released.Severity)
	assert.Contains(t, released.Message, "released: no longer needed")
	assert.Zero(t, m.Status().Counts.Failed)
	clock.Add(time.Hour)
	assert.InDelta(t, 1, m.Status().GPUUsage.GivenBackGPUHours, 1e-9, "1 GPU given back for an hour")

	// At one TaskExecutor the framework cannot shrink: the last one keeps its GPU.
	other := ids[0]
	if other == idle {
		other = ids[1]
	}
	for range 6 {
		sample(t, m, other, 0)
		clock.Add(5 * time.Second)
	}
	heartbeats(t, c, 2)
	evs = idleEvents(m)
	require.Len(t, evs, 3, "%v", eventTypes(evs))
	assert.Equal(t, contract.EventIdleGPUKept, evs[2].Type)
	assert.Contains(t, evs[2].Message, "cannot be released: the work runs on 1 TaskExecutor, its fewest")
	assert.Empty(t, fb.asked)
}

// TestIdleGPUGiveBackRefusedByTheFramework: a Release that fails (the job cannot rescale after all)
// keeps the GPUs, with an idle-gpu-kept event that gives the framework's reason; the count stays.
func TestIdleGPUGiveBackRefusedByTheFramework(t *testing.T) {
	fb := &fakeGiveBack{asked: make(chan string, 4), err: errors.New("the Flink job's vertex v needs at least 2 slots")}
	m, clock, c := idleAM(t, gpuSpec(2, 0), 2, func(c *config) { c.DemandSized, c.GiveBack = true, fb.giveBack() })
	ids := runningIDs(t, m, 2)
	for range 5 {
		sample(t, m, ids[0], 0)
		sample(t, m, ids[1], 90)
		clock.Add(5 * time.Second)
	}
	clock.Add(10 * time.Second)
	select {
	case <-fb.asked:
	case <-time.After(10 * time.Second):
		t.Fatal("GiveBack.Release not called at the deadline")
	}
	require.Eventually(t, func() bool { return len(idleEvents(m)) == 2 }, 10*time.Second, time.Millisecond)
	evs := idleEvents(m)
	assert.Equal(t, contract.EventIdleGPUKept, evs[1].Type)
	assert.Contains(t, evs[1].Message, "cannot be released: the Flink job's vertex v needs at least 2 slots")
	heartbeats(t, c, 3)
	assert.Equal(t, 2, m.Instances())
	n, _, _ := m.Notice(ids[0])
	assert.Nil(t, n, "the notice withdrawn: judged again by its next idle spell")
}

// TestIdleGPUGiveBackReleasesTheTaskExecutorTheWorkLeft: when the framework's work left another
// TaskExecutor than the idle one (Flink chose which slots its rescale keeps), that one is released
// and booked as given back, the event says so, and the idle one's notice is withdrawn.
func TestIdleGPUGiveBackReleasesTheTaskExecutorTheWorkLeft(t *testing.T) {
	fb := &fakeGiveBack{asked: make(chan string, 4)}
	m, clock, _ := idleAM(t, gpuSpec(2, 0), 2, func(c *config) { c.DemandSized, c.GiveBack = true, fb.giveBack() })
	ids := runningIDs(t, m, 2)
	for range 5 {
		sample(t, m, ids[0], 0)
		sample(t, m, ids[1], 90)
		clock.Add(5 * time.Second)
	}
	clock.Add(10 * time.Second)
	select {
	case got := <-fb.asked:
		require.Equal(t, ids[0], got)
	case <-time.After(10 * time.Second):
		t.Fatal("GiveBack.Release not called at the deadline")
	}
	require.NoError(t, m.Scale(1, []string{ids[1]}, "Flink demand: 1 slots → 1 TaskManagers"))
	evs := idleEvents(m)
	require.Len(t, evs, 2, "%v", eventTypes(evs))
	assert.Equal(t, contract.EventIdleGPUReleased, evs[1].Type)
	assert.Equal(t, ids[1], evs[1].Container)
	assert.Contains(t, evs[1].Message, "the job's rescale left it rather than "+ids[0]+", whose GPUs stayed idle")
	n, _, _ := m.Notice(ids[0])
	assert.Nil(t, n, "the idle one's notice withdrawn")
	clock.Add(time.Hour)
	assert.InDelta(t, 1, m.Status().GPUUsage.GivenBackGPUHours, 1e-9)
}
