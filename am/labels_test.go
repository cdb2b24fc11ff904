package am

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// TestResourceRequestCarriesTheNodeLabel: taskexecutor.node-label is the "*" request's
// node_label_expression; without it the field is not sent (the queue's default partition).
func TestResourceRequestCarriesTheNodeLabel(t *testing.T) {
	c := resourceProto(contract.Capability{"memory-mb": 512, "vcores": 1})
	rr := book.AnyRequest(7, 3, c, 1, "gpu")
	require.NotNil(t, rr.NodeLabelExpression)
	assert.Equal(t, "gpu", rr.GetNodeLabelExpression())
	assert.Equal(t, "*", rr.GetResourceName())
	assert.Equal(t, int32(3), rr.GetNumContainers())
	assert.Equal(t, int64(7), rr.GetAllocationRequestId())

	assert.Nil(t, book.AnyRequest(7, 3, c, 1, "").NodeLabelExpression)
}

// TestLocalityRequestsCarryTheLabelOnStarOnly: the RM refuses a label expression on a host or rack
// request, so spreading keeps it on the "*" request only.
func TestLocalityRequestsCarryTheLabelOnStarOnly(t *testing.T) {
	reqs := book.LocalityRequests(book.AnyRequest(1, 2, resourceProto(contract.Capability{"memory-mb": 512, "vcores": 1}), 1, "gpu"), []book.HostShare{{Host: "h1", Rack: "/r1", Count: 2}}, nil)
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		if r.GetResourceName() == "*" {
			assert.Equal(t, "gpu", r.GetNodeLabelExpression())
		} else {
			assert.Nil(t, r.NodeLabelExpression, r.GetResourceName())
		}
	}
}

func labelledNode(host string, gpus int64, labels ...string) *hadooppb.NodeReportProto {
	n := node(host, 1, gpus, 0, hadooppb.NodeStateProto_NS_RUNNING)
	n.NodeLabels = labels
	return n
}

// TestEvidenceCountsOnlyThePartition: with a node label the evidence counts the partition's nodes
// only, and its message names the partition.
func TestEvidenceCountsOnlyThePartition(t *testing.T) {
	nodes := []*hadooppb.NodeReportProto{labelledNode("a", 8), labelledNode("g", 2, "gpu"), labelledNode("f", 4, "fpga")}
	assert.Len(t, inPartition(nodes, ""), 3, "no label: every node")
	in := inPartition(nodes, "gpu")
	require.Len(t, in, 1)
	asked := contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 4}
	ev := buildEvidence(asked, 1, time.Minute, in, nil)
	ev.Partition = "gpu"
	assert.Equal(t, 1, ev.Nodes)
	assert.Equal(t, int64(2), ev.ClusterTotal["yarn.io/gpu"])
	assert.Equal(t, "g:1", ev.LargestNode)
	msg := events.NotEnoughResources(ev, decision.PendingWait).Message
	assert.Contains(t, msg, `node-label partition "gpu" (1 nodes) total`)
	assert.NotContains(t, msg, "cluster (")
	assert.Empty(t, inPartition(nodes, "tpu"))
}
