package am

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func node(host string, port int32, capGPU, usedGPU int64, state hadooppb.NodeStateProto) *hadooppb.NodeReportProto {
	gpu := func(n int64) *hadooppb.ResourceProto {
		return resourceProto(contract.Capability{"memory-mb": 4096, "vcores": 8, "yarn.io/gpu": n, "yarn.io/fpga": 2})
	}
	return &hadooppb.NodeReportProto{NodeId: &hadooppb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(port)},
		Capability: gpu(capGPU), Used: gpu(usedGPU), NodeState: state.Enum()}
}

func TestBuildEvidence(t *testing.T) {
	asked := contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 4}
	nodes := []*hadooppb.NodeReportProto{
		node("a", 1, 4, 4, hadooppb.NodeStateProto_NS_RUNNING),
		node("b", 2, 4, 4, hadooppb.NodeStateProto_NS_RUNNING),
		node("c", 3, 8, 0, hadooppb.NodeStateProto_NS_LOST),
	}
	ev := buildEvidence(asked, 1, 30*time.Second, nodes, resourceProto(contract.Capability{"memory-mb": 100, "vcores": 1, "yarn.io/gpu": 0}))
	assert.Equal(t, 2, ev.Nodes, "lost nodes are not capacity")
	assert.Equal(t, int64(8), ev.ClusterTotal["yarn.io/gpu"])
	assert.Equal(t, int64(0), ev.ClusterFree["yarn.io/gpu"])
	assert.NotContains(t, ev.ClusterTotal, "yarn.io/fpga", "only the types asked for are evidence")
	assert.Equal(t, "a:1", ev.LargestNode)
	assert.Equal(t, int64(4), ev.LargestCap["yarn.io/gpu"])
	assert.Equal(t, "30s", ev.PendingFor)
	assert.Equal(t, int64(0), ev.Headroom["yarn.io/gpu"])
	assert.Equal(t, "node reports", ev.Source)
	msg := events.NotEnoughResources(ev, decision.PendingWait).Message
	assert.Contains(t, msg, "cluster (2 nodes) total memory-mb=8192 vcores=16 yarn.io/gpu=8, free memory-mb=0 vcores=0 yarn.io/gpu=0")
}

func TestRejectionNamesTheKeyAndTheMaximum(t *testing.T) {
	keys := configKeys{"yarn.io/gpu": "external-resource.gpu.amount"}
	c := contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 5}
	max := contract.Capability{"memory-mb": 8192, "vcores": 4, "yarn.io/gpu": 4}

	ev, ok := rejection(c, max, keys, nil)
	require.True(t, ok, "the register response's maximum is enough to know before asking")
	assert.Equal(t, "external-resource.gpu.amount", ev.Key)
	assert.Equal(t, int64(5), ev.Requested)
	assert.Equal(t, int64(4), *ev.Maximum)
	assert.Contains(t, ev.Message, "external-resource.gpu.amount = 5, but the cluster allows at most 4 yarn.io/gpu")

	_, ok = rejection(contract.Capability{"memory-mb": 512, "yarn.io/gpu": 4}, max, keys, nil)
	assert.False(t, ok)

	ev, ok = rejection(contract.Capability{"memory-mb": 99999}, max, keys, nil)
	require.True(t, ok)
	assert.Equal(t, "taskexecutor.memory", ev.Key)

	ev, ok = rejection(contract.Capability{"example.com/tpu": 1}, max, configKeys{"example.com/tpu": "external-resource.tpu.amount"}, nil)
	require.True(t, ok)
	assert.Contains(t, ev.Message, "does not know")

	// Without a known maximum: the RM's message names the type and the maximum.
	rmErr := fmt.Errorf("allocate: %w", &yarnrpc.RemoteError{Class: "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException",
		Message: "Invalid resource request! Cannot allocate containers as requested resource is greater than maximum allowed allocation. Requested resource type=[yarn.io/gpu], Requested resource=<memory:512, vCores:1, yarn.io/gpu: 5>, maximum allowed allocation=<memory:8192, vCores:4, yarn.io/gpu: 4>, please note that maximum allowed allocation is calculated by scheduler based on maximum resource of registered NodeManagers, which might be less than configured maximum allocation=<memory:8192, vCores:4, yarn.io/gpu: 8>"})
	ev, ok = rejection(c, nil, keys, rmErr)
	require.True(t, ok)
	assert.Equal(t, "external-resource.gpu.amount", ev.Key)
	require.NotNil(t, ev.Maximum)
	assert.Equal(t, int64(4), *ev.Maximum, "the allowed maximum, not the configured one that follows it")
	assert.True(t, isRejection(rmErr))

	// The registration's maximum (8) allowed the ask; the scheduler's, in the refusal, is lower.
	ev, ok = rejection(c, contract.Capability{"memory-mb": 8192, "vcores": 4, "yarn.io/gpu": 8}, keys, rmErr)
	require.True(t, ok)
	assert.Equal(t, int64(4), *ev.Maximum, "the RM's reason for this refusal wins over the registration's maximum")

	// No NodeManager has a GPU: the RM's maximum leaves the zero out.
	rmErr = fmt.Errorf("allocate: %w", &yarnrpc.RemoteError{Class: "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException",
		Message: "Invalid resource request! Cannot allocate containers as requested resource is greater than maximum allowed allocation. Requested resource type=[yarn.io/gpu], Requested resource=<memory:512, vCores:1, yarn.io/gpu: 5>, maximum allowed allocation=<memory:8192, vCores:4>, please note that maximum allowed allocation is calculated by scheduler based on maximum resource of registered NodeManagers, which might be less than configured maximum allocation=<memory:8192, vCores:4, yarn.io/gpu: 8>"})
	ev, ok = rejection(c, nil, keys, rmErr)
	require.True(t, ok)
	require.NotNil(t, ev.Maximum)
	assert.Equal(t, int64(0), *ev.Maximum)

	ev, ok = rejection(c, nil, keys, fmt.Errorf("x: %w: something else", yarnrpc.ErrResourceNotFound))
	require.True(t, ok)
	assert.Contains(t, ev.Message, "rejected the TaskExecutor request")
	_, ok = rejection(c, nil, keys, fmt.Errorf("connection reset"))
	assert.False(t, ok)
}

func TestRejectionWithoutAMaximumDoesNotClaimAnUnknownType(t *testing.T) {
	rmErr := fmt.Errorf("allocate: %w", &yarnrpc.RemoteError{Class: "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException",
		Message: "Invalid resource request, requested resource type=[yarn.io/gpu] < 0 or greater than maximum allowed allocation."})
	ev, ok := rejection(contract.Capability{"memory-mb": 512, "yarn.io/gpu": 9}, nil, configKeys{"yarn.io/gpu": "external-resource.gpu.amount"}, rmErr)
	require.True(t, ok)
	assert.Equal(t, "external-resource.gpu.amount", ev.Key)
	assert.Contains(t, ev.Message, "external-resource.gpu.amount = 9 is more than the cluster allows for yarn.io/gpu")
	assert.NotContains(t, ev.Message, "does not know")
}
