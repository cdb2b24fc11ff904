package am

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
)

// TestRegistrationPreflightReadsAsTheClients: what the RM said at registration is judged by the
// client's pre-flight (resources.Preflight), problem for problem in the same words.
func TestRegistrationPreflightReadsAsTheClients(t *testing.T) {
	const prefix = "TaskExecutor (taskexecutor.memory, taskexecutor.vcores, external resources): "
	types := []string{"memory-mb", "vcores", "yarn.io/gpu", "yarn.io/fpga"}
	max := contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4, "yarn.io/fpga": 2}
	keys := configKeys{"yarn.io/gpu": "external-resource.gpu.amount"}
	problems := func(err error) []string {
		t.Helper()
		var pe *resources.PreflightError
		require.ErrorAs(t, err, &pe)
		return pe.Problems
	}
	assert.NoError(t, checkAsk(te, keys, types, max))

	gpus := contract.Capability{"memory-mb": 16384, "vcores": 1, "yarn.io/gpu": 8}
	err := checkAsk(gpus, keys, types, max)
	assert.Equal(t, []string{
		prefix + "memory 16384 MB is more than the cluster's maximum allocation of 8192 MB (yarn.scheduler.maximum-allocation-mb); ask for less or raise the maximum",
		prefix + "external-resource.gpu.amount = 8 (yarn.io/gpu) is more than the cluster's maximum allocation of 4 yarn.io/gpu; ask for at most 4 or raise yarn.resource-types.yarn.io/gpu.maximum-allocation",
	}, problems(err))
	client := resources.Preflight(resources.Ask{TaskExecutor: gpus, AmountKeys: keys}, resources.ClusterInfo{ResourceTypes: types, Maximum: max})
	assert.Equal(t, client.Error(), err.Error(), "the client's words")

	assert.Equal(t, []string{prefix + "the ResourceManager does not know the resource type nvidia.com/gpu (did you mean \"yarn.io/gpu\"? nvidia.com/gpu is the Kubernetes device-plugin name; the YARN type is yarn.io/gpu); it knows yarn.io/fpga, yarn.io/gpu. " +
		"Add nvidia.com/gpu to yarn.resource-types in resource-types.xml (and give the NodeManagers an amount: yarn.nodemanager.resource-type.nvidia.com/gpu in node-resources.xml), " +
		"or name a type the cluster has in the config key"},
		problems(checkAsk(contract.Capability{"memory-mb": 512, "nvidia.com/gpu": 1}, nil, types, max)))
	assert.NoError(t, checkAsk(contract.Capability{"memory-mb": 512, "x": 1}, nil, nil, nil), "nothing to check against")
}
