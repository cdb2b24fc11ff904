package book

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// running records container id on node, launched (running), its launcher's reported GPU UUIDs
// as its infos.
func running(r *Records, id, node string, uuids ...string) *Container {
	a := alloc(id)
	a.Node = node
	t := r.Accepted(a, nil, 0, false)
	r.Launched(t)
	for i, u := range uuids {
		if t.Infos == nil {
			t.Infos = map[string][]contract.Info{}
		}
		t.Infos["gpu"] = append(t.Infos["gpu"], contract.Info{"index": string(rune('0' + i)), contract.InfoUUID: u})
	}
	return t
}

// TestCheckSharedGPUsStopsTheLater: a container that reports a GPU a live container of its node
// holds is stopped with a gpu-shared event naming both; another node's GPU of the same UUID, or a
// container whose worker exited, shares nothing; past SharedGPUFreeStops stops on a node the stopped
// container's end counts as a failure.
func TestCheckSharedGPUsStopsTheLater(t *testing.T) {
	r := NewRecords(10, nil)
	holder := running(&r, "c1", "n1:1", "GPU-a")
	other := running(&r, "c2", "n2:1", "GPU-a")
	_, shared := r.CheckSharedGPUs(other)
	assert.False(t, shared, "another node's GPU")

	later := running(&r, "c3", "n1:1", "GPU-b", "GPU-a")
	s, shared := r.CheckSharedGPUs(later)
	require.True(t, shared)
	assert.Same(t, holder, s.Holder)
	assert.Equal(t, "GPU-a", s.UUID)
	assert.False(t, s.Counts, "the first stops on a node are not the worker's failure")
	assert.Equal(t, contract.Stopping, later.Phase)
	assert.Equal(t, contract.EventGPUShared, s.Event.Type)
	assert.Equal(t, "c3", s.Event.Container)
	assert.Equal(t, "c1", s.Event.Other)
	assert.Equal(t, []string{"GPU-a"}, contract.UUIDs(s.Event.Infos["gpu"]))
	assert.Contains(t, s.Event.Message, "not counted as a failure")
	r.Completed(later, decision.Exit{Status: contract.ExitStatusKilledByAppMaster, Class: contract.ExitKilledByAM})
	assert.False(t, later.Exit.Class.Counts())

	holder.WorkerExited = true
	_, shared = r.CheckSharedGPUs(running(&r, "c4", "n1:1", "GPU-a"))
	assert.False(t, shared, "a worker that exited released its GPUs")
	holder.WorkerExited = false

	for i := range SharedGPUFreeStops {
		c := running(&r, "c"+string(rune('5'+i)), "n1:1", "GPU-a")
		s, shared = r.CheckSharedGPUs(c)
		require.True(t, shared)
	}
	assert.True(t, s.Counts, "the stop past %d on the node counts", SharedGPUFreeStops)
	assert.Contains(t, s.Event.Message, "counts as a failure")
	r.Completed(s.Later, decision.Exit{Status: contract.ExitStatusKilledByAppMaster, Class: contract.ExitKilledByAM})
	assert.Equal(t, contract.ExitFailed, s.Later.Exit.Class)
}

// TestGPUHoursOfTheRecords: every recorded container's GPUs times how long it ran, to now while it
// runs; one never launched holds none.
func TestGPUHoursOfTheRecords(t *testing.T) {
	now := t0
	r := NewRecords(10, func() time.Time { return now })
	assert.Zero(t, r.GPUHours(now))
	a := running(&r, "c1", "n1:1", "GPU-a", "GPU-b") // 2 GPUs from t0
	r.Accepted(alloc("c2"), nil, 0, false)           // launching: no GPU time yet
	now = t0.Add(30 * time.Minute)
	running(&r, "c3", "n1:1") // te's one yarn.io/gpu from t0+30m
	now = t0.Add(time.Hour)
	r.Completed(a, decision.Exit{Class: contract.ExitSucceeded})
	assert.InDelta(t, 2.0+0.5, r.GPUHours(now), 1e-9)
	assert.InDelta(t, 2.0+1.5, r.GPUHours(t0.Add(2*time.Hour)), 1e-9, "the ended one counts to its end, the running one to now")
}
