package yarnrpc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// TestClusterNodeLabels: the labels with attributes win; an RM that sends only names gets them as
// exclusive labels; both come back sorted.
func TestClusterNodeLabels(t *testing.T) {
	resp := &hadooppb.GetClusterNodeLabelsResponseProto{
		DeprecatedNodeLabels: []string{"x"},
		NodeLabels: []*hadooppb.NodeLabelProto{
			{Name: proto.String("gpu"), IsExclusive: proto.Bool(false)},
			{Name: proto.String("fpga")},
		},
	}
	got := ClusterNodeLabels(resp)
	assert.Equal(t, []string{"fpga", "gpu"}, []string{got[0].GetName(), got[1].GetName()})
	assert.True(t, got[0].GetIsExclusive(), "exclusive is YARN's default")
	assert.False(t, got[1].GetIsExclusive())

	got = ClusterNodeLabels(&hadooppb.GetClusterNodeLabelsResponseProto{DeprecatedNodeLabels: []string{"b", "a"}})
	assert.Equal(t, []string{"a", "b"}, []string{got[0].GetName(), got[1].GetName()})
	assert.Empty(t, ClusterNodeLabels(&hadooppb.GetClusterNodeLabelsResponseProto{}))
}
