package resources

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/contract"
)

func TestGangCapacityPacksNodeByNode(t *testing.T) {
	node := func(id string, mem int64, gpus int64) NodeCapacity {
		return NodeCapacity{ID: id, Capability: contract.Capability{"memory-mb": mem, "vcores": 8, "yarn.io/gpu": gpus}}
	}
	nodes := []NodeCapacity{node("n1:1", 8192, 4), node("n2:1", 8192, 4)}
	te := contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": 3}
	am := contract.Capability{"memory-mb": 1024, "vcores": 1}

	// 8 GPUs in total, but 3 per TaskExecutor: one per node, 2 in all; a gang of 3 can never run.
	n, why := GangCapacity(te, am, 3, nodes)
	assert.Equal(t, 2, n)
	assert.Contains(t, why, "taskexecutor.instances = 3: the cluster can hold at most 2 TaskExecutors of memory-mb=1024, vcores=1, yarn.io/gpu=3")
	assert.Contains(t, why, "n1:1 holds 1; n2:1 holds 1")
	assert.Contains(t, why, "1 short")

	n, why = GangCapacity(te, am, 2, nodes)
	assert.Equal(t, 2, n)
	assert.Empty(t, why)

	// Memory: 3 GiB each fits twice per 8 GiB node, and the AM's 1 GiB still leaves room for two.
	te = contract.Capability{"memory-mb": 3072, "vcores": 1, "yarn.io/gpu": 1}
	n, _ = GangCapacity(te, am, 4, nodes)
	assert.Equal(t, 4, n)
	// 4 GiB each: two per node, but the AM takes one node's second slot.
	te["memory-mb"] = 4096
	n, why = GangCapacity(te, am, 4, nodes)
	assert.Equal(t, 3, n)
	assert.Contains(t, why, "besides the ApplicationMaster")
}
