// Package fakecluster is the one fake YARN cluster of the tests of the AM (package am) and of the
// client (cmd/yarn-am): a ResourceManager's scheduler port (registerApplicationMaster, allocate,
// finishApplicationMaster), its client port (getNewApplication, getClusterNodes,
// getApplicationReport, getQueueInfo, getApplications, getResourceTypeInfo) and a NodeManager fleet
// (startContainers, stopContainers), sharing the state of the containers the "cluster" runs. Each is
// served over Hadoop RPC by yarnrpc/rpctest (TOKEN auth on the scheduler port and the NodeManager,
// SIMPLE on the client port) or called in process (Scheduler, NodeManagers), for benchmarks that
// measure the AM without the RPC stack.
//
// Knobs (the exported fields above Mu's state) shape the cluster; set them before the AM starts, or
// later with Mu held. It is a test double, not a scheduler: it grants what is asked by the "*"
// request's count, as fast as PerAllocate and MaxAllocations let it, and completes a started
// container after RunHeartbeats more allocates with the exit status ExitCode says. GPUNodes adds a
// small node model (nodes.go: GPU capacity, the blacklist, node reports) for the AM's scenario tests.
package fakecluster

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// Tokens of the fake cluster: the AM-RM token the AM starts with, the one a roll-over hands out, and
// the NodeManagers' token.
var (
	AMRMID  = []byte("amrm-token-1")
	AMRMPW  = []byte("amrm-password-1")
	AMRMID2 = []byte("amrm-token-2")
	AMRMPW2 = []byte("amrm-password-2")
	NMTokID = []byte("nm-token-1")
	NMTokPW = []byte("nm-password-1")
)

// Cluster is the fake cluster. Mu guards every field; the knobs are read under it at every call.
type Cluster struct {
	// Scheduler is the RM's scheduler port and NM the NodeManager fleet, both with TOKEN auth (nil
	// with InProcess). Client is the RM's client port (nil until ClientPort).
	Scheduler, NM, Client *rpctest.Server
	// Node is the node every container runs on (the NM server's address), unless Nodes lists several:
	// then allocations go round-robin over them.
	Node  *hadooppb.NodeIdProto
	Nodes []*hadooppb.NodeIdProto
	App   *hadooppb.ApplicationIdProto
	Att   *hadooppb.ApplicationAttemptIdProto

	Mu sync.Mutex

	// Knobs.
	ExitCode          func(n int) int32       // exit status of the n-th started container (0-based)
	MisfitFirst       int                     // the first MisfitFirst allocations come without GPUs
	NotRegisteredAt   int                     // the allocate call (1-based) that fails with ApplicationMasterNotRegistered
	ResyncAt          int                     // the allocate call (1-based) answered with AM_RESYNC (the RM forgot the attempt's requests)
	RollTokenAt       int                     // the allocate call (1-based) whose response carries a new AM-RM token
	RefuseStarts      int                     // the NM refuses the first RefuseStarts startContainers requests
	Maximum           *hadooppb.ResourceProto // registration's maximumCapability
	RejectAsks        bool                    // allocate answers InvalidResourceRequestException to any ask
	MaxAllocations    int                     // allocate grants no more than this many containers in all (0: no limit)
	PerAllocate       int                     // allocate grants no more than this many containers per call (0: no limit)
	RepeatAllocations bool                    // every allocate response repeats the containers allocated so far (an RM that re-reports them)
	RunHeartbeats     int                     // a started container completes after this many more allocates (0: at the next)
	KeepRunning       bool                    // started containers never complete (RunHeartbeats is ignored)
	// Complete are completed-container statuses the next allocate response reports, then forgets (the
	// RM's late report of containers on a node it declared LOST, say).
	Complete []*hadooppb.ContainerStatusProto
	// Preempt and PreemptNegotiable are containers every allocate response names in its
	// PreemptionMessage, in the strict and the negotiable contract, as the CapacityScheduler does
	// from its first warning until the kill; the test kills them (Complete, exit -102).
	Preempt, PreemptNegotiable []string
	// Lean keeps nothing per container (no Started, AskLog, Released or Stopped lists; StartedN
	// counts): for benchmarks and memory tests, whose heap must be the AM's.
	Lean bool
	// TokenSize pads each container token's identifier to this many bytes (a real one is ~1 KB).
	TokenSize int
	// ExitOn, when set, decides a started container's end by its node (GPUNodes' addresses): its exit
	// status, or false to keep it running until it is stopped or released. It replaces ExitCode.
	ExitOn func(node string) (int32, bool)
	// StopCompletes: stopContainers completes the containers with -105 (killed by the AM) at the next
	// allocate, as a NodeManager does.
	StopCompletes bool
	// RejectMessage is the message of RejectAsks' exception (the RM names the maximum allocation).
	RejectMessage string
	// UpdatedNodes are node reports the next allocate response carries, then forgets.
	UpdatedNodes []*hadooppb.NodeReportProto
	Previous     []*hadooppb.ContainerProto // the first registration hands these over as a previous attempt's (running)

	// The client port's knobs and what it saw.
	Reports     []*hadooppb.ApplicationReportProto // getApplicationReport answers these in turn; the last one repeats
	ReportCalls int
	ListReq     *hadooppb.GetApplicationsRequestProto
	ListResp    []*hadooppb.ApplicationReportProto
	NodeReports []*hadooppb.NodeReportProto // getClusterNodes' answer
	NewAppMax   *hadooppb.ResourceProto     // getNewApplication's maximumCapability
	Queues      []string                    // queues getQueueInfo knows
	Types       []string                    // resource types getResourceTypeInfo lists

	// State.
	Registered   bool
	Registers    int
	Allocates    int
	LastRespID   int32
	LastResp     *hadooppb.AllocateResponseProto
	RespIDErrors []string
	Table        map[int64]int32 // allocationRequestId → containers pending at the "RM"
	Capability   map[int64]*hadooppb.ResourceProto
	NextCID      int64
	Allocated    int
	Released     []string
	Started      []string // container ids started on the NM, in order
	// Contexts are their launch contexts, in the same order.
	Contexts []*hadooppb.ContainerLaunchContextProto
	// RegisterReq is the AM's last registration over RPC (its host, ports and tracking URL).
	RegisterReq *hadooppb.RegisterApplicationMasterRequestProto
	StartedN    int
	Running     map[string]int32
	Age         map[string]int // allocates seen by each running container
	FinishReq   *hadooppb.FinishApplicationMasterRequestProto
	AskLog      []*hadooppb.ResourceRequestProto
	// SchedLog is every SchedulingRequest the AM sent, in order. The fake takes one like a "*"
	// ResourceRequest of its allocationRequestId (no constraint is evaluated), except the first
	// RejectScheduling of them, which the next response hands back in rejected_scheduling_requests.
	SchedLog         []*hadooppb.SchedulingRequestProto
	RejectScheduling int
	// NoPlacementHandler: the RM's placement handler is disabled, whatever the AM was told: an
	// allocate that carries a SchedulingRequest fails as a whole, as a real RM's does.
	NoPlacementHandler bool
	NMTokenSent        bool
	Stopped            []string
	Blacklists         []BlacklistChange // the blacklist changes of every allocate request, in order
	allAllocated       []*hadooppb.ContainerProto
	// The node model (nodes.go), nil without GPUNodes.
	nodeGPUs  int64
	freeGPUs  map[string]int64  // node → free GPUs
	held      map[string]int64  // container → its GPUs
	where     map[string]string // container → node
	blacklist map[string]bool
	nextNode  int
}

// New returns a cluster with its scheduler port and NodeManager served over Hadoop RPC; both stop
// when the test ends.
func New(tb testing.TB) *Cluster {
	tb.Helper()
	rm, err := rpctest.NewServer(rpctest.Options{Tokens: map[string][]byte{string(AMRMID): AMRMPW, string(AMRMID2): AMRMPW2}})
	if err != nil {
		tb.Fatal(err)
	}
	nm, err := rpctest.NewServer(rpctest.Options{Tokens: map[string][]byte{string(NMTokID): NMTokPW}})
	if err != nil {
		rm.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rm.Close(); nm.Close() })
	host, port, _ := net.SplitHostPort(nm.Addr())
	p, _ := strconv.Atoi(port)
	c := newCluster(&hadooppb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(int32(p))})
	c.Scheduler, c.NM = rm, nm
	rm.Handle(yarnrpc.ApplicationMasterProtocol, "registerApplicationMaster", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
		var req hadooppb.RegisterApplicationMasterRequestProto
		if err := r.Decode(&req); err != nil {
			return nil, err
		}
		c.Mu.Lock()
		c.RegisterReq = &req
		c.Mu.Unlock()
		return c.register()
	})
	rm.Handle(yarnrpc.ApplicationMasterProtocol, "allocate", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
		var req hadooppb.AllocateRequestProto
		if err := r.Decode(&req); err != nil {
			return nil, err
		}
		return c.allocate(&req)
	})
	rm.Handle(yarnrpc.ApplicationMasterProtocol, "finishApplicationMaster", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
		var req hadooppb.FinishApplicationMasterRequestProto
		if err := r.Decode(&req); err != nil {
			return nil, err
		}
		c.finish(&req)
		return &hadooppb.FinishApplicationMasterResponseProto{IsUnregistered: proto.Bool(true)}, nil
	})
	nm.Handle(yarnrpc.ContainerManagementProtocol, "startContainers", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
		var req hadooppb.StartContainersRequestProto
		if err := r.Decode(&req); err != nil {
			return nil, err
		}
		return c.start(req.GetStartContainerRequest())
	})
	nm.Handle(yarnrpc.ContainerManagementProtocol, "stopContainers", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
		var req hadooppb.StopContainersRequestProto
		if err := r.Decode(&req); err != nil {
			return nil, err
		}
		return c.stop(req.GetContainerId()), nil
	})
	return c
}

// InProcess returns a cluster without servers: Scheduler and NodeManagers are called directly.
func InProcess() *Cluster {
	return newCluster(&hadooppb.NodeIdProto{Host: proto.String("node-1.example"), Port: proto.Int32(8041)})
}

func newCluster(node *hadooppb.NodeIdProto) *Cluster {
	app := &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1700000000000), Id: proto.Int32(7)}
	return &Cluster{Node: node, App: app, Att: &hadooppb.ApplicationAttemptIdProto{ApplicationId: app, AttemptId: proto.Int32(1)},
		ExitCode: func(int) int32 { return 0 }, Table: map[int64]int32{}, Capability: map[int64]*hadooppb.ResourceProto{},
		Running: map[string]int32{}, Age: map[string]int{}, NextCID: 2,
		Queues: []string{"default"}, Types: []string{"memory-mb", "vcores", "yarn.io/gpu"}}
}

// SpreadNodes makes allocations go round-robin over n nodes named node-0000.example and up (their
// NodeManager is the in-process one: a test that starts containers over RPC uses Node).
func (c *Cluster) SpreadNodes(n int) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.Nodes = nil
	for i := 0; i < n; i++ {
		c.Nodes = append(c.Nodes, &hadooppb.NodeIdProto{Host: proto.String(fmt.Sprintf("node-%04d.example", i)), Port: proto.Int32(8041)})
	}
}

// AMToken is the AM-RM token an AM starts with.
func AMToken() yarnrpc.Token {
	return yarnrpc.Token{Identifier: AMRMID, Password: AMRMPW, Kind: yarnrpc.AMRMTokenKind}
}

func (c *Cluster) register() (*hadooppb.RegisterApplicationMasterResponseProto, error) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.Registered = true
	c.Registers++
	c.LastRespID = 0
	c.LastResp = nil
	c.Table = map[int64]int32{} // a restarted RM has an empty request table
	resp := &hadooppb.RegisterApplicationMasterResponseProto{Queue: proto.String("default"), MaximumCapability: c.Maximum}
	if c.Registers == 1 && len(c.Previous) > 0 {
		resp.ContainersFromPreviousAttempts = c.Previous
		resp.NmTokensFromPreviousAttempts = []*hadooppb.NMTokenProto{{NodeId: c.Node, Token: nmToken()}}
		for _, p := range c.Previous {
			c.Running[yarnrpc.FormatContainerID(p.GetId())] = 0
		}
	}
	return resp, nil
}

func nmToken() *hadooppb.TokenProto {
	return &hadooppb.TokenProto{Identifier: NMTokID, Password: NMTokPW, Kind: proto.String("NMToken"), Service: proto.String("")}
}

func (c *Cluster) allocate(req *hadooppb.AllocateRequestProto) (*hadooppb.AllocateResponseProto, error) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.Allocates++
	if c.Allocates == c.NotRegisteredAt {
		c.Registered = false
	}
	if !c.Registered {
		return nil, &rpctest.Exception{Class: "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException",
			Message: "AM is not registered for known application attempt"}
	}
	if c.Allocates == c.ResyncAt {
		c.Registered, c.Table = false, map[int64]int32{}
		return &hadooppb.AllocateResponseProto{ResponseId: proto.Int32(c.LastRespID + 1), AMCommand: hadooppb.AMCommandProto_AM_RESYNC.Enum()}, nil
	}
	if c.LastResp != nil && req.GetResponseId()+1 == c.LastRespID {
		return c.LastResp, nil // a repeated heartbeat (its response was lost): the RM answers it again
	}
	if c.RejectAsks && len(req.GetAsk()) > 0 {
		msg := "Invalid resource request, requested resource type=[yarn.io/gpu] < 0 or greater than maximum allowed allocation."
		if c.RejectMessage != "" {
			msg = c.RejectMessage
		}
		return nil, &rpctest.Exception{Class: "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException", Message: msg}
	}
	if c.NoPlacementHandler && len(req.GetSchedulingRequests()) > 0 {
		return nil, &rpctest.Exception{Class: "org.apache.hadoop.yarn.exceptions.YarnException",
			Message: "SchedulingRequests refused: yarn.resourcemanager.placement-constraints.handler cannot handle placement constraints (fake)"}
	}
	c.applyBlacklist(req)
	if req.GetResponseId() != c.LastRespID {
		c.RespIDErrors = append(c.RespIDErrors, fmt.Sprintf("allocate %d: response_id %d, want %d", c.Allocates, req.GetResponseId(), c.LastRespID))
	}
	c.LastRespID++
	resp := &hadooppb.AllocateResponseProto{ResponseId: proto.Int32(c.LastRespID)}
	for _, a := range req.GetAsk() {
		if !c.Lean {
			c.AskLog = append(c.AskLog, a)
		}
		if a.GetResourceName() != "*" {
			continue // node and rack requests (locality): this fake allocates by the "*" count only
		}
		c.Table[a.GetAllocationRequestId()] = a.GetNumContainers()
		c.Capability[a.GetAllocationRequestId()] = a.GetCapability()
	}
	var rejected []*hadooppb.RejectedSchedulingRequestProto
	for _, s := range req.GetSchedulingRequests() {
		c.SchedLog = append(c.SchedLog, s)
		if c.RejectScheduling > 0 {
			c.RejectScheduling--
			rejected = append(rejected, &hadooppb.RejectedSchedulingRequestProto{Reason: hadooppb.RejectionReasonProto_RRP_COULD_NOT_PLACE_ON_NODE.Enum(), Request: s})
			continue
		}
		c.Table[s.GetAllocationRequestId()] = s.GetResourceSizing().GetNumAllocations()
		c.Capability[s.GetAllocationRequestId()] = s.GetResourceSizing().GetResources()
	}
	resp.RejectedSchedulingRequests = rejected
	for _, id := range req.GetRelease() {
		c.freed(yarnrpc.FormatContainerID(id))
		if !c.Lean {
			c.Released = append(c.Released, yarnrpc.FormatContainerID(id))
		}
	}
	budget := c.PerAllocate
	for askID, n := range c.Table {
		for ; n > 0 && (c.MaxAllocations == 0 || c.Allocated < c.MaxAllocations) && (c.PerAllocate == 0 || budget > 0); n-- {
			budget--
			ctr := c.newContainer(askID)
			if ctr == nil {
				break // no node has room (GPUNodes): the ask waits
			}
			resp.AllocatedContainers = append(resp.AllocatedContainers, ctr)
		}
		c.Table[askID] = n
		if n == 0 && c.Lean { // nothing per ask is kept once it is served
			delete(c.Table, askID)
			delete(c.Capability, askID)
		}
	}
	if c.RepeatAllocations {
		fresh := resp.AllocatedContainers
		resp.AllocatedContainers = append(append([]*hadooppb.ContainerProto{}, c.allAllocated...), fresh...)
		c.allAllocated = append(c.allAllocated, fresh...)
	}
	if len(resp.AllocatedContainers) > 0 && !c.NMTokenSent {
		c.NMTokenSent = true
		resp.NmTokens = []*hadooppb.NMTokenProto{{NodeId: c.Node, Token: nmToken()}}
	}
	if c.Allocates == c.RollTokenAt {
		resp.AmRmToken = &hadooppb.TokenProto{Identifier: AMRMID2, Password: AMRMPW2, Kind: proto.String(yarnrpc.AMRMTokenKind), Service: proto.String("")}
	}
	if !c.KeepRunning {
		// Containers started RunHeartbeats allocates ago finish now.
		for id, code := range c.Running {
			if c.Age[id]++; c.Age[id] <= c.RunHeartbeats {
				continue
			}
			cid, _ := yarnrpc.ParseContainerID(id)
			resp.CompletedContainerStatuses = append(resp.CompletedContainerStatuses, &hadooppb.ContainerStatusProto{
				ContainerId: cid, State: hadooppb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(code),
				Diagnostics: proto.String(fmt.Sprintf("Exception from container-launch. Exit code: %d", code))})
			delete(c.Running, id)
			delete(c.Age, id)
			c.freed(id)
		}
	}
	resp.CompletedContainerStatuses = append(resp.CompletedContainerStatuses, c.Complete...)
	c.Complete = nil
	resp.Preempt = c.preemption()
	c.decorate(resp)
	c.LastResp = resp
	return resp, nil
}

// preemption is the PreemptionMessage of Preempt and PreemptNegotiable (nil when both are empty).
func (c *Cluster) preemption() *hadooppb.PreemptionMessageProto {
	if len(c.Preempt)+len(c.PreemptNegotiable) == 0 {
		return nil
	}
	named := func(ids []string) []*hadooppb.PreemptionContainerProto {
		var out []*hadooppb.PreemptionContainerProto
		for _, id := range ids {
			if cid, err := yarnrpc.ParseContainerID(id); err == nil {
				out = append(out, &hadooppb.PreemptionContainerProto{Id: cid})
			}
		}
		return out
	}
	return &hadooppb.PreemptionMessageProto{StrictContract: &hadooppb.StrictPreemptionContractProto{Container: named(c.Preempt)},
		Contract: &hadooppb.PreemptionContractProto{Container: named(c.PreemptNegotiable)}}
}

// newContainer allocates one container for ask askID: its token's identifier names it (the NM learns
// which container to start from its token). nil: no node has room for it (GPUNodes).
func (c *Cluster) newContainer(askID int64) *hadooppb.ContainerProto {
	res := c.Capability[askID]
	if c.Allocated < c.MisfitFirst {
		res = proto.Clone(res).(*hadooppb.ResourceProto)
		res.ResourceValueMap = nil // no GPUs: must be released
	}
	node := c.place(res)
	if node == nil {
		return nil
	}
	cid := &hadooppb.ContainerIdProto{AppId: c.App, AppAttemptId: c.Att, Id: proto.Int64(c.NextCID)}
	c.NextCID++
	c.Allocated++
	c.placed(yarnrpc.FormatContainerID(cid), node, res)
	ident := []byte(yarnrpc.FormatContainerID(cid))
	if len(ident) < c.TokenSize {
		ident = append(ident, make([]byte, c.TokenSize-len(ident))...)
	}
	return &hadooppb.ContainerProto{Id: cid, NodeId: node, Resource: res, AllocationRequestId: proto.Int64(askID),
		ContainerToken: &hadooppb.TokenProto{Identifier: ident, Password: []byte("x"), Kind: proto.String("ContainerToken"), Service: proto.String("")}}
}

func (c *Cluster) finish(req *hadooppb.FinishApplicationMasterRequestProto) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.FinishReq = req
}

func (c *Cluster) start(reqs []*hadooppb.StartContainerRequestProto) (*hadooppb.StartContainersResponseProto, error) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	resp := &hadooppb.StartContainersResponseProto{}
	for _, s := range reqs {
		id, _, _ := strings.Cut(string(s.GetContainerToken().GetIdentifier()), "\x00")
		cid, err := yarnrpc.ParseContainerID(id)
		if err != nil {
			return nil, fmt.Errorf("fakecluster: a container token names no container: %w", err)
		}
		if c.RefuseStarts > 0 {
			c.RefuseStarts--
			resp.FailedRequests = append(resp.FailedRequests, &hadooppb.ContainerExceptionMapProto{ContainerId: cid,
				Exception: &hadooppb.SerializedExceptionProto{ClassName: proto.String("org.apache.hadoop.yarn.exceptions.YarnException"),
					Message: proto.String("Container " + id + " was refused (test)")}})
			continue
		}
		switch {
		case c.ExitOn != nil:
			if code, ends := c.exitOnNode(id); ends {
				c.Running[id] = code
			}
		case !c.KeepRunning:
			c.Running[id] = c.ExitCode(c.StartedN)
		}
		if !c.Lean {
			c.Started = append(c.Started, id)
			c.Contexts = append(c.Contexts, s.GetContainerLaunchContext())
		}
		c.StartedN++
		resp.SucceededRequests = append(resp.SucceededRequests, cid)
	}
	return resp, nil
}

func (c *Cluster) stop(ids []*hadooppb.ContainerIdProto) *hadooppb.StopContainersResponseProto {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for _, id := range ids {
		if !c.Lean {
			c.Stopped = append(c.Stopped, yarnrpc.FormatContainerID(id))
		}
		c.stoppedByAM(id)
	}
	return &hadooppb.StopContainersResponseProto{SucceededRequests: ids}
}

// StartedCount reports how many containers the NodeManagers started.
func (c *Cluster) StartedCount() int {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.StartedN
}

// AllocateCount reports how many allocates the scheduler answered.
func (c *Cluster) AllocateCount() int {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.Allocates
}

// SchedulerClient is the scheduler port called in process (the AM's RM seam).
type SchedulerClient struct{ c *Cluster }

// InProcessScheduler returns the scheduler port as an in-process client.
func (c *Cluster) InProcessScheduler() SchedulerClient { return SchedulerClient{c} }

// Register is registerApplicationMaster.
func (s SchedulerClient) Register(context.Context, *hadooppb.RegisterApplicationMasterRequestProto) (*hadooppb.RegisterApplicationMasterResponseProto, error) {
	return s.c.register()
}

// Allocate is allocate.
func (s SchedulerClient) Allocate(_ context.Context, req *hadooppb.AllocateRequestProto) (*hadooppb.AllocateResponseProto, error) {
	resp, err := s.c.allocate(req)
	return resp, remote(err)
}

// Finish is finishApplicationMaster.
func (s SchedulerClient) Finish(_ context.Context, req *hadooppb.FinishApplicationMasterRequestProto) (bool, error) {
	s.c.finish(req)
	return true, nil
}

// SetToken accepts any AM-RM token.
func (SchedulerClient) SetToken(yarnrpc.Token) error { return nil }

// NMClient is the NodeManager fleet called in process (the AM's NM seam).
type NMClient struct{ c *Cluster }

// InProcessNM returns the NodeManagers as an in-process client.
func (c *Cluster) InProcessNM() NMClient { return NMClient{c} }

// SetToken accepts any NMToken.
func (NMClient) SetToken(string, yarnrpc.Token) error { return nil }

// StartContainers is startContainers on any node.
func (n NMClient) StartContainers(_ context.Context, _ string, reqs ...*hadooppb.StartContainerRequestProto) (*hadooppb.StartContainersResponseProto, error) {
	return n.c.start(reqs)
}

// StopContainers is stopContainers on any node.
func (n NMClient) StopContainers(_ context.Context, _ string, ids ...*hadooppb.ContainerIdProto) (*hadooppb.StopContainersResponseProto, error) {
	return n.c.stop(ids), nil
}
