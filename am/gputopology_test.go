package am

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// islandsTopology is the report's topology of GPUs 1,3,4,5 on the node of two NVLink islands
// (0,1,4,5 and 2,3,6,7), as the built-in script prints it with --topology prefer: linked by SYS at
// worst, the node's best set of 4 by NV12 (TestTopologyNoConnectedSetFree, gpu).
const islandsTopology = `"topology":{"gpu":{"link":"SYS","best":"NV12","gpus":[` +
	`{"index":"0","numa":"0","links":["X","NV12","SYS","SYS","NV12","NV12","SYS","SYS"]},` +
	`{"index":"1","numa":"0","links":["NV12","X","SYS","SYS","NV12","NV12","SYS","SYS"]},` +
	`{"index":"2","numa":"1","links":["SYS","SYS","X","NV12","SYS","SYS","NV12","NV12"]},` +
	`{"index":"3","numa":"1","links":["SYS","SYS","NV12","X","SYS","SYS","NV12","NV12"]},` +
	`{"index":"4","numa":"0","links":["NV12","NV12","SYS","SYS","X","NV12","SYS","SYS"]},` +
	`{"index":"5","numa":"0","links":["NV12","NV12","SYS","SYS","NV12","X","SYS","SYS"]},` +
	`{"index":"6","numa":"1","links":["SYS","SYS","NV12","NV12","SYS","SYS","X","NV12"]},` +
	`{"index":"7","numa":"1","links":["SYS","SYS","NV12","NV12","SYS","SYS","NV12","X"]}]}}`

const fourGPUs = `"infos":{"gpu":[{"index":"1"},{"index":"3"},{"index":"4"},{"index":"5"}]}`

// A launcher whose GPUs are linked worse than the node's best set (--topology prefer took what was
// free) makes a gpu-topology warning naming the container, the node, the GPUs and both links; the
// status carries the topology for the GPU map (docs/running.md#events).
func TestReportedWorseTopologyIsAnEvent(t *testing.T) {
	m := apiAM(t)
	h := m.Handler(testSecret)
	require.Equal(t, http.StatusNoContent, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, "{"+fourGPUs+","+islandsTopology+"}").Code)
	evs := eventsOfType(m, contract.EventGPUTopology)
	require.Len(t, evs, 1)
	e := evs[0]
	assert.Equal(t, contract.SeverityWarning, e.Severity)
	assert.Equal(t, "c1", e.Container)
	assert.Equal(t, "n1:1", e.Node)
	assert.Equal(t, "gpu", e.Key)
	assert.Equal(t, "SYS", e.Link)
	assert.Equal(t, "NV12", e.BestLink)
	assert.Equal(t, "TaskExecutor c1 on n1:1 got gpu 1,3,4,5 linked by SYS at worst; the node's best set of 4 is linked by NV12 but was not free, so --topology prefer took the best free set (--topology wait waits for a connected set instead)", e.Message)

	st := m.Status()
	require.Len(t, st.Containers, 2)
	top := st.Containers[0].Topology["gpu"]
	assert.Equal(t, "SYS", top.Link)
	require.Len(t, top.GPUs, 8)
	assert.Equal(t, "NV12", top.GPUs[0].Links[1])
}

// A set as good as the node's best (no "best") is no event, but its topology is kept for the map.
func TestReportedBestTopologyIsNoEvent(t *testing.T) {
	m := apiAM(t)
	h := m.Handler(testSecret)
	body := `{"infos":{"gpu":[{"index":"0"},{"index":"1"}]},"topology":{"gpu":{"link":"NV12","gpus":[` +
		`{"index":"0","numa":"0","links":["X","NV12"]},{"index":"1","numa":"-","links":["NV12","X"]}]}}}`
	require.Equal(t, http.StatusNoContent, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, body).Code)
	assert.Empty(t, eventsOfType(m, contract.EventGPUTopology))
	assert.Equal(t, "NV12", m.Status().Containers[0].Topology["gpu"].Link)
}

// A topology that is not a matrix of GPUs (an unknown link, markup, a matrix that is not square, a
// resource without infos) is ignored: no event, nothing for the map; the infos still count.
func TestReportedBadTopologyIsIgnored(t *testing.T) {
	for name, topo := range map[string]string{
		"markup link":  `"topology":{"gpu":{"link":"<b>","best":"NV12","gpus":[{"index":"0","numa":"0","links":["X","SYS"]},{"index":"1","numa":"0","links":["SYS","X"]}]}}`,
		"markup index": `"topology":{"gpu":{"link":"SYS","best":"NV12","gpus":[{"index":"<i>","numa":"0","links":["X","SYS"]},{"index":"1","numa":"0","links":["SYS","X"]}]}}`,
		"not square":   `"topology":{"gpu":{"link":"SYS","best":"NV12","gpus":[{"index":"0","numa":"0","links":["X","SYS"]},{"index":"1","numa":"0","links":["SYS"]}]}}`,
		"one GPU":      `"topology":{"gpu":{"link":"SYS","best":"NV12","gpus":[{"index":"0","numa":"0","links":["X"]}]}}`,
		"no infos":     `"topology":{"fpga":{"link":"SYS","best":"NV12","gpus":[{"index":"0","numa":"0","links":["X","SYS"]},{"index":"1","numa":"0","links":["SYS","X"]}]}}`,
	} {
		m := apiAM(t)
		h := m.Handler(testSecret)
		require.Equal(t, http.StatusNoContent, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, "{"+fourGPUs+","+topo+"}").Code, name)
		assert.Empty(t, eventsOfType(m, contract.EventGPUTopology), name)
		c := m.Status().Containers[0]
		assert.Nil(t, c.Topology, name)
		assert.Len(t, c.Infos["gpu"], 4, name)
	}
}

// A container's topology is dropped when it ends: the map draws the live containers' sets.
func TestTopologyDroppedWhenTheContainerEnds(t *testing.T) {
	m := apiAM(t)
	h := m.Handler(testSecret)
	require.Equal(t, http.StatusNoContent, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, "{"+fourGPUs+","+islandsTopology+"}").Code)
	c1 := m.rec.Get("c1")
	require.NotNil(t, c1.Topology)
	m.rec.Completed(c1, decision.Exit{Class: contract.ExitSucceeded})
	assert.Nil(t, m.Status().Containers[0].Topology)
}
