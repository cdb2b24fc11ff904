package am

import (
	"context"
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/decision"
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
// never applies to it (TestLoopSpreadsWhatFitsAndAsksForTheRestPlainly; docs/performance.md).

// Locality values of taskexecutor.locality.
const (
	localitySpread = "spread" // node-local requests over the hosts with room
	localityAny    = "any"    // one "*" request per ask (the default)
)

// nodeRoom is how many containers of the asked capability one NodeManager can take.
type nodeRoom struct {
	Host string // the scheduler's node name: the NodeManager's host name
	Rack string
	// Free: how many fit in what is unallocated now (capability − used).
	Free int
	// Room: how many fit once this application's own containers there ended (capability − what
	// other applications use). Room >= Free.
	Room int
}

// hostShare is one node-local request of a plan.
type hostShare struct {
	Host  string
	Rack  string
	Count int
}

// roomsOf turns the RUNNING nodes' reports into their room for containers of want. ours is what
// this application's active containers use, by node address (host:port): it is counted as room to
// come, because those containers end before the ask's remainder is needed there. Hosts in excluded
// (the failure policy's, blacklisted at the RM by host too) have no room.
func roomsOf(nodes []*hadooppb.NodeReportProto, want contract.Capability, ours map[string]contract.Capability, excluded map[string]bool) []nodeRoom {
	var out []nodeRoom
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
		out = append(out, nodeRoom{Host: host, Rack: n.GetRackName(), Free: f, Room: max(r, f)})
	}
	return out
}

// planLocality spreads n containers over hosts: first over what is free now, in proportion to it,
// then the rest over the room that frees when this application's own containers end. What no host
// has room for is left to the "*" request (the caller sends n there). NodeManagers on one host (a mini
// cluster) are one share: the scheduler names nodes by host. Hosts are in name order; the result is
// empty when no host has room.
func planLocality(rooms []nodeRoom, n int) []hostShare {
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
	var out []hostShare
	for i, h := range hosts {
		if share[i] > 0 {
			out = append(out, hostShare{Host: h.name, Rack: h.rack, Count: share[i]})
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

// localityRequests builds the requests of one ask: a node-local request per share, a request for
// every rack in racks and of the shares, and "*" (base), each rack and "*" with the full count. The
// scheduler allocates node-local on a host only while its rack and "*" requests are positive, and
// allocates rack-local without the per-heartbeat off-switch limit: with every rack at the full
// count, a node that heartbeats with more room than its share fills it at once
// (TestLocalityRequestsKeepRacksAndStarAtTheFullCount; docs/performance.md).
func localityRequests(base *hadooppb.ResourceRequestProto, shares []hostShare, racks []string) []*hadooppb.ResourceRequestProto {
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

// racksOf lists the racks of rooms (every RUNNING node's, whether it has room now or not).
func racksOf(rooms []nodeRoom) []string {
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
	// to them (TestLocalityRequestsCarryTheLabelOnStarOnly).
	r.NodeLabelExpression = nil
	r.NumContainers = proto.Int32(int32(n))
	return r
}

// localityRooms returns the nodes' room when Spread asks are about to be sent, nil otherwise.
func (a *am) localityRooms(ctx context.Context) []nodeRoom {
	a.mu.Lock()
	asking := a.book.Asks.SendingSpread()
	a.mu.Unlock()
	if !asking {
		return nil
	}
	return a.nodeRooms(ctx)
}

// spreadRoom is Observed.SpreadRoom: how many containers fit on the nodes now, when the next plan
// adds an ask (a dry run of Reconcile says so) and taskexecutor.locality = "spread"; 0 otherwise.
func (a *am) spreadRoom(ctx context.Context) int {
	if a.cfg.Locality != localitySpread || a.cfg.Cluster == nil {
		return 0
	}
	a.mu.Lock()
	now := a.cfg.Now()
	a.tickLocked(now)
	if a.idleLocked(now) {
		a.mu.Unlock()
		return 0 // the last plan added no ask, and nothing it depends on changed since
	}
	obs := a.observedLocked(now)
	dry := decision.Reconcile(a.specLocked(), obs)
	a.mu.Unlock()
	if dry.NextAskID == max(obs.NextAskID, 1) {
		return 0
	}
	room := 0
	for _, r := range a.nodeRooms(ctx) {
		room += r.Free
	}
	return room
}

// nodeRooms asks the RM for the RUNNING nodes and returns their room for a container of the spec
// (nil when the call fails: asks go out plain, as with taskexecutor.locality = "any"; after a
// failure the RM is not asked again for a minute).
func (a *am) nodeRooms(ctx context.Context) []nodeRoom {
	a.mu.Lock()
	if a.cfg.Locality != localitySpread || a.cfg.Cluster == nil || !a.book.Nodes.SpreadDue(a.cfg.Now()) {
		a.mu.Unlock()
		return nil
	}
	ours := map[string]contract.Capability{}
	for _, t := range a.rec.active() {
		m := ours[t.Node]
		if m == nil {
			m = contract.Capability{}
			ours[t.Node] = m
		}
		for k, v := range t.Resources {
			m[k] += v
		}
	}
	excluded := map[string]bool{}
	for _, n := range a.policy.Excluded() {
		excluded[hadoop.NodeHost(n)] = true
	}
	a.mu.Unlock()

	nodes, err := a.listNodes(ctx)
	if err != nil {
		a.mu.Lock()
		a.book.Nodes.SpreadFailed(a.cfg.Now())
		a.mu.Unlock()
		a.log.WithError(err).Warn("am: no node reports for taskexecutor.locality = \"spread\"; asking for any node for a minute")
		return nil
	}
	return roomsOf(inPartition(nodes, a.cfg.NodeLabel), a.cfg.Spec.Capability, ours, excluded)
}
