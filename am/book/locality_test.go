package book

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func res(mem int64, vcores int32, gpus int64) *hadooppb.ResourceProto {
	r := &hadooppb.ResourceProto{Memory: proto.Int64(mem), VirtualCores: proto.Int32(vcores)}
	if gpus >= 0 {
		r.ResourceValueMap = []*hadooppb.ResourceInformationProto{{Key: proto.String("yarn.io/gpu"), Value: proto.Int64(gpus)}}
	}
	return r
}

func nodeReport(host string, port int32, rack string, capability, used *hadooppb.ResourceProto) *hadooppb.NodeReportProto {
	return &hadooppb.NodeReportProto{NodeId: &hadooppb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(port)}, RackName: proto.String(rack),
		Capability: capability, Used: used, NodeState: hadooppb.NodeStateProto_NS_RUNNING.Enum()}
}

func shareMap(s []HostShare) map[string]int {
	out := map[string]int{}
	for _, h := range s {
		out[h.Host] = h.Count
	}
	return out
}

func TestPlanLocalityFillsFreeRoomFirstThenRoomToCome(t *testing.T) {
	rooms := []NodeRoom{{Host: "b", Rack: "/r1", Free: 6, Room: 6}, {Host: "a", Rack: "/r1", Free: 2, Room: 4}}
	// 5 fit in what is free now (2 + 6): in proportion to it.
	assert.Equal(t, map[string]int{"a": 1, "b": 4}, shareMap(PlanLocality(rooms, 5)))
	// 10: all that is free, and 2 more where this application's own containers will end.
	assert.Equal(t, map[string]int{"a": 4, "b": 6}, shareMap(PlanLocality(rooms, 10)))
	// 20: no host has room for the last 10; they are left to the "*" request.
	assert.Equal(t, map[string]int{"a": 4, "b": 6}, shareMap(PlanLocality(rooms, 20)))
	plan := PlanLocality(rooms, 10)
	require.Len(t, plan, 2)
	assert.Equal(t, "a", plan[0].Host, "hosts in name order")
	assert.Empty(t, PlanLocality([]NodeRoom{{Host: "a", Free: 0, Room: 0}}, 4), "no room anywhere: a plain ask")
	assert.Empty(t, PlanLocality(nil, 4))
	assert.Empty(t, PlanLocality(rooms, 0))
}

func TestPlanLocalityOneShareForNodeManagersOnOneHost(t *testing.T) {
	// A mini cluster runs every NodeManager on one host; the scheduler names nodes by host.
	rooms := []NodeRoom{{Host: "h", Rack: "/default-rack", Free: 3, Room: 3}, {Host: "h", Rack: "/default-rack", Free: 4, Room: 8}}
	assert.Equal(t, []HostShare{{Host: "h", Rack: "/default-rack", Count: 7}}, PlanLocality(rooms, 7))
	assert.Equal(t, []HostShare{{Host: "h", Rack: "/default-rack", Count: 11}}, PlanLocality(rooms, 32))
}

func TestPlanLocalityNeverExceedsTheAsk(t *testing.T) {
	rooms := []NodeRoom{{Host: "a", Free: 3, Room: 5}, {Host: "b", Free: 3, Room: 5}, {Host: "c", Free: 1, Room: 9}}
	for n := 0; n <= 25; n++ {
		total := 0
		for _, s := range PlanLocality(rooms, n) {
			assert.Positive(t, s.Count)
			total += s.Count
		}
		assert.Equal(t, min(n, 19), total, "n=%d", n)
	}
}

func TestNodeRoomsFreeAndRoomToCome(t *testing.T) {
	want := contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": 1}
	nodes := []*hadooppb.NodeReportProto{
		// Half taken by another application: room for 2 now and later.
		nodeReport("n1", 41, "/r1", res(8192, 8, 4), res(4096, 4, 2)),
		// Full with this application's containers: no room now, all of it later.
		nodeReport("n2", 42, "/r1", res(8192, 8, 4), res(8192, 8, 4)),
		// No GPUs at all.
		nodeReport("n3", 43, "/r2", res(8192, 8, -1), res(0, 0, -1)),
	}
	lost := nodeReport("n4", 44, "/r2", res(8192, 8, 4), res(0, 0, 0))
	lost.NodeState = hadooppb.NodeStateProto_NS_LOST.Enum()
	nodes = append(nodes, lost)
	ours := map[string]contract.Capability{"n2:42": {"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4}}
	assert.Equal(t, []NodeRoom{
		{Host: "n1", Rack: "/r1", Free: 2, Room: 2},
		{Host: "n2", Rack: "/r1", Free: 0, Room: 4},
		{Host: "n3", Rack: "/r2", Free: 0, Room: 0},
	}, RoomsOf(nodes, want, ours, nil))
	// A host the failure policy excluded gets nothing: the RM would never allocate there.
	assert.Equal(t, []NodeRoom{{Host: "n2", Rack: "/r1", Free: 0, Room: 4}, {Host: "n3", Rack: "/r2", Free: 0, Room: 0}},
		RoomsOf(nodes, want, ours, map[string]bool{"n1": true}))
}

func TestLocalityRequestsKeepRacksAndStarAtTheFullCount(t *testing.T) {
	base := &hadooppb.ResourceRequestProto{Priority: &hadooppb.PriorityProto{Priority: proto.Int32(1)}, ResourceName: proto.String("*"),
		Capability: res(1024, 1, 1), NumContainers: proto.Int32(10), RelaxLocality: proto.Bool(true), AllocationRequestId: proto.Int64(3)}
	reqs := LocalityRequests(base, []HostShare{{Host: "a", Rack: "/r1", Count: 2}, {Host: "b", Rack: "/r2", Count: 3}, {Host: "c", Count: 1}, {Host: "d", Rack: "/r1", Count: 1}},
		[]string{"/r1", "/r3"})
	got := map[string]int32{}
	for _, r := range reqs {
		got[r.GetResourceName()] = r.GetNumContainers()
		assert.True(t, r.GetRelaxLocality(), "%s: relax_locality keeps the rack and \"*\" fallbacks", r.GetResourceName())
		assert.EqualValues(t, 3, r.GetAllocationRequestId(), "%s: every request of an ask has its allocationRequestId", r.GetResourceName())
		assert.EqualValues(t, 1, r.GetPriority().GetPriority())
		assert.True(t, proto.Equal(base.GetCapability(), r.GetCapability()))
	}
	// Every rack (of the shares, and of every node: /r3 has no share) and "*" carry the whole ask, so
	// no host's share can leave the others without a rack request.
	assert.Equal(t, map[string]int32{"a": 2, "b": 3, "c": 1, "d": 1, "/r1": 10, "/r2": 10, "/r3": 10, "/default-rack": 10, "*": 10}, got)
	assert.Equal(t, "*", reqs[len(reqs)-1].GetResourceName())
	assert.EqualValues(t, 10, base.GetNumContainers(), "the base request is not changed")
	assert.Equal(t, []string{"/r2", "/r1"}, RacksOf([]NodeRoom{{Host: "x", Rack: "/r2"}, {Host: "y", Rack: "/r1"}, {Host: "z", Rack: "/r2"}}))
}
