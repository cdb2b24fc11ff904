package decision

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yarn-am/yarn-am/contract"
)

func TestScaleDownStopsTheNewestActive(t *testing.T) {
	cs := []Container{
		{ID: "c1", Phase: contract.Running},
		{ID: "c2", Phase: contract.Completed},
		{ID: "c3", Phase: contract.Running},
		{ID: "c4", Phase: contract.Stopping},
		{ID: "c5", Phase: contract.Launching},
	}
	names := func(cs []Container) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	assert.Nil(t, scaleDown(cs, 3, nil))
	assert.Equal(t, []string{"c5"}, names(scaleDown(cs, 2, nil)))
	assert.Equal(t, []string{"c5", "c3"}, names(scaleDown(cs, 1, nil)))
	assert.Equal(t, []string{"c5", "c3", "c1"}, names(scaleDown(cs, 0, nil)))
	assert.Equal(t, []string{"c5", "c3", "c1"}, names(scaleDown(cs, -1, nil)))
	// A framework's idle workers go first, then the newest; a named container that is not active
	// (c4 stopping already) or not known (c9) changes nothing.
	first := map[string]bool{"c1": true, "c4": true, "c9": true}
	assert.Equal(t, []string{"c1"}, names(scaleDown(cs, 2, first)))
	assert.Equal(t, []string{"c1", "c5"}, names(scaleDown(cs, 1, first)))
	assert.Equal(t, []string{"c1", "c5", "c3"}, names(scaleDown(cs, 0, first)))
}

func TestRequirementsUpdateValidate(t *testing.T) {
	n := func(i int) *int { return &i }
	assert.NoError(t, contract.RequirementsUpdate{Instances: n(0)}.Validate())
	assert.ErrorContains(t, contract.RequirementsUpdate{}.Validate(), `"instances"`)
	assert.ErrorContains(t, contract.RequirementsUpdate{Instances: n(-1)}.Validate(), `"instances": -1: want 0..100000`)
}

func TestReconcileScaleDownCancelsPendingFirstThenStopsNewest(t *testing.T) {
	spec := Spec{Instances: 2, Capability: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 4}, MaxFailures: 1, Mode: Service}
	run := func(id string) Container {
		return Container{ID: id, Node: "n", AskID: 1, Phase: contract.Running}
	}

	// 2 running + 1 pending, requirement 3 → 2: the pending ask is cancelled, nothing stops.
	p := Reconcile(spec, Observed{Asks: []Ask{{ID: 2, Want: 1, AtRM: 1}}, Containers: []Container{run("c1"), run("c2")}, NextAskID: 3})
	assert.Empty(t, p.Stop)
	assert.Equal(t, []AskUpdate{{ID: 2, Count: 0}}, p.Send)

	// 3 running + 1 pending → 2: the ask is cancelled and the newest TaskExecutor stops.
	p = Reconcile(spec, Observed{Asks: []Ask{{ID: 2, Want: 1, AtRM: 1}}, Containers: []Container{run("c1"), run("c2"), run("c3")}, NextAskID: 3})
	require.Len(t, p.Stop, 1)
	assert.Equal(t, "c3", p.Stop[0].ID)
	assert.Equal(t, []AskUpdate{{ID: 2, Count: 0}}, p.Send)

	// While it stops, it is not active: no replacement is asked for, and it is not stopped twice.
	stopping := run("c3")
	stopping.Phase = contract.Stopping
	p = Reconcile(spec, Observed{Containers: []Container{run("c1"), run("c2"), stopping}, NextAskID: 3})
	assert.Empty(t, p.Stop)
	assert.Empty(t, p.Send)

	// Stopped by the AM (-105): not a failure, not replaced.
	stopped := run("c3")
	stopped.Phase, stopped.Exit = contract.Completed, Exit{Status: -105, Class: Classify(-105)}
	p = Reconcile(spec, Observed{Containers: []Container{run("c1"), run("c2"), stopped}, NextAskID: 3})
	assert.Empty(t, p.Send)
	assert.Empty(t, p.Failures)

	// Scale up again: a new ask for the difference.
	spec.Instances = 4
	p = Reconcile(spec, Observed{Containers: []Container{run("c1"), run("c2"), stopped}, NextAskID: 3})
	assert.Equal(t, []AskUpdate{{ID: 3, Count: 2}}, p.Send)
}

func TestReconcileHoldNewAsksDuringRestartBackoff(t *testing.T) {
	spec := Spec{Instances: 2, Capability: contract.Capability{"memory-mb": 256, "vcores": 1}, MaxFailures: 5, Mode: Batch}
	failed := Container{ID: "c1", Node: "n", Phase: contract.Completed, Exit: Exit{Status: 1, Class: contract.ExitFailed}}
	running := Container{ID: "c2", Node: "n", Phase: contract.Running}
	p := Reconcile(spec, Observed{Containers: []Container{failed, running}, NextAskID: 2, HoldNewAsks: true})
	assert.Empty(t, p.Send, "the replacement waits for the backoff")
	p = Reconcile(spec, Observed{Containers: []Container{failed, running}, NextAskID: 2})
	assert.Equal(t, []AskUpdate{{ID: 2, Count: 1}}, p.Send)
}
