package resources

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// preflight runs Preflight as the client does for a TaskExecutor: its memory and vcores plus the
// external resources of cfg (may be nil), whose keys the problems name.
func preflight(c contract.Capability, cfg *Config, cluster ClusterInfo) error {
	if cfg == nil {
		return Preflight(Ask{TaskExecutor: c}, cluster)
	}
	return Preflight(Ask{TaskExecutor: c.Add(cfg.YarnResources(), 1), AmountKeys: cfg.AmountKeys()}, cluster)
}

// te is the prefix of the problems of a TaskExecutor.
const te = "TaskExecutor (taskexecutor.memory, taskexecutor.vcores, external resources): "

func twoResources(t *testing.T) *Config {
	t.Helper()
	cfg, _, err := Parse(conf("external-resources=gpu;fpga",
		"external-resource.gpu.amount=2", "external-resource.gpu.yarn.config-key=yarn.io/gpu",
		"external-resource.fpga.amount=1", "external-resource.fpga.yarn.config-key=yarn.io/fpga"))
	require.NoError(t, err)
	return cfg
}

var miniCluster = ClusterInfo{
	ResourceTypes: []string{"memory-mb", "vcores", "yarn.io/gpu", "yarn.io/fpga"},
	Maximum:       contract.Capability{"memory-mb": 8192, "vcores": 4, "yarn.io/gpu": 4, "yarn.io/fpga": 2},
	Nodes: []NodeCapacity{
		{ID: "127.0.0.1:45454", Capability: contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4, "yarn.io/fpga": 2}},
		{ID: "127.0.0.2:45454", Capability: contract.Capability{"memory-mb": 4096, "vcores": 8, "yarn.io/gpu": 4, "yarn.io/fpga": 2}},
	},
}

func TestPreflightOK(t *testing.T) {
	assert.NoError(t, preflight(contract.Capability{"memory-mb": 2048, "vcores": 2}, twoResources(t), miniCluster))
	assert.NoError(t, preflight(contract.Capability{"memory-mb": 2048, "vcores": 2}, nil, miniCluster))
}

func TestPreflightUnknownType(t *testing.T) {
	cluster := miniCluster
	cluster.ResourceTypes = []string{"memory-mb", "vcores", "yarn.io/gpu"}
	err := preflight(contract.Capability{"memory-mb": 1024, "vcores": 1}, twoResources(t), ClusterInfo{ResourceTypes: cluster.ResourceTypes, Maximum: cluster.Maximum})
	var pe *PreflightError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, []string{
		te + "the ResourceManager does not know the resource type yarn.io/fpga (from external-resource.fpga.yarn.config-key); it knows yarn.io/gpu. " +
			"Add yarn.io/fpga to yarn.resource-types in resource-types.xml (and give the NodeManagers an amount: yarn.nodemanager.resource-type.yarn.io/fpga in node-resources.xml), " +
			"or name a type the cluster has in the config key",
	}, pe.Problems)
}

func TestPreflightOverMaximumAndNoNode(t *testing.T) {
	cfg, _, err := Parse(conf("external-resources=gpu", "external-resource.gpu.amount=6", "external-resource.gpu.yarn.config-key=yarn.io/gpu",
		"external-resource.gpu.driver-factory.class=test-strict"))
	require.NoError(t, err)
	err = preflight(contract.Capability{"memory-mb": 16384, "vcores": 6}, cfg, miniCluster)
	var pe *PreflightError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, []string{
		te + "memory 16384 MB is more than the cluster's maximum allocation of 8192 MB (yarn.scheduler.maximum-allocation-mb); ask for less or raise the maximum",
		te + "vcores 6 is more than the cluster's maximum allocation of 4 (yarn.scheduler.maximum-allocation-vcores); ask for fewer or raise the maximum",
		te + "external-resource.gpu.amount = 6 (yarn.io/gpu) is more than the cluster's maximum allocation of 4 yarn.io/gpu; ask for at most 4 or raise yarn.resource-types.yarn.io/gpu.maximum-allocation",
		te + "no single node can hold one TaskExecutor (memory 16384 MB, vcores 6, yarn.io/gpu 6); the largest node, 127.0.0.1:45454, has memory 8192 MB, vcores 8, yarn.io/fpga 2, yarn.io/gpu 4 (short: memory 16384 MB > 8192 MB, yarn.io/gpu 6 > 4)",
	}, pe.Problems)
	assert.Contains(t, err.Error(), "the cluster cannot run this job (4 problems):\n  - "+te+"memory 16384 MB")
}

func TestPreflightFitsMaximumButNoSingleNode(t *testing.T) {
	// The maximum allows 4 GPUs and 2 FPGAs, but no node has both 4 GPUs and 6 GB.
	cluster := miniCluster
	cluster.Nodes = []NodeCapacity{
		{ID: "a:1", Capability: contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 2}},
		{ID: "b:1", Capability: contract.Capability{"memory-mb": 4096, "vcores": 8, "yarn.io/gpu": 4, "yarn.io/fpga": 2}},
	}
	cfg, _, err := Parse(conf("external-resources=gpu", "external-resource.gpu.amount=4", "external-resource.gpu.yarn.config-key=yarn.io/gpu",
		"external-resource.gpu.driver-factory.class=test-strict"))
	require.NoError(t, err)
	err = preflight(contract.Capability{"memory-mb": 6144, "vcores": 2}, cfg, cluster)
	require.Error(t, err)
	assert.Equal(t, "the cluster cannot run this job: "+te+"no single node can hold one TaskExecutor (memory 6144 MB, vcores 2, yarn.io/gpu 4); "+
		"the largest node, a:1, has memory 8192 MB, vcores 8, yarn.io/gpu 2 (short: yarn.io/gpu 4 > 2)", err.Error())
}

// TestPreflightJudgesTheApplicationMasterToo: the AM's container is judged like a TaskExecutor's, its
// problems say so, and a gang is judged with the AM placed.
func TestPreflightJudgesTheApplicationMasterToo(t *testing.T) {
	ask := Ask{TaskExecutor: contract.Capability{"memory-mb": 1024, "vcores": 1},
		ApplicationMaster: contract.Capability{"memory-mb": 16384, "vcores": 1}}
	err := Preflight(ask, miniCluster)
	var pe *PreflightError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, []string{
		"ApplicationMaster (am.memory, am.vcores): memory 16384 MB is more than the cluster's maximum allocation of 8192 MB (yarn.scheduler.maximum-allocation-mb); ask for less or raise the maximum",
		"ApplicationMaster (am.memory, am.vcores): no single node can hold the ApplicationMaster (memory 16384 MB, vcores 1); the largest node, 127.0.0.1:45454, has memory 8192 MB, vcores 8, yarn.io/fpga 2, yarn.io/gpu 4 (short: memory 16384 MB > 8192 MB)",
	}, pe.Problems)

	ask = Ask{TaskExecutor: contract.Capability{"memory-mb": 4096, "vcores": 1}, ApplicationMaster: contract.Capability{"memory-mb": 1024, "vcores": 1},
		Instances: 3, Gang: true}
	err = Preflight(ask, miniCluster)
	require.ErrorAs(t, err, &pe)
	assert.Len(t, pe.Problems, 1)
	assert.Contains(t, pe.Problems[0], "taskexecutor.gang = true with taskexecutor.instances = 3: the cluster can hold at most 2 TaskExecutors")
	ask.Gang = false
	assert.NoError(t, Preflight(ask, miniCluster), "without gang the third waits for room")
}

// TestPreflightSuggestsTheYarnType: a Kubernetes device-plugin name pasted as the YARN type gets the
// YARN type of the same kind; a one-letter typo the closest type; another kind no suggestion.
func TestPreflightSuggestsTheYarnType(t *testing.T) {
	for yarnKey, want := range map[string]string{
		"nvidia.com/gpu":  `(did you mean "yarn.io/gpu"? nvidia.com/gpu is the Kubernetes device-plugin name; the YARN type is yarn.io/gpu)`,
		"amd.com/gpu":     `did you mean "yarn.io/gpu"?`,
		"xilinx.com/fpga": `did you mean "yarn.io/fpga"?`,
		"yarn.io/gpus":    `(did you mean "yarn.io/gpu"?)`,
		"yarn.io/asic":    "",
	} {
		err := Preflight(Ask{TaskExecutor: contract.Capability{"memory-mb": 512, "vcores": 1, yarnKey: 1}, Instances: 1},
			ClusterInfo{ResourceTypes: []string{"memory-mb", "vcores", "yarn.io/gpu", "yarn.io/fpga"}})
		if err == nil {
			t.Fatalf("%s: no error", yarnKey)
		}
		if want == "" && strings.Contains(err.Error(), "did you mean") || want != "" && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant %q", yarnKey, err, want)
		}
	}
}
