package book

import (
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// The status document's view of the cluster's nodes (Status.Nodes): each running node's capacity
// and use of the job's device types (yarn.io/gpu, ...), which the web UI's GPU map needs to show the
// GPUs no container of the job holds. The AM knows node capacities only from the RM's node reports
// (getClusterNodes, a call whose answer grows with the cluster), so it asks only while someone reads
// the status and at most every NodesRefresh (am's TestNodeViewRefreshesOnlyWhileRead).

// NodesRefresh is the shortest time between two node listings for the status document.
const NodesRefresh = 10 * time.Second

// Nodes is the AM's memory of the RM's node listings: the latest listing for the status document
// (nodes, at), when one was last tried and the last error logged, and when locality spreading may
// ask again after a failed listing (am/locality.go). Its verbs are the only writers: Due, Listed and
// Failed for the status document's listing, SpreadDue and SpreadFailed for locality's. The AM's
// mutex guards it (package doc).
type Nodes struct {
	nodes   []contract.NodeStatus // replaced, never changed in place: Status hands it out
	at      time.Time             // of the listing (zero: none yet)
	tried   time.Time             // of the last attempt, successful or not
	lastErr string                // logged once per distinct error
	// spreadRetry: the node reports of a locality plan failed; asks are plain until then.
	spreadRetry time.Time
}

// Due says whether the status document's listing is due at now (the last try is NodesRefresh old,
// or there was none) and, if so, books the try.
func (v *Nodes) Due(now time.Time) bool {
	due := v.tried.IsZero() || now.Sub(v.tried) >= NodesRefresh
	if due {
		v.tried = now
	}
	return due
}

// Listed books a listing made at now.
func (v *Nodes) Listed(nodes []contract.NodeStatus, now time.Time) {
	v.lastErr = ""
	v.nodes, v.at = nodes, now
}

// Failed books a failed listing; it says whether err is new (logged once per distinct error).
func (v *Nodes) Failed(err error) bool {
	msg := err.Error()
	if msg == v.lastErr {
		return false
	}
	v.lastErr = msg
	return true
}

// Listing is the latest listing and when it was made (nil and zero: none yet); the caller does
// not change it.
func (v *Nodes) Listing() ([]contract.NodeStatus, time.Time) { return v.nodes, v.at }

// SpreadDue says whether locality spreading may ask for node reports at now.
func (v *Nodes) SpreadDue(now time.Time) bool { return !now.Before(v.spreadRetry) }

// SpreadFailed: locality's node reports failed at now; asks go out plain for a minute.
func (v *Nodes) SpreadFailed(now time.Time) { v.spreadRetry = now.Add(time.Minute) }

// NodeDropped says whether a node report's state is one in which the ResourceManager has dropped
// the node for good (LOST, SHUTDOWN, DECOMMISSIONED): it allocates nothing on that node id again,
// and a NodeManager on its host registers anew, under a new node id.
func NodeDropped(n *hadooppb.NodeReportProto) bool {
	switch n.GetNodeState() {
	case hadooppb.NodeStateProto_NS_LOST, hadooppb.NodeStateProto_NS_SHUTDOWN, hadooppb.NodeStateProto_NS_DECOMMISSIONED:
		return true
	}
	return false
}

// NodeUpdate reads a node report of an allocate's updated_nodes: running says the node is RUNNING
// again (the liveness check may lift its exclusion for a loss); otherwise, unless it is NEW, ev tells
// that it is no longer usable (its Reason the state: LOST, UNHEALTHY, DECOMMISSIONED, ...).
func NodeUpdate(n *hadooppb.NodeReportProto) (node string, running bool, ev *contract.Event) {
	node = yarnrpc.NodeAddress(n.GetNodeId())
	switch st := n.GetNodeState(); st {
	case hadooppb.NodeStateProto_NS_RUNNING:
		return node, true, nil
	case hadooppb.NodeStateProto_NS_NEW:
		return node, false, nil
	default:
		e := events.NodeUnhealthy(node, strings.TrimPrefix(st.String(), "NS_"), strings.TrimSpace(n.GetHealthReport()))
		return node, false, &e
	}
}
