package yarnrpc

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// ApplicationClientProtocol is the protocol name of the RM's client port.
const ApplicationClientProtocol = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB"

// applicationClientIdempotent lists the read-only calls of ApplicationClientProtocol, which may be
// re-sent after a broken connection. submitApplication is also safe to repeat in Hadoop (the RM ignores a
// second submission of the same application id) and forceKillApplication is idempotent by design.
var applicationClientIdempotent = []string{
	"getNewApplication", "getApplicationReport", "getApplications", "getClusterMetrics", "getClusterNodes",
	"getResourceTypeInfo", "getQueueInfo", "forceKillApplication", "submitApplication",
}

// ApplicationClient is a typed client of the ResourceManager's ApplicationClientProtocol (the port of
// yarn.resourcemanager.address), with HA failover across the configured RMs.
type ApplicationClient struct {
	rpc *Client
}

// CurrentUser returns the user Hadoop calls are made as without Kerberos: HADOOP_USER_NAME if set, else
// the OS user.
func CurrentUser() string {
	if u := os.Getenv(hadoop.EnvUserName); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "nobody"
}

// ClientOption adjusts the ClientOptions a typed client is built with, e.g. FailFast for client
// commands.
type ClientOption func(*ClientOptions)

// FailFast makes a client give up within seconds on servers that cannot serve at all (see
// ClientOptions.FailFast) and report progress through progress (nil: logged at INFO) while a
// server stays silent; for commands a person waits on, with the command's timeout as the
// context's deadline.
func FailFast(progress func(msg string)) ClientOption {
	return func(o *ClientOptions) {
		o.FailFast = true
		o.Progress = progress
	}
}

// NewApplicationClient builds a client for the RMs named in conf. With a zero Auth, SIMPLE
// authentication as CurrentUser is used. Without options it is patient, as the AM needs.
func NewApplicationClient(conf *Config, auth Auth, opts ...ClientOption) (*ApplicationClient, error) {
	eps, err := conf.RMEndpoints(RMClient)
	if err != nil {
		return nil, err
	}
	co, err := conf.ConnDefaults()
	if err != nil {
		return nil, err
	}
	if auth == (Auth{}) {
		auth = SimpleAuth(CurrentUser())
	}
	co.Protocol = ApplicationClientProtocol
	co.Auth = auth
	o := ClientOptions{ConnOptions: co, IdempotentMethods: applicationClientIdempotent, Role: "ResourceManager", Endpoints: eps}
	for _, e := range eps {
		o.Addresses = append(o.Addresses, e.Addr)
	}
	for _, f := range opts {
		f(&o)
	}
	c, err := NewClient(o)
	if err != nil {
		return nil, err
	}
	return &ApplicationClient{rpc: c}, nil
}

// Close closes the client's connections.
func (a *ApplicationClient) Close() error { return a.rpc.Close() }

// Active returns the RM address calls currently go to.
func (a *ApplicationClient) Active() string { return a.rpc.Active() }

// GetNewApplication asks the RM for a new application id and the cluster's maximum container size.
func (a *ApplicationClient) GetNewApplication(ctx context.Context) (*hadooppb.GetNewApplicationResponseProto, error) {
	resp := &hadooppb.GetNewApplicationResponseProto{}
	return resp, a.rpc.Call(ctx, "getNewApplication", &hadooppb.GetNewApplicationRequestProto{}, resp)
}

// SubmitApplication submits an application described by sc.
func (a *ApplicationClient) SubmitApplication(ctx context.Context, sc *hadooppb.ApplicationSubmissionContextProto) error {
	req := &hadooppb.SubmitApplicationRequestProto{ApplicationSubmissionContext: sc}
	return a.rpc.Call(ctx, "submitApplication", req, &hadooppb.SubmitApplicationResponseProto{})
}

// GetApplicationReport returns the RM's report of one application; an unknown id gives an error that
// matches ErrApplicationNotFound.
func (a *ApplicationClient) GetApplicationReport(ctx context.Context, id *hadooppb.ApplicationIdProto) (*hadooppb.ApplicationReportProto, error) {
	resp := &hadooppb.GetApplicationReportResponseProto{}
	if err := a.rpc.Call(ctx, "getApplicationReport", &hadooppb.GetApplicationReportRequestProto{ApplicationId: id}, resp); err != nil {
		return nil, err
	}
	return resp.GetApplicationReport(), nil
}

// GetApplications lists applications; req may filter by type, state, tags, queue and user.
func (a *ApplicationClient) GetApplications(ctx context.Context, req *hadooppb.GetApplicationsRequestProto) ([]*hadooppb.ApplicationReportProto, error) {
	if req == nil {
		req = &hadooppb.GetApplicationsRequestProto{}
	}
	resp := &hadooppb.GetApplicationsResponseProto{}
	if err := a.rpc.Call(ctx, "getApplications", req, resp); err != nil {
		return nil, err
	}
	return resp.GetApplications(), nil
}

// KillApplication asks the RM to kill an application (forceKillApplication). It returns whether the
// RM reports the kill as completed; a kill is asynchronous, so callers poll the report for KILLED.
func (a *ApplicationClient) KillApplication(ctx context.Context, id *hadooppb.ApplicationIdProto, diagnostics string) (bool, error) {
	req := &hadooppb.KillApplicationRequestProto{ApplicationId: id}
	if diagnostics != "" {
		req.Diagnostics = proto.String(diagnostics)
	}
	resp := &hadooppb.KillApplicationResponseProto{}
	if err := a.rpc.Call(ctx, "forceKillApplication", req, resp); err != nil {
		return false, err
	}
	return resp.GetIsKillCompleted(), nil
}

// GetClusterMetrics returns the cluster's NodeManager counts.
func (a *ApplicationClient) GetClusterMetrics(ctx context.Context) (*hadooppb.YarnClusterMetricsProto, error) {
	resp := &hadooppb.GetClusterMetricsResponseProto{}
	if err := a.rpc.Call(ctx, "getClusterMetrics", &hadooppb.GetClusterMetricsRequestProto{}, resp); err != nil {
		return nil, err
	}
	return resp.GetClusterMetrics(), nil
}

// GetClusterNodes lists the NodeManagers in the given states (all states when none are given).
func (a *ApplicationClient) GetClusterNodes(ctx context.Context, states ...hadooppb.NodeStateProto) ([]*hadooppb.NodeReportProto, error) {
	resp := &hadooppb.GetClusterNodesResponseProto{}
	if err := a.rpc.Call(ctx, "getClusterNodes", &hadooppb.GetClusterNodesRequestProto{NodeStates: states}, resp); err != nil {
		return nil, err
	}
	return resp.GetNodeReports(), nil
}

// GetResourceTypeInfo lists the resource types the RM knows (memory-mb, vcores, yarn.io/gpu, ...).
// RMs older than Hadoop 3.0 do not have the call; their error matches ErrNoSuchMethod.
func (a *ApplicationClient) GetResourceTypeInfo(ctx context.Context) ([]*hadooppb.ResourceTypeInfoProto, error) {
	resp := &hadooppb.GetAllResourceTypeInfoResponseProto{}
	if err := a.rpc.Call(ctx, "getResourceTypeInfo", &hadooppb.GetAllResourceTypeInfoRequestProto{}, resp); err != nil {
		return nil, err
	}
	return resp.GetResourceTypeInfo(), nil
}

// GetQueueInfo returns one queue's information (capacity, state, applications when asked).
func (a *ApplicationClient) GetQueueInfo(ctx context.Context, queue string, includeApps bool) (*hadooppb.QueueInfoProto, error) {
	req := &hadooppb.GetQueueInfoRequestProto{
		QueueName:           proto.String(queue),
		IncludeApplications: proto.Bool(includeApps),
		IncludeChildQueues:  proto.Bool(false),
		Recursive:           proto.Bool(false),
	}
	resp := &hadooppb.GetQueueInfoResponseProto{}
	if err := a.rpc.Call(ctx, "getQueueInfo", req, resp); err != nil {
		return nil, err
	}
	return resp.GetQueueInfo(), nil
}

// FormatApplicationID renders an id as YARN prints it: application_<clusterTimestamp>_<id, 4+ digits>.
func FormatApplicationID(id *hadooppb.ApplicationIdProto) string {
	return fmt.Sprintf("application_%d_%04d", id.GetClusterTimestamp(), id.GetId())
}

// ParseApplicationID parses application_<clusterTimestamp>_<id>.
func ParseApplicationID(s string) (*hadooppb.ApplicationIdProto, error) {
	parts := strings.Split(s, "_")
	if len(parts) != 3 || parts[0] != "application" {
		return nil, fmt.Errorf("%q is not an application id; want application_<clusterTimestamp>_<number>, e.g. application_1700000000000_0001", s)
	}
	ts, err1 := strconv.ParseInt(parts[1], 10, 64)
	n, err2 := strconv.ParseInt(parts[2], 10, 32)
	// The RM numbers applications from 1 (its counter is incremented before the first id is made).
	if err1 != nil || err2 != nil || ts <= 0 || n < 1 {
		return nil, fmt.Errorf("%q is not an application id; want application_<clusterTimestamp>_<number>, e.g. application_1700000000000_0001", s)
	}
	return &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(ts), Id: proto.Int32(int32(n))}, nil
}

// ResourceAmounts flattens a YARN resource into name → amount, with memory as "memory-mb" and vcores
// as "vcores" (the names resource-types.xml uses), plus every entry of its resource_value_map.
func ResourceAmounts(r *hadooppb.ResourceProto) map[string]int64 {
	out := map[string]int64{"memory-mb": r.GetMemory(), "vcores": int64(r.GetVirtualCores())}
	for _, ri := range r.GetResourceValueMap() {
		switch ri.GetKey() {
		case "memory-mb", "memory":
			out["memory-mb"] = ri.GetValue()
		case "vcores":
			out["vcores"] = ri.GetValue()
		default:
			out[ri.GetKey()] = ri.GetValue()
		}
	}
	return out
}

// NodeAddress renders a node id as host:port.
func NodeAddress(id *hadooppb.NodeIdProto) string {
	return fmt.Sprintf("%s:%d", id.GetHost(), id.GetPort())
}
