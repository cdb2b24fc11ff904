package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
)

// TestPreflightRefusesAGangTheClusterCanNeverHold: 2 nodes of 4 GPUs hold 8 GPUs, but a gang of 3
// TaskExecutors of 3 GPUs each fits one per node only.
func TestPreflightRefusesAGangTheClusterCanNeverHold(t *testing.T) {
	node := func(id string) resources.NodeCapacity {
		return resources.NodeCapacity{ID: id, Capability: contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4}}
	}
	facts := &ClusterFacts{QueueKnown: true, Info: resources.ClusterInfo{ResourceTypes: []string{"memory-mb", "vcores", "yarn.io/gpu"},
		Maximum: contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4}, Nodes: []resources.NodeCapacity{node("n1:1"), node("n2:1")}}}
	body := func(gang string) string {
		return `"external-resources" = "gpu"
"external-resource.gpu.amount" = 3
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
[taskexecutor]
command = "./worker"
instances = 3
` + gang
	}
	lj, err := LoadJob(writeJob(t, body("gang = true\n")), JobOptions{})
	require.NoError(t, err)
	err = Preflight(lj, facts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "taskexecutor.gang = true with taskexecutor.instances = 3: the cluster can hold at most 2 TaskExecutors")

	lj, err = LoadJob(writeJob(t, body("")), JobOptions{})
	require.NoError(t, err)
	assert.NoError(t, Preflight(lj, facts), "without gang the third waits for room, as any job does")
}
