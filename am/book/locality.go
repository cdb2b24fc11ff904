package book

import (
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Locality plans (taskexecutor.locality = "spread"): what fits on the nodes now (Observed.SpreadRoom)
// is asked for in an ask of its own, sent as node-local requests spread over the hosts with room,
// a request for every rack, and "*", rack and "*" with the full count; what has to wait for room is a
// plain "*" ask (Reconcile). The CapacityScheduler gives at most one off-switch ("*") container per
// node heartbeat (yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments) but any
// number of node-local and rack-local ones, so the spread ask is allocated in one round of node
// heartbeats instead of one container per heartbeat (docs/design.md, ## Wire facts). Every request
// keeps relax_locality. The plain ask has only "*", so the scheduler's locality delay (which holds
// back rack and off-switch allocations of an allocationRequestId that has node or rack requests)
// never applies to it (am's TestLoopSpreadsWhatFitsAndAsksForTheRestPlainly; docs/performance.md).

// NodeRoom is how many containers of the asked capability one NodeManager can take.
type NodeRoom struct {
	Host string // the scheduler's node name: the NodeManager's host name
	Rack string
	// Free: how many fit in what is unallocated now (capability − used).
	Free int
	// Room: how many fit once this application's own containers there ended (capability − what
	// other applications use). Room >= Free.
	Room int
}

// HostShare is one node-local request of a plan.
type HostShare struct {
	Host  string
	Rack  string
	Count int
}

// Held is what the active containers of r use on each node (host:port): RoomsOf's ours.
func (r *Records) Held() map[string]contract.Capability {
	ours := map[string]contract.Capability{}
	for _, t := range r.Active() {
		m := ours[t.Node]
		if m == nil {
			m = contract.Capability{}
			ours[t.Node] = m
		}
		for k, v := range t.Resources {
			m[k] += v
		}
	}
	return ours
}

// HostsOf is the hosts of nodes (host:port), a set: RoomsOf's excluded of the failure policy's nodes.
func HostsOf(nodes []string) map[string]bool {
	hosts := map[string]bool{}
	for _, n := range nodes {
		hosts[hadoop.NodeHost(n)] = true
	}
	return hosts
}

// RoomsOf turns the RUNNING nodes' reports into their room for containers of want. ours is what
// this application's active containers use, by node address (host:port): it is counted as room to
// come, because those containers end before the ask's remainder is needed there. Hosts in excluded
// (the failure policy's, blacklisted at the RM by host too) have no room.
func RoomsOf(nodes []*hadooppb.NodeReportProto, want contract.Capability, ours map[string]contract.Capability, excluded map[string]bool) []NodeRoom {
	var out []NodeRoom
	for _, n := range nodes {
		if n.NodeState != nil && n.GetNodeState() != hadooppb.NodeStateProto_NS_RUNNING {
			continue
		}
		host := n.GetNodeId().GetHost()
		if host == "" || excluded[host] {
			continue
		}
		capability := contract.Capability(yarnrpc.ResourceAmounts(n.GetCapability()))
		used := contract.Capability(yarnrpc.ResourceAmounts(n.GetUsed()))
		free := contract.Capability{}
		others := contract.Capability{}
		mine := ours[yarnrpc.NodeAddress(n.GetNodeId())]
		for k, c := range capability {
			free[k] = max(c-used[k], 0)
			others[k] = max(c-max(used[k]-mine[k], 0), 0)
		}
		f, r := free.Count(want), others.Count(want)
		out = append(out, NodeRoom{Host: host, Rack: n.GetRackName(), Free: f, Room: max(r, f)})
	}
	return out
}

// PlanLocality spreads n containers over hosts: first over what is free now, in proportion to it,
// then the rest over the room that frees when this application's own containers end. What no host
// has room for is left to the "*" request (the caller sends n there). NodeManagers on one host (a mini
// cluster) are one share: the scheduler names nodes by host. Hosts are in name order; the result is
// empty when no host has room.
func PlanLocality(rooms []NodeRoom, n int) []HostShare {
	type host struct {
		name, rack  string
		free, later int
	}
	byName := map[string]*host{}
	var hosts []*host
	for _, r := range rooms {
		h := byName[r.Host]
		if h == nil {
			h = &host{name: r.Host, rack: r.Rack}
			byName[r.Host] = h
			hosts = append(hosts, h)
		}
		h.free += max(r.Free, 0)
		h.later += max(r.Room-r.Free, 0)
	}
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].name < hosts[j].name })
	share := make([]int, len(hosts))
	left := n
	for _, pass := range []func(*host) int{
		func(h *host) int { return h.free },
		func(h *host) int { return h.later },
	} {
		caps := make([]int, len(hosts))
		for i, h := range hosts {
			caps[i] = pass(h)
		}
		left -= proportional(share, caps, left)
	}
	var out []HostShare
	for i, h := range hosts {
		if share[i] > 0 {
			out = append(out, HostShare{Host: h.name, Rack: h.rack, Count: share[i]})
		}
	}
	return out
}

// proportional adds up to n to share, in proportion to caps and at most caps[i] each (largest
// remainders first, ties to the lower index), and returns how many it added.
func proportional(share, caps []int, n int) int {
	total := 0
	for _, c := range caps {
		total += c
	}
	if n <= 0 || total == 0 {
		return 0
	}
	if total <= n {
		for i, c := range caps {
			share[i] += c
		}
		return total
	}
	type rem struct{ i, r int }
	var rems []rem
	given := 0
	for i, c := range caps {
		q := c * n / total
		share[i] += q
		given += q
		rems = append(rems, rem{i, c * n % total})
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for _, r := range rems {
		if given == n {
			break
		}
		if caps[r.i] > 0 {
			share[r.i]++
			given++
		}
	}
	return given
}

// LocalityRequests builds the requests of one ask: a node-local request per share, a request for
// every rack in racks and of the shares, and "*" (base), each rack and "*" with the full count. The
// scheduler allocates node-local on a host only while its rack and "*" requests are positive, and
// allocates rack-local without the per-heartbeat off-switch limit: with every rack at the full
// count, a node that heartbeats with more room than its share fills it at once
// (TestLocalityRequestsKeepRacksAndStarAtTheFullCount; docs/performance.md).
func LocalityRequests(base *hadooppb.ResourceRequestProto, shares []HostShare, racks []string) []*hadooppb.ResourceRequestProto {
	var out []*hadooppb.ResourceRequestProto
	seen := map[string]bool{}
	var rackNames []string
	addRack := func(r string) {
		if r == "" {
			r = defaultRack
		}
		if !seen[r] {
			seen[r] = true
			rackNames = append(rackNames, r)
		}
	}
	for _, s := range shares {
		out = append(out, cloneRequest(base, s.Host, s.Count))
		addRack(s.Rack)
	}
	for _, r := range racks {
		addRack(r)
	}
	sort.Strings(rackNames)
	for _, rack := range rackNames {
		out = append(out, cloneRequest(base, rack, int(base.GetNumContainers())))
	}
	return append(out, base)
}

// RacksOf lists the racks of rooms (every RUNNING node's, whether it has room now or not).
func RacksOf(rooms []NodeRoom) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rooms {
		if !seen[r.Rack] {
			seen[r.Rack] = true
			out = append(out, r.Rack)
		}
	}
	return out
}

// defaultRack is YARN's rack of a node without topology configuration.
const defaultRack = "/default-rack"

func cloneRequest(base *hadooppb.ResourceRequestProto, name string, n int) *hadooppb.ResourceRequestProto {
	r := proto.Clone(base).(*hadooppb.ResourceRequestProto)
	r.ResourceName = proto.String(name)
	// The RM refuses a label expression on a host or rack request; the "*" request's label applies
	// to them (am's TestLocalityRequestsCarryTheLabelOnStarOnly).
	r.NodeLabelExpression = nil
	r.NumContainers = proto.Int32(int32(n))
	return r
}

// AnyRequest is the ResourceRequest of ask id for n containers of c on any node (relaxed locality),
// at priority, in the partition of label (taskexecutor.node-label; "": the queue's default).
func AnyRequest(id int64, n int, c *hadooppb.ResourceProto, priority int32, label string) *hadooppb.ResourceRequestProto {
	var l *string
	if label != "" {
		l = proto.String(label)
	}
	return &hadooppb.ResourceRequestProto{
		NodeLabelExpression: l,
		Priority:            &hadooppb.PriorityProto{Priority: proto.Int32(priority)},
		ResourceName:        proto.String("*"),
		Capability:          c,
		NumContainers:       proto.Int32(int32(n)),
		RelaxLocality:       proto.Bool(true),
		AllocationRequestId: proto.Int64(id),
	}
}
