package decision

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yarn-am/yarn-am/contract"
)

var te = contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 1}

func alloc(id string, ask int64, c contract.Capability) Allocation {
	return Allocation{ID: id, Node: "n1:1", AskID: ask, Resources: c}
}

func done(id string, exit int32) Container {
	return Container{ID: id, Phase: contract.Completed, Exit: Exit{Status: exit, Class: Classify(exit)}}
}

func TestReconcileFirstAsk(t *testing.T) {
	p := Reconcile(Spec{Instances: 4, Capability: te, MaxFailures: 3}, Observed{})
	assert.Equal(t, []AskUpdate{{ID: 1, Count: 4}}, p.Send)
	assert.Equal(t, []Ask{{ID: 1, Want: 4, AtRM: 4}}, p.Asks)
	assert.EqualValues(t, 2, p.NextAskID)
	assert.Nil(t, p.Done)
}

func TestReconcileNothingToAskTwice(t *testing.T) {
	p := Reconcile(Spec{Instances: 4, Capability: te}, Observed{Asks: []Ask{{ID: 1, Want: 4, AtRM: 4}}, NextAskID: 2})
	assert.Empty(t, p.Send, "an ask the RM already holds is not re-sent")
	assert.Empty(t, p.Launch)
}

func TestReconcileMatchesByAllocationRequestID(t *testing.T) {
	bigger := contract.Capability{"memory-mb": 1024, "vcores": 2, "yarn.io/gpu": 1} // normalised up: still fits
	noGPU := contract.Capability{"memory-mb": 512, "vcores": 1}
	twoGPU := contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 2}
	obs := Observed{Asks: []Ask{{ID: 1, Want: 2, AtRM: 2}}, NextAskID: 2, NewAllocations: []Allocation{
		alloc("c1", 1, te), alloc("c2", 1, noGPU), alloc("c3", 9, te), alloc("c4", 1, twoGPU), alloc("c5", 1, bigger), alloc("c6", 1, te),
	}}
	p := Reconcile(Spec{Instances: 2, Capability: te}, obs)
	var launched, released []string
	reasons := map[string]string{}
	for _, l := range p.Launch {
		launched = append(launched, l.ID)
	}
	for _, r := range p.Release {
		released = append(released, r.ID)
		reasons[r.ID] = r.Reason
	}
	assert.Equal(t, []string{"c1", "c5"}, launched)
	assert.Equal(t, []string{"c2", "c3", "c4", "c6"}, released)
	assert.Contains(t, reasons["c2"], "yarn.io/gpu 0 != 1 asked")
	assert.Contains(t, reasons["c3"], "allocationRequestId 9")
	assert.Contains(t, reasons["c4"], "yarn.io/gpu 2 != 1 asked")
	assert.Contains(t, reasons["c6"], "excess")
	assert.Empty(t, p.Send, "the RM's table ran to 0 with the allocations, and so did ours")
	assert.Empty(t, p.Asks)
}

func TestReconcileRestoresAskAfterMisfit(t *testing.T) {
	obs := Observed{Asks: []Ask{{ID: 1, Want: 2, AtRM: 2}}, NextAskID: 2,
		NewAllocations: []Allocation{alloc("c1", 1, te), alloc("c2", 1, contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 1})}}
	p := Reconcile(Spec{Instances: 2, Capability: te}, obs)
	require.Len(t, p.Launch, 1)
	require.Len(t, p.Release, 1)
	assert.Contains(t, p.Release[0].Reason, "memory-mb 256 < 512 asked")
	assert.Equal(t, []AskUpdate{{ID: 1, Count: 1}}, p.Send, "the RM decremented its table for the misfit: ask again")
}

func TestReconcileReplacesCountedFailures(t *testing.T) {
	obs := Observed{NextAskID: 2, Containers: []Container{done("c1", 3), {ID: "c2", Phase: contract.Running}}}
	p := Reconcile(Spec{Instances: 2, Capability: te, MaxFailures: 1}, obs)
	assert.Equal(t, []AskUpdate{{ID: 2, Count: 1}}, p.Send, "a fresh allocationRequestId for the replacement")
	assert.False(t, p.LimitReached)
	assert.Nil(t, p.Done)
}

func TestReconcileFailureLimit(t *testing.T) {
	obs := Observed{Asks: []Ask{{ID: 3, Want: 1, AtRM: 1}}, NextAskID: 4,
		Containers:     []Container{done("c1", 3), done("c2", 3), {ID: "c3", Phase: contract.Running}},
		NewAllocations: []Allocation{alloc("c4", 3, te)}}
	p := Reconcile(Spec{Instances: 2, Capability: te, MaxFailures: 1}, obs)
	assert.True(t, p.LimitReached)
	require.NotNil(t, p.Done)
	assert.Equal(t, contract.Failed, p.Done.Status)
	assert.Contains(t, p.Done.Diagnostics, "2 TaskExecutors failed, more than taskexecutor.max-failures = 1 allows (exit code 3 ×2)")
	assert.Contains(t, p.Done.Diagnostics, "c2 on  exited with code 3")
	assert.Empty(t, p.Send, "the RM's table ran to 0 with the allocation")
	require.Len(t, p.Release, 1, "no more launches once the limit is reached")
	assert.Empty(t, p.Launch)

	obs.NewAllocations = nil
	p = Reconcile(Spec{Instances: 2, Capability: te, MaxFailures: 1}, obs)
	assert.Equal(t, []AskUpdate{{ID: 3, Count: 0}}, p.Send, "the outstanding ask is cancelled")
}

func TestReconcileNotCountedExitsAreReplacedFreely(t *testing.T) {
	var cs []Container
	for i, code := range []int32{-100, -101, -102, -105, -106, -107, -108} {
		cs = append(cs, done(string(rune('a'+i)), code))
	}
	p := Reconcile(Spec{Instances: 1, Capability: te, MaxFailures: 0}, Observed{Containers: cs, NextAskID: 1})
	assert.False(t, p.LimitReached)
	assert.Equal(t, []AskUpdate{{ID: 1, Count: 1}}, p.Send)
}

func TestReconcileBatchSucceeds(t *testing.T) {
	p := Reconcile(Spec{Instances: 2, Capability: te}, Observed{Containers: []Container{done("c1", 0), done("c2", 0)}})
	require.NotNil(t, p.Done)
	assert.Equal(t, contract.Succeeded, p.Done.Status)
	assert.Empty(t, p.Send, "nothing more is asked")
}

func TestReconcileBatchWaitsForRunning(t *testing.T) {
	p := Reconcile(Spec{Instances: 2, Capability: te}, Observed{Containers: []Container{done("c1", 0), {ID: "c2", Phase: contract.Running}}})
	assert.Nil(t, p.Done)
	assert.Empty(t, p.Send, "an exit 0 in batch mode is not replaced")
}

func TestReconcileServiceReplacesSuccessAndNeverFinishes(t *testing.T) {
	p := Reconcile(Spec{Instances: 2, Capability: te, Mode: Service}, Observed{Containers: []Container{done("c1", 0), done("c2", 0)}, NextAskID: 5})
	assert.Nil(t, p.Done)
	assert.Equal(t, []AskUpdate{{ID: 5, Count: 2}}, p.Send)
}

func TestReconcileDriverModeNeverFinishes(t *testing.T) {
	spec := Spec{Instances: 1, Capability: te, Mode: Driver}
	p := Reconcile(spec, Observed{Containers: []Container{done("c1", 0)}})
	assert.Nil(t, p.Done, "the driver decides")
	p = Reconcile(spec, Observed{Containers: []Container{done("c1", 1), done("c2", 1)}})
	assert.Nil(t, p.Done)
	assert.True(t, p.LimitReached)
}

func TestReconcileStoppingCancelsAsks(t *testing.T) {
	p := Reconcile(Spec{Instances: 3, Capability: te}, Observed{Asks: []Ask{{ID: 1, Want: 2, AtRM: 2}}, Stopping: true,
		NewAllocations: []Allocation{alloc("c1", 1, te)}})
	assert.Equal(t, []AskUpdate{{ID: 1, Count: 0}}, p.Send)
	assert.Empty(t, p.Launch)
	assert.Len(t, p.Release, 1)
}

func TestReconcileZeroInstancesSucceedsAtOnce(t *testing.T) {
	p := Reconcile(Spec{Instances: 0, Capability: te}, Observed{})
	require.NotNil(t, p.Done)
	assert.Equal(t, contract.Succeeded, p.Done.Status)
	assert.Empty(t, p.Send)
}

func TestReconcileDoesNotModifyInput(t *testing.T) {
	asks := []Ask{{ID: 1, Want: 2, AtRM: 2}}
	Reconcile(Spec{Instances: 2, Capability: te}, Observed{Asks: asks, NewAllocations: []Allocation{alloc("c1", 1, te)}})
	assert.Equal(t, []Ask{{ID: 1, Want: 2, AtRM: 2}}, asks)
}

func TestClassify(t *testing.T) {
	cases := []struct {
		exit   int32
		class  contract.ExitClass
		counts bool
		says   string
	}{
		{0, contract.ExitSucceeded, false, "exited with code 0"},
		{3, contract.ExitFailed, true, "exited with code 3"},
		{137, contract.ExitFailed, true, "killed by signal 9"},
		{90, contract.ExitDiscoveryFailed, true, "discovery failed"},
		{91, contract.ExitConfigError, true, "invalid external-resource configuration"},
		{92, contract.ExitStartFailed, true, "could not be started"},
		{-100, contract.ExitAborted, false, "not counted"},
		{-101, contract.ExitDisksFailed, false, "disks failed"},
		{-102, contract.ExitPreempted, false, "preempted"},
		{-103, contract.ExitMemoryExceeded, true, "yarn.nodemanager.vmem-pmem-ratio"},
		{-104, contract.ExitMemoryExceeded, true, "raise taskexecutor.memory"},
		{-105, contract.ExitKilledByAM, false, "stopped by the ApplicationMaster"},
		{-106, contract.ExitKilledByRM, false, "ResourceManager"},
		{-107, contract.ExitKilledAfterFinish, false, "after the application finished"},
		{-108, contract.ExitKilledByScheduler, false, "container scheduler"},
		{-109, contract.ExitExcessLogs, true, "too many logs"},
		{-1000, contract.ExitInvalid, true, "did not report"},
	}
	for _, c := range cases {
		got := Classify(c.exit)
		assert.Equal(t, c.class, got, "exit %d", c.exit)
		assert.Equal(t, c.counts, got.Counts(), "exit %d counts", c.exit)
		assert.Contains(t, Describe(c.exit, got), c.says, "exit %d", c.exit)
	}
	assert.True(t, contract.ExitLaunchFailed.Counts())
}

func TestFits(t *testing.T) {
	assert.Empty(t, fits(te, te))
	assert.Empty(t, fits(contract.Capability{"memory-mb": 1024, "vcores": 4, "yarn.io/gpu": 1, "yarn.io/fpga": 0}, te))
	assert.Equal(t, "yarn.io/fpga 1, none asked", fits(contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 1, "yarn.io/fpga": 1}, te))
	assert.Equal(t, "memory-mb 256 < 512 asked, vcores 0 < 1 asked, yarn.io/gpu 0 != 1 asked", fits(contract.Capability{"memory-mb": 256}, te))
}

func TestReconcileReleasesAllocationsOnExcludedNodes(t *testing.T) {
	spec := Spec{Instances: 2, Capability: te, MaxFailures: 3}
	obs := Observed{Asks: []Ask{{ID: 1, Want: 2, AtRM: 2}}, NextAskID: 2, Excluded: map[string]bool{"n1:1": true},
		NewAllocations: []Allocation{{ID: "c1", Node: "n1:1", AskID: 1, Resources: te}, {ID: "c2", Node: "n2:1", AskID: 1, Resources: te}}}
	p := Reconcile(spec, obs)
	require.Len(t, p.Launch, 1)
	assert.Equal(t, "c2", p.Launch[0].ID)
	require.Len(t, p.Release, 1)
	assert.Equal(t, "c1", p.Release[0].ID)
	assert.Contains(t, p.Release[0].Reason, "excluded")
	assert.Equal(t, []AskUpdate{{ID: 1, Count: 1}}, p.Send, "the released one is asked for again")
}

func TestReconcileSpreadsWhatFitsInAnAskOfItsOwn(t *testing.T) {
	spec := Spec{Instances: 10, Capability: contract.Capability{"memory-mb": 1024, "vcores": 1}, MaxFailures: 3}
	p := Reconcile(spec, Observed{NextAskID: 1, SpreadRoom: 4})
	assert.Equal(t, []Ask{{ID: 1, Want: 4, AtRM: 4, Spread: true}, {ID: 2, Want: 6, AtRM: 6}}, p.Asks)
	assert.Equal(t, []AskUpdate{{ID: 1, Count: 4}, {ID: 2, Count: 6}}, p.Send)
	assert.EqualValues(t, 3, p.NextAskID)

	p = Reconcile(spec, Observed{NextAskID: 1, SpreadRoom: 40})
	assert.Equal(t, []Ask{{ID: 1, Want: 10, AtRM: 10, Spread: true}}, p.Asks, "all of it fits: one spread ask")

	p = Reconcile(spec, Observed{NextAskID: 1})
	assert.Equal(t, []Ask{{ID: 1, Want: 10, AtRM: 10}}, p.Asks, "no room known: one plain ask")
}

// TestReconcileKeepsMaxPerNode: with taskexecutor.placement.max-per-node = 1, a second allocation
// on a node that already runs one (a live container, or one launched in the same plan) is
// released, its ask still wants the container and asks the RM for it again; a node whose container
// completed takes one again.
func TestReconcileKeepsMaxPerNode(t *testing.T) {
	on := func(id, node string) Allocation { return Allocation{ID: id, Node: node, AskID: 1, Resources: te} }
	spec := Spec{Instances: 4, Capability: te, MaxFailures: 3, MaxPerNode: 1}
	obs := Observed{Asks: []Ask{{ID: 1, Want: 3, AtRM: 3}}, NextAskID: 2,
		Containers: []Container{
			{ID: "c0", Node: "n1:1", Phase: contract.Running},
			{ID: "old", Node: "n3:1", Phase: contract.Completed, Exit: Exit{Class: contract.ExitKilledByAM}},
		},
		NewAllocations: []Allocation{on("c1", "n1:1"), on("c2", "n2:1"), on("c3", "n2:1"), on("c4", "n3:1")}}
	p := Reconcile(spec, obs)
	var launched []string
	for _, l := range p.Launch {
		launched = append(launched, l.ID)
	}
	assert.Equal(t, []string{"c2", "c4"}, launched)
	require.Len(t, p.Release, 2)
	assert.Equal(t, "c1", p.Release[0].ID)
	assert.Equal(t, "its node already runs 1 TaskExecutors (taskexecutor.placement.max-per-node = 1)", p.Release[0].Reason)
	assert.Equal(t, "c3", p.Release[1].ID)
	assert.Equal(t, []AskUpdate{{ID: 1, Count: 1}}, p.Send, "the released containers' ask wants one more, sent again")

	spec.MaxPerNode = 0
	p = Reconcile(spec, obs)
	assert.Len(t, p.Launch, 3, "no limit: the first three allocations run, the fourth is excess")
}
