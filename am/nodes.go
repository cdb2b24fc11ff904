package am

import (
	"context"
	"sort"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// This file lists the cluster's nodes for the status document (Status.Nodes) and for locality: the
// one bounded, measured getClusterNodes call, and the refresher that lists them while the status is
// read; book.Nodes remembers the answers.

// wantNodes notes that the status document is being read: the node refresher lists the nodes if the
// last listing is older than book.NodesRefresh.
func (a *am) wantNodes() {
	if a.cfg.Cluster == nil || len(deviceTypes(a.cfg.Spec.Capability)) == 0 {
		return // no map to draw
	}
	select {
	case a.nodesWant <- struct{}{}:
	default:
	}
}

// nodeRefresher lists the nodes when wanted and due, until ctx ends. Run starts it.
func (a *am) nodeRefresher(ctx context.Context) {
	if a.cfg.Cluster == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.nodesWant:
		}
		a.refreshIfDue(ctx)
	}
}

// refreshIfDue lists the nodes if the last try is book.NodesRefresh old (or there was none); it says
// whether it listed them.
func (a *am) refreshIfDue(ctx context.Context) bool {
	a.mu.Lock()
	due := a.book.Nodes.Due(a.cfg.Now())
	a.mu.Unlock()
	if !due {
		return false
	}
	reports, err := a.listNodes(ctx)
	var nodes []contract.NodeStatus
	if err == nil {
		nodes = nodeStatuses(a.cfg.Spec.Capability, reports) // pure: outside the lock
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		if a.book.Nodes.Failed(err) {
			a.log.WithError(err).Warn("am: could not list the cluster's nodes for the status page's GPU map; it shows only the GPUs the containers hold")
		}
		return true
	}
	a.book.Nodes.Listed(nodes, a.cfg.Now())
	return true
}

// deviceTypes are the types asked for besides memory and vcores (yarn.io/gpu, ...): the ones the
// map draws.
func deviceTypes(asked contract.Capability) []string {
	var out []string
	for k, v := range asked {
		if k != "memory-mb" && k != "vcores" && v > 0 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// nodeStatuses turns node reports into the status document's nodes: the RUNNING ones that have any
// of the device types asked (yarn.io/gpu, ...), with their capability and use of those types only.
// The document is polled every 2 s by each open page: on a large cluster, nodes without the job's
// devices and the types nobody draws would make up most of it.
func nodeStatuses(asked contract.Capability, reports []*hadooppb.NodeReportProto) []contract.NodeStatus {
	types := deviceTypes(asked)
	var out []contract.NodeStatus
	for _, n := range reports {
		if n.NodeState != nil && n.GetNodeState() != hadooppb.NodeStateProto_NS_RUNNING {
			continue
		}
		ns := contract.NodeStatus{Node: yarnrpc.NodeAddress(n.GetNodeId()), Capability: contract.Capability{}, Used: contract.Capability{}}
		capa, used := yarnrpc.ResourceAmounts(n.GetCapability()), yarnrpc.ResourceAmounts(n.GetUsed())
		has := false
		for _, k := range types {
			ns.Capability[k], ns.Used[k] = capa[k], used[k]
			has = has || capa[k] > 0
		}
		if has {
			out = append(out, ns)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// listNodes asks the RM for its running nodes' reports (config.Cluster, which must be set), bounded
// and measured: the evidence of a shortage, the web UI's GPU map and locality spreading all use it.
func (a *am) listNodes(ctx context.Context) ([]*hadooppb.NodeReportProto, error) {
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	nodes, err := a.cfg.Cluster.GetClusterNodes(c, hadooppb.NodeStateProto_NS_RUNNING)
	a.metrics.ObserveRPC("getClusterNodes", start, err)
	return nodes, err
}

// runningNodes lists the cluster's running nodes for the evidence of a shortage (nil when the AM has
// no client connection or the call fails: the evidence then carries the scheduler's headroom).
func (a *am) runningNodes(ctx context.Context) []*hadooppb.NodeReportProto {
	if a.cfg.Cluster == nil {
		return nil
	}
	nodes, err := a.listNodes(ctx)
	if err != nil {
		a.log.WithError(err).Warn("am: could not list the cluster's nodes for the not-enough-resources evidence; using the scheduler's headroom")
		return nil
	}
	return inPartition(nodes, a.cfg.NodeLabel)
}
