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
	m.nodes.cluster, m.cfg.Locality = nodes, localitySpread
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
			m.nodes.cluster, m.cfg.Locality = nodes, localitySpread
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
	m.nodes.cluster, m.cfg.Locality = nodes, localitySpread
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
