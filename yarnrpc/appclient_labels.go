package yarnrpc

import (
	"context"
	"slices"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// GetClusterNodeLabels lists the node labels (partitions) added to the cluster, sorted by name; none
// when node labels are not enabled (docs/job-file.md#node-labels). An RM that sends only the bare
// names (field 1 of the response) has them returned as exclusive labels, YARN's default.
func (a *ApplicationClient) GetClusterNodeLabels(ctx context.Context) ([]*hadooppb.NodeLabelProto, error) {
	resp := &hadooppb.GetClusterNodeLabelsResponseProto{}
	if err := a.rpc.Call(ctx, "getClusterNodeLabels", &hadooppb.GetClusterNodeLabelsRequestProto{}, resp); err != nil {
		return nil, err
	}
	return ClusterNodeLabels(resp), nil
}

// ClusterNodeLabels reads a getClusterNodeLabels response: the labels with their attributes, else the
// bare names; sorted by name.
func ClusterNodeLabels(resp *hadooppb.GetClusterNodeLabelsResponseProto) []*hadooppb.NodeLabelProto {
	out := slices.Clone(resp.GetNodeLabels())
	if len(out) == 0 {
		for _, n := range resp.GetDeprecatedNodeLabels() {
			name := n
			out = append(out, &hadooppb.NodeLabelProto{Name: &name})
		}
	}
	slices.SortFunc(out, func(a, b *hadooppb.NodeLabelProto) int {
		switch {
		case a.GetName() < b.GetName():
			return -1
		case a.GetName() > b.GetName():
			return 1
		}
		return 0
	})
	return out
}
