package am

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// elasticSpec is a gang of n that may run with as few as lo (taskexecutor.min-instances).
func elasticSpec(n, lo int) decision.Spec {
	s := gangSpec(n)
	s.MinInstances = lo
	return s
}

func containerIDs(cs []decision.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func heldN(ids ...string) []decision.Container {
	var out []decision.Container
	for _, id := range ids {
		out = append(out, decision.Container{ID: id, Phase: contract.Held})
	}
	return out
}

func TestReconcileElasticFormsAtTheMinimumByTheDeadline(t *testing.T) {
	spec := elasticSpec(3, 2)
	p := decision.Reconcile(spec, decision.Observed{NextAskID: 1})
	require.Equal(t, []decision.AskUpdate{{ID: 1, Count: 3}}, p.Send, "the first round asks for all instances")

	// Two of three held before the deadline: they wait, as a rigid gang's would.
	p = decision.Reconcile(spec, decision.Observed{Asks: p.Asks, NextAskID: p.NextAskID, NewAllocations: []decision.Allocation{gangAlloc("c1", 1), gangAlloc("c2", 1)}})
	assert.Len(t, p.Hold, 2)
	assert.False(t, p.StartHeld, "before the deadline the round waits for all 3")
	asks := p.Asks

	// At the deadline two are enough; the third is still asked for.
	p = decision.Reconcile(spec, decision.Observed{Asks: asks, NextAskID: p.NextAskID, Containers: heldN("c1", "c2"), Elastic: decision.ElasticObserved{Deadline: true}})
	assert.True(t, p.StartHeld, "the round forms with the 2 it holds (>= min-instances)")
	assert.Empty(t, p.Send, "the ask for the third stays out")
	require.Len(t, p.Asks, 1)
	assert.Equal(t, 1, p.Asks[0].Want)

	// One held of a minimum of two is not enough, deadline or not (checkGang releases it).
	p = decision.Reconcile(spec, decision.Observed{Asks: asks, NextAskID: p.NextAskID, Containers: heldN("c1"), Elastic: decision.ElasticObserved{Deadline: true}})
	assert.False(t, p.StartHeld, "never below the minimum")

	// A round expecting 2 (after a shrink) forms as soon as it holds 2, before any deadline.
	p = decision.Reconcile(spec, decision.Observed{Asks: asks, NextAskID: p.NextAskID, Containers: heldN("c1", "c2"), Elastic: decision.ElasticObserved{Expect: 2}})
	assert.True(t, p.StartHeld)

	// A rigid gang (min-instances = instances) ignores the deadline: checkGang gives the round up.
	p = decision.Reconcile(elasticSpec(3, 3), decision.Observed{Asks: asks, NextAskID: p.NextAskID, Containers: heldN("c1", "c2"), Elastic: decision.ElasticObserved{Deadline: true}})
	assert.False(t, p.StartHeld)
}

func TestReconcileElasticGrowsOnlyWhenTheIntervalPassed(t *testing.T) {
	spec := elasticSpec(3, 2)
	running := []decision.Container{{ID: "c1", Phase: contract.Running}, {ID: "c2", Phase: contract.Running}}
	asks := []decision.Ask{{ID: 1, Want: 1, AtRM: 1}}

	// The third arrives while the round of 2 runs: held beside it, not started into it.
	p := decision.Reconcile(spec, decision.Observed{Asks: asks, NextAskID: 2, Containers: running, NewAllocations: []decision.Allocation{gangAlloc("c3", 1)}})
	assert.Len(t, p.Hold, 1)
	assert.False(t, p.StartHeld, "a formed round never takes a member mid-way")
	assert.False(t, p.NewRound, "before taskexecutor.elastic-interval the extra is held")
	withExtra := append(append([]decision.Container{}, running...), decision.Container{ID: "c3", Phase: contract.Held})
	p = decision.Reconcile(spec, decision.Observed{Asks: p.Asks, NextAskID: 2, Containers: withExtra})
	assert.False(t, p.NewRound)
	assert.Empty(t, p.Stop)

	// The interval passed: the gang restarts at 3; the running members stop, the held one carries over.
	p = decision.Reconcile(spec, decision.Observed{Asks: p.Asks, NextAskID: 2, Containers: withExtra, Elastic: decision.ElasticObserved{GrowDue: true}})
	require.True(t, p.NewRound)
	assert.Equal(t, "grow", p.RoundChange)
	assert.Equal(t, 3, p.RoundSize)
	assert.ElementsMatch(t, []string{"c1", "c2"}, []string{p.Stop[0].ID, p.Stop[1].ID}, "only the running members stop")
	assert.Contains(t, p.RoundReason, "1 more TaskExecutor(s) were allocated while the round ran with 2")

	// The requirement went down to 3 with 2 running and 3 held: the gang grows to 3 carrying 3 held
	// containers; with 4 held, the newest goes back.
	crowd := append(append([]decision.Container{}, running...), heldN("h1", "h2", "h3", "h4")...)
	p = decision.Reconcile(spec, decision.Observed{NextAskID: 2, Containers: crowd, Elastic: decision.ElasticObserved{GrowDue: true}})
	require.True(t, p.NewRound)
	assert.Equal(t, 3, p.RoundSize)
	assert.Equal(t, []string{"c1", "c2", "h4"}, containerIDs(p.Stop))
	// Down to 2 while 2 run: nothing to grow with; the held ones go back at once, no restart.
	p = decision.Reconcile(elasticSpec(2, 1), decision.Observed{NextAskID: 2, Containers: crowd[:4]})
	assert.False(t, p.NewRound)
	assert.Equal(t, []string{"h2", "h1"}, containerIDs(p.Stop))
	assert.Contains(t, p.RoundReason, "the requirement went down to 2")

	// Interval passed but nothing held: no restart.
	p = decision.Reconcile(spec, decision.Observed{Asks: asks, NextAskID: 2, Containers: running, Elastic: decision.ElasticObserved{GrowDue: true}})
	assert.False(t, p.NewRound)

	// The next round (carried c3, expecting 3) asks for the other 2 and forms when it holds 3.
	next := []decision.Container{{ID: "c1", Phase: contract.Stopping}, {ID: "c2", Phase: contract.Stopping}, {ID: "c3", Phase: contract.Held, Round: 1}}
	p = decision.Reconcile(spec, decision.Observed{NextAskID: 2, Containers: next, Round: 1, Elastic: decision.ElasticObserved{Expect: 3}})
	assert.Equal(t, []decision.AskUpdate{{ID: 2, Count: 2}}, p.Send)
	p = decision.Reconcile(spec, decision.Observed{Asks: p.Asks, NextAskID: p.NextAskID, Containers: next, Round: 1, Elastic: decision.ElasticObserved{Expect: 3},
		NewAllocations: []decision.Allocation{gangAlloc("c4", 2)}})
	assert.False(t, p.StartHeld, "2 of the 3 expected")
	p = decision.Reconcile(spec, decision.Observed{Asks: p.Asks, NextAskID: p.NextAskID, Containers: append(next, decision.Container{ID: "c4", Phase: contract.Held, Round: 1}), Round: 1,
		Elastic: decision.ElasticObserved{Expect: 3}, NewAllocations: []decision.Allocation{gangAlloc("c5", 2)}})
	assert.True(t, p.StartHeld)
}

func TestReconcileElasticShrinksWhenARankIsLostAndNeverBelowTheMinimum(t *testing.T) {
	spec := elasticSpec(3, 2)
	round := []decision.Container{
		{ID: "c1", Phase: contract.Running},
		{ID: "c2", Phase: contract.Completed, Exit: decision.Exit{Status: -102, Class: contract.ExitPreempted}},
		{ID: "c3", Phase: contract.Running},
	}
	p := decision.Reconcile(spec, decision.Observed{Containers: round, NextAskID: 2})
	require.True(t, p.NewRound)
	assert.Equal(t, "shrink", p.RoundChange)
	assert.Equal(t, 2, p.RoundSize, "the 2 survivors are enough: no wait for a replacement")
	assert.Contains(t, p.RoundReason, "c2")
	assert.Len(t, p.Stop, 2)
	assert.Zero(t, p.FailureCount, "preemption does not count")

	// The shrunk round asks for all 3 again (to grow later) and forms as soon as it holds 2.
	next := append(append([]decision.Container{}, round...), decision.Container{ID: "c4", Phase: contract.Held, Round: 1})
	p = decision.Reconcile(spec, decision.Observed{Containers: next, NextAskID: 2, Round: 1, Elastic: decision.ElasticObserved{Expect: 2}})
	assert.Equal(t, []decision.AskUpdate{{ID: 2, Count: 2}}, p.Send)
	p = decision.Reconcile(spec, decision.Observed{Asks: p.Asks, Containers: next, NextAskID: p.NextAskID, Round: 1, Elastic: decision.ElasticObserved{Expect: 2},
		NewAllocations: []decision.Allocation{gangAlloc("c5", 2)}})
	assert.True(t, p.StartHeld)

	// A round of 2 loses one: 1 is below the minimum, the gang waits for a full round.
	small := []decision.Container{{ID: "c1", Phase: contract.Running}, {ID: "c2", Phase: contract.Completed, Exit: decision.Exit{Status: 3, Class: contract.ExitFailed}}}
	p = decision.Reconcile(spec, decision.Observed{Containers: small, NextAskID: 2})
	require.True(t, p.NewRound)
	assert.Empty(t, p.RoundChange)
	assert.Equal(t, 3, p.RoundSize)
	assert.Contains(t, p.RoundReason, "1 left, fewer than taskexecutor.min-instances = 2")
	assert.Equal(t, 1, p.FailureCount)
}

func TestReconcileElasticBatchSucceedsWithItsRound(t *testing.T) {
	spec := elasticSpec(3, 2)
	spec.Mode = decision.Batch
	ok := decision.Exit{Class: contract.ExitSucceeded}
	// One of a round of 2 exited 0: nothing more is asked for, the other still runs.
	half := []decision.Container{{ID: "a", Phase: contract.Completed, Exit: ok}, {ID: "b", Phase: contract.Running}}
	p := decision.Reconcile(spec, decision.Observed{Asks: []decision.Ask{{ID: 1, Want: 1, AtRM: 1}}, Containers: half, NextAskID: 2})
	assert.Nil(t, p.Done)
	assert.Equal(t, []decision.AskUpdate{{ID: 1, Count: 0}}, p.Send, "the finishing round cancels the ask for more")
	assert.False(t, p.NewRound)

	done := []decision.Container{{ID: "a", Phase: contract.Completed, Exit: ok}, {ID: "b", Phase: contract.Completed, Exit: ok}}
	p = decision.Reconcile(spec, decision.Observed{Containers: done, NextAskID: 2})
	require.NotNil(t, p.Done)
	assert.Equal(t, contract.Succeeded, p.Done.Status)
	assert.Contains(t, p.Done.Diagnostics, "all 2 TaskExecutors of the elastic gang's round 0")
}

// elasticAM is an elastic gang of 3 (min 2) on the in-process fake cluster, its loop running, with the
// AM's clock under the test's control: the cluster grants what MaxAllocations lets it and containers
// run until the test completes them.
func elasticAM(t *testing.T) (*am, *testClock, *fakecluster.Cluster) {
	t.Helper()
	c := fakecluster.InProcess()
	c.KeepRunning = true
	c.MaxAllocations = 2
	clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	spec := elasticSpec(3, 2)
	spec.MaxFailures = 5
	m, err := newAM(config{App: "application_1700000000000_0007", Spec: spec, Now: clock.Now, Policy: noFailurePolicy,
		GangTimeout: 30 * time.Second, ElasticInterval: 30 * time.Second, HeartbeatFast: time.Millisecond, HeartbeatSlow: 2 * time.Millisecond,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: c.InProcessScheduler(), NM: c.InProcessNM(), Log: quietLog})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _, _ = m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return m, clock, c
}

// gangNow is the AM's gang section once cond holds for it.
func gangNow(t *testing.T, m *am, what string, cond func(g contract.GangStatus) bool) contract.GangStatus {
	t.Helper()
	var g contract.GangStatus
	require.Eventually(t, func() bool {
		s := m.Status().Gang
		if s == nil {
			return false
		}
		g = *s
		return cond(g)
	}, 10*time.Second, time.Millisecond, what)
	return g
}

// heartbeats waits for n more allocates: the loop had that many chances to act.
func heartbeats(t *testing.T, c interface{ AllocateCount() int }, n int) {
	t.Helper()
	from := c.AllocateCount()
	require.Eventually(t, func() bool { return c.AllocateCount() >= from+n }, 10*time.Second, time.Millisecond)
}

// started waits until the cluster started n containers in all.
func started(t *testing.T, c *fakecluster.Cluster, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return c.StartedCount() == n }, 10*time.Second, time.Millisecond, "%d started", n)
}

// fail reports a running member of round as exited with code 3 (once the launches of its round are
// done).
func fail(t *testing.T, m *am, c *fakecluster.Cluster, round int) string {
	t.Helper()
	var victim string
	require.Eventually(t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, tr := range m.rec.All() {
			if tr.Round == round && tr.Phase == contract.Running {
				victim = tr.ID
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond, "a running member of round %d", round)
	cid, err := yarnrpc.ParseContainerID(victim)
	require.NoError(t, err)
	c.Mu.Lock()
	delete(c.Running, victim)
	c.Complete = append(c.Complete, &hadooppb.ContainerStatusProto{ContainerId: cid, State: hadooppb.ContainerStateProto_C_COMPLETE.Enum(),
		ExitStatus: proto.Int32(3), Diagnostics: proto.String("Exception from container-launch. Exit code: 3")})
	c.Mu.Unlock()
	return victim
}

func gangEvents(m *am, typ contract.EventType) []contract.Event {
	var out []contract.Event
	for _, e := range m.events.Latest(200) {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestLoopElasticGangFormsGrowsAndShrinks: the cluster grants 2 of 3; at the gang deadline the round
// forms with 2; a third granted later is held until taskexecutor.elastic-interval passed, then the gang
// restarts at 3; a rank that fails restarts it at 2 at once; a second failure leaves 1, below the
// minimum: the gang waits for a full round, and gives back what it holds at the deadline.
func TestLoopElasticGangFormsGrowsAndShrinks(t *testing.T) {
	m, clock, c := elasticAM(t)

	g := gangNow(t, m, "2 held", func(g contract.GangStatus) bool { return g.Held == 2 })
	heartbeats(t, c, 5)
	g = gangNow(t, m, "still waiting", func(contract.GangStatus) bool { return true })
	assert.False(t, g.Formed, "before the deadline the round waits for all 3")
	assert.Equal(t, 2, g.MinInstances)
	assert.Equal(t, 3, g.MaxInstances)

	clock.Add(30 * time.Second) // the gang deadline (before the failure policy's pending timeout of 1m)
	g = gangNow(t, m, "round 0 formed at 2", func(g contract.GangStatus) bool { return g.Formed })
	assert.Equal(t, contract.GangStatus{Round: 0, Formed: true, Size: 2, MinInstances: 2, MaxInstances: 3}, g)
	formed := gangEvents(m, contract.EventGangFormed)
	require.Len(t, formed, 1)
	assert.Equal(t, 2, formed[0].Count)
	assert.Empty(t, gangEvents(m, contract.EventNotEnoughResources), "the round formed: nothing was given up")
	started(t, c, 2)

	// Capacity for a third appears: held, not started, and no restart before the interval.
	c.Mu.Lock()
	c.MaxAllocations = 3
	c.Mu.Unlock()
	gangNow(t, m, "the third held", func(g contract.GangStatus) bool { return g.Held == 1 })
	clock.Add(29 * time.Second)
	heartbeats(t, c, 5)
	g = gangNow(t, m, "round 0 runs on", func(contract.GangStatus) bool { return true })
	assert.Equal(t, 0, g.Round, "no growth before taskexecutor.elastic-interval")
	assert.Equal(t, 2, c.StartedCount())

	clock.Add(time.Second)
	g = gangNow(t, m, "round 1 asked for", func(g contract.GangStatus) bool { return g.Round == 1 })
	restarted := gangEvents(m, contract.EventGangRestarted)
	require.Len(t, restarted, 1)
	assert.Contains(t, restarted[0].Message, "gang restarts as round 1 at 3 TaskExecutors (grows)")
	assert.Equal(t, 3, restarted[0].Count)
	// The 2 stopped give their room back; the round holds the carried one and forms at 3 at once.
	c.Mu.Lock()
	c.MaxAllocations = 5
	c.Mu.Unlock()
	g = gangNow(t, m, "round 1 formed at 3", func(g contract.GangStatus) bool { return g.Formed })
	assert.Equal(t, 3, g.Size)
	started(t, c, 5) // 2 in round 0, 3 in round 1

	// A rank fails: the 2 survivors are enough; the gang restarts at 2 at once.
	fail(t, m, c, 1)
	g = gangNow(t, m, "round 2", func(g contract.GangStatus) bool { return g.Round == 2 })
	restarted = gangEvents(m, contract.EventGangRestarted)
	require.Len(t, restarted, 2)
	assert.Contains(t, restarted[1].Message, "gang restarts as round 2 at 2 TaskExecutors (shrinks)")
	assert.Contains(t, restarted[1].Message, "exited with code 3")
	clock.Add(time.Second) // past the failure policy's restart backoff (noFailurePolicy: 1ns)
	c.Mu.Lock()
	c.MaxAllocations = 7 // room for 2 only
	c.Mu.Unlock()
	g = gangNow(t, m, "round 2 formed at 2 before any deadline", func(g contract.GangStatus) bool { return g.Formed })
	assert.Equal(t, 2, g.Size)
	started(t, c, 7)

	// Another fails: 1 left is below the minimum; the gang waits for a full round.
	fail(t, m, c, 2)
	gangNow(t, m, "round 3", func(g contract.GangStatus) bool { return g.Round == 3 })
	restarted = gangEvents(m, contract.EventGangRestarted)
	require.Len(t, restarted, 3)
	assert.Contains(t, restarted[2].Message, "gang restarts as round 3 at 3 TaskExecutors: ")
	assert.Contains(t, restarted[2].Message, "fewer than taskexecutor.min-instances = 2")
	clock.Add(time.Second)
	c.Mu.Lock()
	c.MaxAllocations = 8 // room for 1
	c.Mu.Unlock()
	gangNow(t, m, "1 held", func(g contract.GangStatus) bool { return g.Held == 1 })
	clock.Add(30 * time.Second)
	gangNow(t, m, "round 3 given up", func(g contract.GangStatus) bool { return g.Round == 4 })
	assert.Equal(t, 7, c.StartedCount(), "the one held of round 3 never started")
	require.Eventually(t, func() bool { return len(gangEvents(m, contract.EventNotEnoughResources)) > 0 }, 10*time.Second, time.Millisecond,
		"the shortage is reported")
	assert.Contains(t, fmt.Sprint(gangEvents(m, contract.EventGangRestarted)[3].Message), "(at least 2: taskexecutor.min-instances)")
	assert.Equal(t, 2, m.Status().Counts.Failed)
}

// TestReconcileGangHeldContainerThatEndsIsReplaced: the RM takes back a container held beside an
// elastic gang's round (its allocation expired after yarn.resourcemanager.rm.container-allocation.
// expiry-interval-ms, or its node was lost): no rank was lost, so the round runs on and the container
// is asked for again; a rigid gang's unformed round likewise asks for it again instead of restarting.
func TestReconcileGangHeldContainerThatEndsIsReplaced(t *testing.T) {
	expired := decision.Container{ID: "h1", Phase: contract.Completed, NeverStarted: true, Exit: decision.Exit{Status: -100, Class: contract.ExitAborted}}
	running := []decision.Container{{ID: "c1", Phase: contract.Running}, {ID: "c2", Phase: contract.Running}, expired}
	p := decision.Reconcile(elasticSpec(3, 2), decision.Observed{Containers: running, NextAskID: 2, Elastic: decision.ElasticObserved{GrowDue: true}})
	assert.False(t, p.NewRound, "no member of the round ended")
	assert.Equal(t, []decision.AskUpdate{{ID: 2, Count: 1}}, p.Send, "the third is asked for again")

	p = decision.Reconcile(gangSpec(3), decision.Observed{Containers: []decision.Container{{ID: "c1", Phase: contract.Held}, expired}, NextAskID: 2})
	assert.False(t, p.NewRound)
	assert.Equal(t, []decision.AskUpdate{{ID: 2, Count: 2}}, p.Send)
}
