package am

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

func gangSpec(n int) decision.Spec {
	s := gpuSpec(n, 3)
	s.Gang = true
	return s
}

func gangAlloc(id string, ask int64) decision.Allocation {
	return decision.Allocation{ID: id, Node: "n1:1", AskID: ask, Resources: contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 1}}
}

func TestReconcileGangHoldsUntilComplete(t *testing.T) {
	spec := gangSpec(3)
	p := decision.Reconcile(spec, decision.Observed{NextAskID: 1})
	require.Equal(t, []decision.AskUpdate{{ID: 1, Count: 3}}, p.Send)

	// Two of three arrive: held, nothing started.
	p = decision.Reconcile(spec, decision.Observed{Asks: p.Asks, NextAskID: p.NextAskID, NewAllocations: []decision.Allocation{gangAlloc("c1", 1), gangAlloc("c2", 1)}})
	assert.Empty(t, p.Launch)
	assert.Len(t, p.Hold, 2)
	assert.False(t, p.StartHeld)
	held := []decision.Container{{ID: "c1", Phase: contract.Held}, {ID: "c2", Phase: contract.Held}}

	// The third: the gang is complete, all start.
	p = decision.Reconcile(spec, decision.Observed{Asks: p.Asks, NextAskID: p.NextAskID, Containers: held, NewAllocations: []decision.Allocation{gangAlloc("c3", 1)}})
	assert.Empty(t, p.Launch)
	assert.Len(t, p.Hold, 1)
	assert.True(t, p.StartHeld)
	assert.Empty(t, p.Send, "nothing more to ask")
}

func TestReconcileGangRestartsWhenARankFails(t *testing.T) {
	spec := gangSpec(3)
	running := []decision.Container{
		{ID: "c1", Phase: contract.Running},
		{ID: "c2", Phase: contract.Completed, Exit: decision.Exit{Status: 3, Class: contract.ExitFailed}},
		{ID: "c3", Phase: contract.Running},
	}
	p := decision.Reconcile(spec, decision.Observed{Containers: running, NextAskID: 2})
	assert.True(t, p.NewRound)
	assert.Contains(t, p.RoundReason, "c2")
	assert.ElementsMatch(t, []string{"c1", "c3"}, []string{p.Stop[0].ID, p.Stop[1].ID}, "the other ranks stop")
	assert.Empty(t, p.Send, "the next round asks")
	assert.Equal(t, 1, p.FailureCount, "the failure counts against max-failures")

	// Round 1: the old round is history; the whole gang is asked for again.
	for i := range running {
		if running[i].Phase == contract.Running {
			running[i].Phase = contract.Stopping
		}
	}
	p = decision.Reconcile(spec, decision.Observed{Containers: running, NextAskID: 2, Round: 1})
	assert.False(t, p.NewRound)
	assert.Equal(t, []decision.AskUpdate{{ID: 2, Count: 3}}, p.Send)

	// Preemption restarts too, without counting.
	pre := []decision.Container{{ID: "c1", Phase: contract.Running}, {ID: "c2", Phase: contract.Completed, Exit: decision.Exit{Status: -102, Class: contract.ExitPreempted}}}
	p = decision.Reconcile(gangSpec(2), decision.Observed{Containers: pre, NextAskID: 2})
	assert.True(t, p.NewRound)
	assert.Equal(t, 0, p.FailureCount)
}

func TestReconcileGangSucceedsAsARoundAndRestartsOnANewSize(t *testing.T) {
	done := []decision.Container{{ID: "a", Phase: contract.Completed, Exit: decision.Exit{Class: contract.ExitSucceeded}}, {ID: "b", Phase: contract.Completed, Exit: decision.Exit{Class: contract.ExitSucceeded}}}
	p := decision.Reconcile(gangSpec(2), decision.Observed{Containers: done, NextAskID: 2})
	require.NotNil(t, p.Done)
	assert.Equal(t, contract.Succeeded, p.Done.Status)

	// Successes of an earlier round do not count towards the current one.
	p = decision.Reconcile(gangSpec(2), decision.Observed{Containers: done, NextAskID: 2, Round: 1})
	assert.Nil(t, p.Done)
	assert.Equal(t, []decision.AskUpdate{{ID: 2, Count: 2}}, p.Send)

	// The driver declares 3 while a round of 2 runs: a new round of 3.
	running := []decision.Container{{ID: "a", Phase: contract.Running}, {ID: "b", Phase: contract.Running}}
	p = decision.Reconcile(gangSpec(3), decision.Observed{Containers: running, NextAskID: 2})
	assert.True(t, p.NewRound)
	assert.Contains(t, p.RoundReason, "requirement changed to 3")
}

// TestLoopGangTimeoutReleasesWhatItHolds: the cluster grants 2 of a gang of 3; after the gang timeout
// the AM gives the 2 back without ever starting them and reports the shortage; with the action fail
// the application fails.
func TestLoopGangTimeoutReleasesWhatItHolds(t *testing.T) {
	f := newFakeCluster(t)
	f.MaxAllocations = 2
	m, _ := f.newAM(t, gangSpec(3))
	m.cfg.GangTimeout = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _, _ = m.Run(ctx); close(done) }()
	require.Eventually(t, func() bool { f.Mu.Lock(); defer f.Mu.Unlock(); return len(f.Released) == 2 }, 10*time.Second, 10*time.Millisecond,
		"what was held goes back to the RM")
	var ner bool
	for _, e := range m.events.Latest(100) {
		ner = ner || e.Type == contract.EventNotEnoughResources
	}
	assert.True(t, ner, "the shortage is reported with its evidence")
	cancel()
	<-done
	f.Mu.Lock()
	assert.Empty(t, f.Started, "no member of an incomplete gang ever starts")
	f.Mu.Unlock()

	f = newFakeCluster(t)
	f.MaxAllocations = 2
	m, _ = f.newAM(t, gangSpec(3))
	m.cfg.GangTimeout = 300 * time.Millisecond
	m.policy = decision.NewPolicy(decision.PolicyConfig{OnPendingTimeout: decision.PendingFail})
	out := run(t, m)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, "taskexecutor.gang-timeout")
	f.Mu.Lock()
	assert.Empty(t, f.Started)
	f.Mu.Unlock()
}

// TestLoopGangRestartsTheRoundWhenARankFails: rank 1 of round 0 exits 3; the round restarts and round
// 1 succeeds; 6 containers started in all, one failure counted.
func TestLoopGangRestartsTheRoundWhenARankFails(t *testing.T) {
	f := newFakeCluster(t)
	f.ExitCode = func(n int) int32 {
		if n == 1 {
			return 3
		}
		return 0
	}
	m, _ := f.newAM(t, gangSpec(3))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := m.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.Succeeded, out.Status, out.Diagnostics)
	f.Mu.Lock()
	assert.Len(t, f.Started, 6, "two rounds of three: %v", f.Started)
	f.Mu.Unlock()
	var formed, restarted int
	for _, e := range m.events.Latest(200) {
		switch e.Type {
		case contract.EventGangFormed:
			formed++
		case contract.EventGangRestarted:
			restarted++
			assert.Contains(t, e.Message, "exited with code 3", fmt.Sprint(e))
		}
	}
	assert.Equal(t, 2, formed)
	assert.Equal(t, 1, restarted)
	assert.Equal(t, 1, m.Status().Counts.Failed)
}
