package yarnrpc

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// GetQueueTree returns a queue with its child queues (getQueueInfo with includeChildQueues; recursive:
// the whole subtree), without applications. The RM answers a queue it does not know with an empty
// QueueInfo (no name), not an error. A queue with child queues is a parent queue, which takes no
// applications (TestQueuePreflightAgainstTheMiniCluster).
func (a *ApplicationClient) GetQueueTree(ctx context.Context, queue string, recursive bool) (*hadooppb.QueueInfoProto, error) {
	req := &hadooppb.GetQueueInfoRequestProto{
		QueueName:           proto.String(queue),
		IncludeApplications: proto.Bool(false),
		IncludeChildQueues:  proto.Bool(true),
		Recursive:           proto.Bool(recursive),
	}
	resp := &hadooppb.GetQueueInfoResponseProto{}
	if err := a.rpc.Call(ctx, "getQueueInfo", req, resp); err != nil {
		return nil, err
	}
	return resp.GetQueueInfo(), nil
}

// LeafQueues lists the leaf queues of a queue tree, by path where the RM gives one (Hadoop 3.3+:
// root.team.a), else by name, in tree order.
func LeafQueues(q *hadooppb.QueueInfoProto) []string {
	if q == nil || q.GetQueueName() == "" {
		return nil
	}
	if len(q.GetChildQueues()) == 0 {
		if p := q.GetQueuePath(); p != "" {
			return []string{p}
		}
		return []string{q.GetQueueName()}
	}
	var out []string
	for _, c := range q.GetChildQueues() {
		out = append(out, LeafQueues(c)...)
	}
	return out
}
