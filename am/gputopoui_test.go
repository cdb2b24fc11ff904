package am

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// gpuTopoUIStatus: node7 has two NVLink islands of 4 (0,1,4,5 and 2,3,6,7; SYS across) and two
// TaskExecutors, one holding island A (NV12), one GPUs 2 and 3 (NV12); node8 is PCIe-only and its
// TaskExecutor got 0,3 (PXB) where the node's best pair is PIX. A fourth container's topology carries
// markup, which must be drawn as text.
func gpuTopoUIStatus() contract.Status {
	now := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	islands := func(link, best string) contract.GPUTopology {
		t := contract.GPUTopology{Link: link, Best: best}
		for i := 0; i < 8; i++ {
			row := contract.GPUTopologyRow{Index: string(rune('0' + i)), NUMA: "0"}
			if i == 2 || i == 3 || i == 6 || i == 7 {
				row.NUMA = "1"
			}
			for j := 0; j < 8; j++ {
				switch {
				case i == j:
					row.Links = append(row.Links, "X")
				case (i%4 < 2) == (j%4 < 2):
					row.Links = append(row.Links, "NV12")
				default:
					row.Links = append(row.Links, "SYS")
				}
			}
			t.GPUs = append(t.GPUs, row)
		}
		return t
	}
	pcie := contract.GPUTopology{Link: "PXB", Best: "PIX", GPUs: []contract.GPUTopologyRow{
		{Index: "0", NUMA: "0", Links: []string{"X", "SYS", "SYS", "PXB"}},
		{Index: "1", NUMA: "1", Links: []string{"SYS", "X", "PIX", "SYS"}},
		{Index: "2", NUMA: "1", Links: []string{"SYS", "PIX", "X", "SYS"}},
		{Index: "3", NUMA: "0", Links: []string{"PXB", "SYS", "SYS", "X"}}}}
	gpus := func(idx ...string) map[string][]contract.Info {
		var l []contract.Info
		for _, i := range idx {
			l = append(l, contract.Info{contract.InfoIndex: i})
		}
		return map[string][]contract.Info{"gpu": l}
	}
	c := func(n, node string, infos map[string][]contract.Info, topo contract.GPUTopology) contract.ContainerStatus {
		return contract.ContainerStatus{ID: "container_1_0009_01_00000" + n, Node: node, State: contract.Running,
			Resources: contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": int64(len(infos["gpu"]))},
			Infos:     infos, Topology: map[string]contract.GPUTopology{"gpu": topo},
			AllocatedAt: now.Add(-time.Minute), LaunchedAt: now.Add(-50 * time.Second)}
	}
	hostile := pcie
	hostile.Link = `<img src=x onerror="document.title='pwned'">`
	return contract.Status{App: "application_1_0009", State: contract.StateRunning, Now: now, Started: now.Add(-2 * time.Minute),
		Requirement: contract.Requirement{Instances: 4, Resources: contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": 2},
			ExternalResources: map[string]string{"gpu": "yarn.io/gpu"}},
		Counts: contract.Counts{Running: 4},
		Nodes: []contract.NodeStatus{
			{Node: "node7:8041", Capability: contract.Capability{"yarn.io/gpu": 8}, Used: contract.Capability{"yarn.io/gpu": 6}},
			{Node: "node8:8041", Capability: contract.Capability{"yarn.io/gpu": 4}, Used: contract.Capability{"yarn.io/gpu": 2}},
			{Node: "node9:8041", Capability: contract.Capability{"yarn.io/gpu": 4}, Used: contract.Capability{"yarn.io/gpu": 2}},
		},
		NodesAt: now,
		Containers: []contract.ContainerStatus{
			c("2", "node7:8041", gpus("0", "1", "4", "5"), islands("NV12", "")),
			c("3", "node7:8041", gpus("2", "3"), islands("NV12", "")),
			c("4", "node8:8041", gpus("0", "3"), pcie),
			c("5", "node9:8041", gpus("0", "3"), hostile),
		}}
}

// The GPU map draws, per node, its GPUs' links (NVLink, PCIe levels) and the sets: each held GPU names
// its set's link (and the node's best when worse), and the pairs of one container's set are marked in
// the node's matrix (docs/running.md#web-ui). Markup in a reported topology stays text.
func TestUIPageDrawsGPULinksAndSets(t *testing.T) {
	chromium := uiChromium(t)
	st := gpuTopoUIStatus()
	dom := renderedPage(t, chromium, st)

	table := func(node string) string {
		m := regexp.MustCompile(`<table class="gpu-links" data-resource="gpu" data-node="` + regexp.QuoteMeta(node) + `">(.*?)</table>`).FindStringSubmatch(dom)
		require.NotNil(t, m, "a links matrix for %s in %s", node, dom)
		return m[1]
	}
	n7 := table("node7:8041")
	assert.Equal(t, 64, strings.Count(n7, `<td class="link link-`), "8×8 links")
	assert.Equal(t, 24, strings.Count(n7, `class="link link-nv`), "each GPU's 3 island peers")
	assert.Equal(t, 32, strings.Count(n7, `class="link link-sys`), "each GPU's 4 GPUs of the other island")
	inSet := regexp.MustCompile(`<td class="link link-nv in-set" data-pair="(\d)-(\d)"`).FindAllStringSubmatch(n7, -1)
	pairs := map[string]bool{}
	for _, p := range inSet {
		pairs[p[1]+p[2]] = true
	}
	assert.Len(t, pairs, 12+2, "island A's 4×3 ordered pairs and 2-3, 3-2")
	for _, p := range []string{"01", "45", "15", "23", "32"} {
		assert.True(t, pairs[p], p)
	}
	assert.False(t, pairs["12"], "1 and 2 are in different sets")
	assert.Contains(t, n7, `<th class="held" data-container="container_1_0009_01_000002" title="held by container_1_0009_01_000002">GPU 0</th>`)
	assert.Contains(t, n7, `<th data-container="" title="not held by this application">GPU 6</th>`)
	assert.Equal(t, 0, strings.Count(n7, "link-sys in-set"), "no set spans the islands")

	cellOf := func(node, gpu string) string {
		m := regexp.MustCompile(`<div class="gpu-cell [^"]*" data-resource="gpu" data-node="` + regexp.QuoteMeta(node) + `" data-gpu="` + gpu + `"[^>]*>(.*?)</div></div>`).FindStringSubmatch(dom)
		require.NotNil(t, m, "the cell of GPU %s on %s", gpu, node)
		return m[0]
	}
	assert.Contains(t, cellOf("node7:8041", "4"), `data-set-link="NV12"`)
	assert.Contains(t, cellOf("node7:8041", "4"), `<div class="gpu-set link-nv">set NV12</div>`)
	assert.NotContains(t, cellOf("node7:8041", "6"), "gpu-set", "a free GPU is in no set")
	assert.Contains(t, cellOf("node8:8041", "3"), `<div class="gpu-set link-pcie">set PXB (best PIX)</div>`)
	n8 := table("node8:8041")
	assert.Contains(t, n8, `<td class="link link-pcie in-set" data-pair="0-3"`)
	assert.Contains(t, n8, `<td class="link link-pcie" data-pair="1-2"`, "the node's best pair, not held")

	// Markup in a topology is text: no element, no script ran (it would have set the title).
	assert.NotContains(t, dom, "<img")
	assert.Contains(t, cellOf("node9:8041", "0"), `set &lt;img src=x onerror="document.title='pwned'"&gt; (best PIX)`)
	assert.Contains(t, dom, "<title>yarn-am</title>")
}
