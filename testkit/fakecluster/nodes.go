package fakecluster

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// This file is the cluster's optional node model, for the AM's scenario tests (package am's
// surface_test.go): nodes with a GPU capacity each, the application's blacklist honoured when placing,
// node reports that say what is used, containers whose end depends on their node, and the RM's
// updated-node reports. Without GPUNodes none of it is in force and allocation is as before.

// GPUNodes gives the cluster n nodes, 10.0.0.1:4000 and up, with gpus yarn.io/gpu each: an allocation
// goes to the first node that is not blacklisted and has the GPUs free (none: the ask waits), the GPUs
// come back when the container ends, is released or stopped, and the in-process GetClusterNodes and
// every allocate response (num_cluster_nodes, the headroom) say so.
func (c *Cluster) GPUNodes(n int, gpus int64) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.Nodes, c.nodeGPUs = nil, gpus
	c.freeGPUs, c.held, c.where, c.blacklist = map[string]int64{}, map[string]int64{}, map[string]string{}, map[string]bool{}
	for i := 0; i < n; i++ {
		node := &hadooppb.NodeIdProto{Host: proto.String(fmt.Sprintf("10.0.0.%d", i+1)), Port: proto.Int32(4000)}
		c.Nodes = append(c.Nodes, node)
		c.freeGPUs[yarnrpc.NodeAddress(node)] = gpus
	}
}

// BlacklistChange is one allocate request's blacklist additions and removals.
type BlacklistChange struct{ Add, Remove []string }

// modelled says whether GPUNodes is in force.
func (c *Cluster) modelled() bool { return c.freeGPUs != nil }

// applyBlacklist records the allocate request's blacklist changes (Blacklists) and keeps the current
// blacklist for placing.
func (c *Cluster) applyBlacklist(req *hadooppb.AllocateRequestProto) {
	bl := req.GetBlacklistRequest()
	if bl == nil {
		return
	}
	c.Blacklists = append(c.Blacklists, BlacklistChange{Add: bl.GetBlacklistAdditions(), Remove: bl.GetBlacklistRemovals()})
	if !c.modelled() {
		return
	}
	for _, n := range bl.GetBlacklistAdditions() {
		c.blacklist[n] = true
	}
	for _, n := range bl.GetBlacklistRemovals() {
		delete(c.blacklist, n)
	}
}

// place picks the node of a new container of res: the round-robin one without the model, else the
// first that is not blacklisted (as host:port or host) and has the GPUs free (nil: none has).
func (c *Cluster) place(res *hadooppb.ResourceProto) *hadooppb.NodeIdProto {
	if !c.modelled() {
		node := c.Node
		if len(c.Nodes) > 0 {
			node = c.Nodes[c.nextNode%len(c.Nodes)]
			c.nextNode++
		}
		return node
	}
	want := yarnrpc.ResourceAmounts(res)["yarn.io/gpu"]
	for _, n := range c.Nodes {
		addr := yarnrpc.NodeAddress(n)
		if !c.blacklist[addr] && !c.blacklist[n.GetHost()] && c.freeGPUs[addr] >= want {
			c.freeGPUs[addr] -= want
			return n
		}
	}
	return nil
}

// placed notes where container id went and how many GPUs it holds.
func (c *Cluster) placed(id string, node *hadooppb.NodeIdProto, res *hadooppb.ResourceProto) {
	if c.modelled() {
		c.where[id] = yarnrpc.NodeAddress(node)
		c.held[id] = yarnrpc.ResourceAmounts(res)["yarn.io/gpu"]
	}
}

// freed gives a container's GPUs back to its node (once).
func (c *Cluster) freed(id string) {
	if !c.modelled() {
		return
	}
	if node, ok := c.where[id]; ok {
		c.freeGPUs[node] += c.held[id]
		delete(c.where, id)
		delete(c.held, id)
	}
}

// exitOnNode is ExitOn for a started container: its exit status and whether it ends (false: it runs
// until stopped or released).
func (c *Cluster) exitOnNode(id string) (int32, bool) {
	return c.ExitOn(c.where[id])
}

// stoppedByAM completes a stopped container with YARN's -105 (killed by the AM) at the next allocate,
// as a NodeManager does, when StopCompletes.
func (c *Cluster) stoppedByAM(cid *hadooppb.ContainerIdProto) {
	if !c.StopCompletes {
		return
	}
	id := yarnrpc.FormatContainerID(cid)
	delete(c.Running, id)
	delete(c.Age, id)
	c.freed(id)
	c.Complete = append(c.Complete, &hadooppb.ContainerStatusProto{ContainerId: cid, State: hadooppb.ContainerStateProto_C_COMPLETE.Enum(),
		ExitStatus: proto.Int32(-105), Diagnostics: proto.String("Container killed by the ApplicationMaster.")})
}

// decorate adds the node model's part of an allocate response: num_cluster_nodes, the headroom and
// UpdatedNodes (then forgotten).
func (c *Cluster) decorate(resp *hadooppb.AllocateResponseProto) {
	resp.UpdatedNodes, c.UpdatedNodes = c.UpdatedNodes, nil
	if !c.modelled() {
		return
	}
	resp.NumClusterNodes = proto.Int32(int32(len(c.Nodes)))
	free := int64(0)
	for _, g := range c.freeGPUs {
		free += g
	}
	resp.Limit = Resource(1024, 1, free)
}

// GetClusterNodes is the client port's getClusterNodes called in process (the AM's ClusterNodes
// seam): NodeReports when set, else the modelled nodes, 8 GiB and 8 vcores each with their GPUs.
func (c *Cluster) GetClusterNodes(context.Context, ...hadooppb.NodeStateProto) ([]*hadooppb.NodeReportProto, error) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if c.NodeReports != nil || !c.modelled() {
		return c.NodeReports, nil
	}
	var out []*hadooppb.NodeReportProto
	for _, n := range c.Nodes {
		addr := yarnrpc.NodeAddress(n)
		out = append(out, &hadooppb.NodeReportProto{NodeId: n, NodeState: hadooppb.NodeStateProto_NS_RUNNING.Enum(),
			Capability: Resource(8192, 8, c.nodeGPUs), Used: Resource(0, 0, c.nodeGPUs-c.freeGPUs[addr])})
	}
	return out, nil
}

// remote turns the scheduler's exception into what the wire client returns for it, so that the AM
// classifies an in-process refusal as it does one over RPC.
func remote(err error) error {
	var ex *rpctest.Exception
	if errors.As(err, &ex) {
		return fmt.Errorf("allocate: %w", &yarnrpc.RemoteError{Class: ex.Class, Message: ex.Message})
	}
	return err
}

// NodeOf is the node (host:port) container id was placed on, while it holds its resources
// (GPUNodes; "" otherwise). The caller holds Mu.
func (c *Cluster) NodeOf(id string) string { return c.where[id] }
