package am

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// nodeLister lists the cluster's nodes (config.Cluster) for the status document (Status.Nodes), the
// evidence of a shortage and locality: the one bounded, measured getClusterNodes call, and the
// refresher that lists them while the status is read and books the answers in the AM's node view
// (book.Nodes). Its fields are set by newAM and never changed afterwards (tests set them before the
// AM runs); the node view is the AM's, under the AM's mutex.
type nodeLister struct {
	cluster clusterNodes        // nil: the AM lists no nodes
	asked   contract.Capability // the job's capability: its device types are what the map draws
	label   string              // taskexecutor.node-label: the partition whose nodes the evidence counts
	metrics *metrics
	log     logrus.FieldLogger
	now     func() time.Time
	// want: the status was read; the refresher lists the nodes if due.
	want chan struct{}
	// mu is the AM's mutex; it guards view, the AM's node view, where the refresher books its answers.
	mu   sync.Locker
	view *book.Nodes
}

// lists says whether the AM can list the cluster's nodes (it has a client connection to the RM).
func (l *nodeLister) lists() bool { return l.cluster != nil }

// wanted notes that the status document is being read: the refresher lists the nodes if the last
// listing is older than book.NodesRefresh.
func (l *nodeLister) wanted() {
	if l.cluster == nil || len(deviceTypes(l.asked)) == 0 {
		return // no map to draw
	}
	select {
	case l.want <- struct{}{}:
	default:
	}
}

// refresher lists the nodes when wanted and due, until ctx ends. Run starts it.
func (l *nodeLister) refresher(ctx context.Context) {
	if l.cluster == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.want:
		}
		l.refreshIfDue(ctx)
	}
}

// refreshIfDue lists the nodes if the last try is book.NodesRefresh old (or there was none); it says
// whether it listed them.
func (l *nodeLister) refreshIfDue(ctx context.Context) bool {
	l.mu.Lock()
	due := l.view.Due(l.now())
	l.mu.Unlock()
	if !due {
		return false
	}
	reports, err := l.list(ctx)
	var nodes []contract.NodeStatus
	if err == nil {
		nodes = nodeStatuses(l.asked, reports) // pure: outside the lock
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		if l.view.Failed(err) {
			l.log.WithError(err).Warn("am: could not list the cluster's nodes for the status page's GPU map; it shows only the GPUs the containers hold")
		}
		return true
	}
	l.view.Listed(nodes, l.now())
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

// list asks the RM for its running nodes' reports (cluster, which must be set), bounded and
// measured: the evidence of a shortage, the web UI's GPU map and locality spreading all use it.
func (l *nodeLister) list(ctx context.Context) ([]*hadooppb.NodeReportProto, error) {
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	nodes, err := l.cluster.GetClusterNodes(c, hadooppb.NodeStateProto_NS_RUNNING)
	l.metrics.ObserveRPC("getClusterNodes", start, err)
	return nodes, err
}

// running lists the cluster's running nodes of the job's partition for the evidence of a shortage
// (nil when the AM has no client connection or the call fails: the evidence then carries the
// scheduler's headroom).
func (l *nodeLister) running(ctx context.Context) []*hadooppb.NodeReportProto {
	if l.cluster == nil {
		return nil
	}
	nodes, err := l.list(ctx)
	if err != nil {
		l.log.WithError(err).Warn("am: could not list the cluster's nodes for the not-enough-resources evidence; using the scheduler's headroom")
		return nil
	}
	return inPartition(nodes, l.label)
}
