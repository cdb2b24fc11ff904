package resources

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/contract"
)

// TestPreflightElasticGangNeedsItsMinimumOnly: 8 GPUs hold 8 one-GPU TaskExecutors; a rigid gang of
// 10 can never run, an elastic one of 2 to 10 can (docs/running.md#elastic-gangs), one of 9 to 10
// cannot, and the problem names min-instances.
func TestPreflightElasticGangNeedsItsMinimumOnly(t *testing.T) {
	ask := Ask{TaskExecutor: contract.Capability{"memory-mb": 256, "vcores": 1, "yarn.io/gpu": 1},
		ApplicationMaster: contract.Capability{"memory-mb": 256, "vcores": 1}, Instances: 10, Gang: true}
	err := Preflight(ask, miniCluster)
	assert.ErrorContains(t, err, "taskexecutor.gang = true with taskexecutor.instances = 10: the cluster can hold at most 8")

	ask.MinInstances = 2
	assert.NoError(t, Preflight(ask, miniCluster))

	ask.MinInstances = 9
	err = Preflight(ask, miniCluster)
	assert.ErrorContains(t, err, "taskexecutor.gang = true with taskexecutor.min-instances = 9: the cluster can hold at most 8")
	assert.ErrorContains(t, err, "lower min-instances or the per-TaskExecutor amounts")
}
