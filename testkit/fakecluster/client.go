package fakecluster

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// Resource is a ResourceProto of memory, vcores and GPUs (yarn.io/gpu).
func Resource(mem int64, vcores int32, gpus int64) *hadooppb.ResourceProto {
	return &hadooppb.ResourceProto{Memory: proto.Int64(mem), VirtualCores: proto.Int32(vcores),
		ResourceValueMap: []*hadooppb.ResourceInformationProto{{Key: proto.String("yarn.io/gpu"), Value: proto.Int64(gpus)}}}
}

// ClientPort serves the RM's client port (SIMPLE auth) over Hadoop RPC until the test ends and
// returns it (c.Client): new applications get application_1700000000000_0001 and NewAppMax,
// getClusterNodes answers NodeReports, getApplicationReport Reports in turn (ApplicationNotFound while
// there is none), getQueueInfo knows Queues, getApplications answers ListResp.
func (c *Cluster) ClientPort(tb testing.TB) *rpctest.Server {
	tb.Helper()
	srv, err := rpctest.NewServer(rpctest.Options{Simple: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	c.Client = srv
	p := yarnrpc.ApplicationClientProtocol
	srv.Handle(p, "getResourceTypeInfo", func(context.Context, *rpctest.Request) (proto.Message, error) {
		c.Mu.Lock()
		defer c.Mu.Unlock()
		var infos []*hadooppb.ResourceTypeInfoProto
		for _, n := range c.Types {
			infos = append(infos, &hadooppb.ResourceTypeInfoProto{Name: proto.String(n)})
		}
		return &hadooppb.GetAllResourceTypeInfoResponseProto{ResourceTypeInfo: infos}, nil
	})
	srv.Handle(p, "getNewApplication", func(context.Context, *rpctest.Request) (proto.Message, error) {
		c.Mu.Lock()
		defer c.Mu.Unlock()
		return &hadooppb.GetNewApplicationResponseProto{
			ApplicationId:     &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1700000000000), Id: proto.Int32(1)},
			MaximumCapability: c.NewAppMax,
		}, nil
	})
	srv.Handle(p, "getClusterNodes", func(context.Context, *rpctest.Request) (proto.Message, error) {
		c.Mu.Lock()
		defer c.Mu.Unlock()
		return &hadooppb.GetClusterNodesResponseProto{NodeReports: c.NodeReports}, nil
	})
	srv.Handle(p, "getApplicationReport", func(context.Context, *rpctest.Request) (proto.Message, error) {
		c.Mu.Lock()
		defer c.Mu.Unlock()
		if len(c.Reports) == 0 {
			return nil, &rpctest.Exception{Class: "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException", Message: "Application with id 'x' doesn't exist in RM."}
		}
		i := min(c.ReportCalls, len(c.Reports)-1)
		c.ReportCalls++
		return &hadooppb.GetApplicationReportResponseProto{ApplicationReport: c.Reports[i]}, nil
	})
	srv.Handle(p, "getQueueInfo", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
		req := &hadooppb.GetQueueInfoRequestProto{}
		if err := r.Decode(req); err != nil {
			return nil, err
		}
		c.Mu.Lock()
		defer c.Mu.Unlock()
		qi := &hadooppb.QueueInfoProto{} // what the RM answers for a queue it does not have
		if slices.Contains(c.Queues, req.GetQueueName()) {
			qi.QueueName = proto.String(req.GetQueueName())
		}
		return &hadooppb.GetQueueInfoResponseProto{QueueInfo: qi}, nil
	})
	srv.Handle(p, "getApplications", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
		req := &hadooppb.GetApplicationsRequestProto{}
		if err := r.Decode(req); err != nil {
			return nil, err
		}
		c.Mu.Lock()
		defer c.Mu.Unlock()
		c.ListReq = req
		return &hadooppb.GetApplicationsResponseProto{Applications: c.ListResp}, nil
	})
	return srv
}
