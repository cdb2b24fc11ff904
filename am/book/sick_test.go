package book

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// TestSickGPUReadEndsTheContainerAndCountsTheNode: the newest sample's first unhealthy reading is the
// one acted on; each reading books the GPU sick on its node (a GPU read twice counts once), the
// container's end is aborted (not counted) and the event names the GPU, the node's count and the
// limit.
func TestSickGPUReadEndsTheContainerAndCountsTheNode(t *testing.T) {
	_, _, ok := Unhealthy(contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{{UUID: "GPU-a"}}}}})
	assert.False(t, ok, "healthy")
	g, why, ok := Unhealthy(contract.AliveReport{GPUSamples: []contract.GPUSample{
		{GPUs: []contract.GPUReading{{UUID: "GPU-old", Sick: "xid=79"}}},
		{GPUs: []contract.GPUReading{{UUID: "GPU-a"}, {UUID: "GPU-b", Index: 1, Sick: "ecc.errors.uncorrected=3"}, {UUID: "GPU-c", Sick: "xid=48"}}},
	}})
	require.True(t, ok)
	assert.Equal(t, "GPU-b", g.UUID, "the newest sample's first")
	assert.Equal(t, "ecc.errors.uncorrected=3", why)

	var s SickGPUs // nil until the first: Read makes it
	r := NewRecords(10, nil)
	c := running(&r, "c1", "n1:1", "GPU-b")
	n, exit, ev := s.Read(c, g, why, 2)
	assert.Equal(t, 1, n)
	assert.Equal(t, contract.ExitAborted, exit.Class)
	assert.False(t, exit.Class.Counts(), "not the worker's failure")
	assert.Equal(t, "its GPU 1 (GPU-b) on n1:1 is unhealthy: ecc.errors.uncorrected=3", exit.Diagnostics)
	assert.Equal(t, contract.EventGPUUnhealthy, ev.Type)
	assert.Equal(t, "c1", ev.Container)
	assert.Equal(t, "GPU-b", ev.Reason)
	assert.Equal(t, 1, ev.Count)
	assert.Contains(t, ev.Message, "at 2 (taskexecutor.sick-gpus-per-node) the node is excluded")
	n, _, _ = s.Read(c, g, why, 2)
	assert.Equal(t, 1, n, "the same GPU again")
	n, _, ev = s.Read(c, contract.GPUReading{UUID: "GPU-c"}, "xid=48", 0)
	assert.Equal(t, 2, n)
	assert.Contains(t, ev.Message, "taskexecutor.sick-gpus-per-node is off")
}
