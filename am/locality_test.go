package am

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
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

func shareMap(s []hostShare) map[string]int {
	out := map[string]int{}
	for _, h := range s {
		out[h.Host] = h.Count
	}
	return out
}

func TestPlanLocalityFillsFreeRoomFirstThenRoomToCome(t *testing.T) {
	rooms := []nodeRoom{{Host: "b", Rack: "/r1", Free: 6, Room: 6}, {Host: "a", Rack: "/r1", Free: 2, Room: 4}}
	// 5 fit in what is free now (2 + 6): in proportion to it.
	assert.Equal(t, map[string]int{"a": 1, "b": 4}, shareMap(planLocality(rooms, 5)))
	// 10: all that is free, and 2 more where this application's own containers will end.
	assert.Equal(t, map[string]int{"a": 4, "b": 6}, shareMap(planLocality(rooms, 10)))
	// 20: no host has room for the last 10; they are left to the "*" request.
	assert.Equal(t, map[string]int{"a": 4, "b": 6}, shareMap(planLocality(rooms, 20)))
	plan := planLocality(rooms, 10)
	require.Len(t, plan, 2)
	assert.Equal(t, "a", plan[0].Host, "hosts in name order")
	assert.Empty(t, planLocality([]nodeRoom{{Host: "a", Free: 0, Room: 0}}, 4), "no room anywhere: a plain ask")
	assert.Empty(t, planLocality(nil, 4))
	assert.Empty(t, planLocality(rooms, 0))
}

func TestPlanLocalityOneShareForNodeManagersOnOneHost(t *testing.T) {
	// A mini cluster runs every NodeManager on one host; the scheduler names nodes by host.
	rooms := []nodeRoom{{Host: "h", Rack: "/default-rack", Free: 3, Room: 3}, {Host: "h", Rack: "/default-rack", Free: 4, Room: 8}}
	assert.Equal(t, []hostShare{{Host: "h", Rack: "/default-rack", Count: 7}}, planLocality(rooms, 7))
	assert.Equal(t, []hostShare{{Host: "h", Rack: "/default-rack", Count: 11}}, planLocality(rooms, 32))
}

func TestPlanLocalityNeverExceedsTheAsk(t *testing.T) {
	rooms := []nodeRoom{{Host: "a", Free: 3, Room: 5}, {Host: "b", Free: 3, Room: 5}, {Host: "c", Free: 1, Room: 9}}
	for n := 0; n <= 25; n++ {
		total := 0
		for _, s := range planLocality(rooms, n) {
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
	assert.Equal(t, []nodeRoom{
		{Host: "n1", Rack: "/r1", Free: 2, Room: 2},
		{Host: "n2", Rack: "/r1", Free: 0, Room: 4},
		{Host: "n3", Rack: "/r2", Free: 0, Room: 0},
	}, roomsOf(nodes, want, ours, nil))
	// A host the failure policy excluded gets nothing: the RM would never allocate there.
	assert.Equal(t, []nodeRoom{{Host: "n2", Rack: "/r1", Free: 0, Room: 4}, {Host: "n3", Rack: "/r2", Free: 0, Room: 0}},
		roomsOf(nodes, want, ours, map[string]bool{"n1": true}))
}

func TestLocalityRequestsKeepRacksAndStarAtTheFullCount(t *testing.T) {
	base := &hadooppb.ResourceRequestProto{Priority: &hadooppb.PriorityProto{Priority: proto.Int32(1)}, ResourceName: proto.String("*"),
		Capability: res(1024, 1, 1), NumContainers: proto.Int32(10), RelaxLocality: proto.Bool(true), AllocationRequestId: proto.Int64(3)}
	reqs := localityRequests(base, []hostShare{{Host: "a", Rack: "/r1", Count: 2}, {Host: "b", Rack: "/r2", Count: 3}, {Host: "c", Count: 1}, {Host: "d", Rack: "/r1", Count: 1}},
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
	assert.Equal(t, []string{"/r2", "/r1"}, racksOf([]nodeRoom{{Host: "x", Rack: "/r2"}, {Host: "y", Rack: "/r1"}, {Host: "z", Rack: "/r2"}}))
}

type spreadNodes struct {
	nodes []*hadooppb.NodeReportProto
	err   error
	calls int
}

func (f *spreadNodes) GetClusterNodes(context.Context, ...hadooppb.NodeStateProto) ([]*hadooppb.NodeReportProto, error) {
	f.calls++
	return f.nodes, f.err
}

func TestLoopSpreadsAsksAsNodeLocalRequests(t *testing.T) {
	f := newFakeCluster(t)
	m, _ := f.newAM(t, gpuSpec(6, 3))
	nodes := &spreadNodes{nodes: []*hadooppb.NodeReportProto{
		nodeReport("n1", 41, "/default-rack", res(8192, 8, 4), res(0, 0, 0)),
		nodeReport("n2", 42, "/default-rack", res(8192, 8, 4), res(4096, 4, 2)),
	}}
	m.cfg.Cluster, m.cfg.Locality = nodes, localitySpread
	assert.Equal(t, contract.Succeeded, run(t, m).Status)
	f.Mu.Lock()
	defer f.Mu.Unlock()
	first := map[string]int32{}
	for _, a := range f.AskLog {
		if a.GetAllocationRequestId() == 1 {
			if _, seen := first[a.GetResourceName()]; !seen {
				first[a.GetResourceName()] = a.GetNumContainers()
			}
		}
	}
	// 6 asked, room for 4 + 2: spread in proportion to it, the rack and "*" with the whole ask.
	assert.Equal(t, map[string]int32{"n1": 4, "n2": 2, "/default-rack": 6, "*": 6}, first)
	assert.Positive(t, nodes.calls)
}

func TestLoopAsksForAnyNodeWithoutNodeReportsOrWhenTurnedOff(t *testing.T) {
	for name, setup := range map[string]func(m *am, nodes *spreadNodes){
		"reports fail": func(m *am, nodes *spreadNodes) { nodes.err = errors.New("SIMPLE authentication is not enabled") },
		"locality any": func(m *am, nodes *spreadNodes) { m.cfg.Locality = localityAny },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t)
			m, _ := f.newAM(t, gpuSpec(4, 3))
			nodes := &spreadNodes{nodes: []*hadooppb.NodeReportProto{nodeReport("n1", 41, "/default-rack", res(8192, 8, 4), res(0, 0, 0))}}
			m.cfg.Cluster, m.cfg.Locality = nodes, localitySpread
			setup(m, nodes)
			assert.Equal(t, contract.Succeeded, run(t, m).Status)
			f.Mu.Lock()
			defer f.Mu.Unlock()
			require.NotEmpty(t, f.AskLog)
			for _, a := range f.AskLog {
				assert.Equal(t, "*", a.GetResourceName())
			}
			if name == "reports fail" {
				assert.Equal(t, 1, nodes.calls, "a failed node report is not asked again within a minute")
			}
		})
	}
}

func TestNewRejectsAnUnknownLocality(t *testing.T) {
	_, err := newAM(config{RM: nopRM{}, NM: nopNM{}, LaunchContext: &hadooppb.ContainerLaunchContextProto{}, Locality: "near"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `taskexecutor.locality = "near"`)
	assert.Contains(t, err.Error(), `"spread"`)
	assert.Contains(t, err.Error(), `"any"`)
	m, err := newAM(config{RM: nopRM{}, NM: nopNM{}, LaunchContext: &hadooppb.ContainerLaunchContextProto{}})
	require.NoError(t, err)
	assert.Equal(t, localityAny, m.cfg.Locality, "plain asks unless the job asks for spreading")
}

func TestLoopSpreadsWhatFitsAndAsksForTheRestPlainly(t *testing.T) {
	f := newFakeCluster(t)
	m, _ := f.newAM(t, gpuSpec(6, 3))
	// Room for 4 (n1's 4 GPUs); n2 is full.
	nodes := &spreadNodes{nodes: []*hadooppb.NodeReportProto{
		nodeReport("n1", 41, "/default-rack", res(8192, 8, 4), res(0, 0, 0)),
		nodeReport("n2", 42, "/default-rack", res(8192, 8, 4), res(8192, 8, 4)),
	}}
	m.cfg.Cluster, m.cfg.Locality = nodes, localitySpread
	assert.Equal(t, contract.Succeeded, run(t, m).Status)
	f.Mu.Lock()
	defer f.Mu.Unlock()
	first := map[int64]map[string]int32{}
	for _, a := range f.AskLog {
		id := a.GetAllocationRequestId()
		if first[id] == nil {
			first[id] = map[string]int32{}
		}
		if _, seen := first[id][a.GetResourceName()]; !seen {
			first[id][a.GetResourceName()] = a.GetNumContainers()
		}
	}
	// The 4 that fit are spread; the 2 that must wait for room are a plain ask of their own, so the
	// scheduler's locality delay never applies to them.
	assert.Equal(t, map[string]int32{"n1": 4, "/default-rack": 4, "*": 4}, first[1])
	assert.Equal(t, map[string]int32{"*": 2}, first[2])
}

func TestClusterAuthUsesTheRMDelegationToken(t *testing.T) {
	creds := yarnrpc.NewCredentials()
	assert.Equal(t, yarnrpc.AuthSimple, clusterAuth(creds, "alice").Method, "no token: SIMPLE as the user")
	creds.Tokens["rm"] = yarnrpc.Token{Identifier: []byte("id"), Password: []byte("pw"), Kind: yarnrpc.RMDelegationTokenKind, Service: "127.0.0.1:8032"}
	a := clusterAuth(creds, "alice")
	require.Equal(t, yarnrpc.AuthToken, a.Method)
	assert.Equal(t, yarnrpc.RMDelegationTokenKind, a.Token.Kind)
	assert.Equal(t, "alice", a.User)
}
