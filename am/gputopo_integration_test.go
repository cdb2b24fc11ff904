//go:build integration

package am_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/testkit/itest"
)

// TestE2EGPUTopologyWorseSetIsAnEvent runs one TaskExecutor of 2 GPUs on the mini cluster with the
// fake nvidia-smi answering `topo -m` with the PCIe-only fixture (GPUs 1,2 behind one switch, PIX;
// 0,3 below one upper switch, PXB; SYS across). GPU 1 of every node is already claimed (by this test
// process, in the job's own coordination directory), so the built-in script under --topology prefer
// takes 0,3 on whichever node the container lands: the launcher reports the topology and the AM's
// gpu-topology event names the container, its node, its GPUs and both links
// (docs/gpus.md#topology-connected-sets).
func TestE2EGPUTopologyWorseSetIsAnEvent(t *testing.T) {
	bin := e2e.Env(t)
	start := time.Now()
	coord := filepath.Join(t.TempDir(), "coord")
	require.NoError(t, os.Mkdir(coord, 0o700))
	stat, err := os.ReadFile("/proc/self/stat")
	require.NoError(t, err)
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	require.Greater(t, len(fields), 19)
	nodes := strings.Split(os.Getenv("YARN_AM_NM_NODES"), ",")
	require.Len(t, nodes, 2, "YARN_AM_NM_NODES: the mini cluster's two NodeManagers")
	for i, n := range nodes {
		host := strings.Split(n, ":")[0]
		// A claim as the script writes one (docs/gpus.md#how-it-works), owned by this live process.
		claim := fmt.Sprintf("# yarn-am gpu coordination v3: <gpu> <owner pid> <owner start time>\nuuid:%s %d %s\n",
			fakeGPUUUID(t, host, 1), os.Getpid(), fields[19])
		name := filepath.Join(coord, fmt.Sprintf("claims.%d@%s.test%04d", os.Getuid(), host, i))
		require.NoError(t, os.WriteFile(name, []byte(claim), 0o640))
	}
	body := fmt.Sprintf(`name = "e2e-gpu-topology"
"external-resources" = "gpu"
"external-resource.gpu.amount" = 2
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
"external-resource.gpu.param.discovery-script.args" = "--enable-coordination-mode --coordination-dir %s --topology prefer"

[am]
memory = 256

[taskexecutor]
instances = 1
command = "./worker --sleep 1s"
memory = "256"
max-failures = 1
files = [%q]

[taskexecutor.env]
PATH = "%s:/usr/local/bin:/usr/bin:/bin"
FAKE_GPU_COUNT = "4"
FAKE_GPU_TOPO = "pcie-4"
`, coord, worker(t), filepath.Dir(itest.FakeSMI()))
	job := filepath.Join(t.TempDir(), "gpu-topology.toml")
	require.NoError(t, os.WriteFile(job, []byte(body), 0o644))
	id := e2e.SubmitDetached(t, job)

	out := startFollow(t, bin, id, 3*time.Minute)()
	final := e2e.WaitFor(t, id, time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	require.Equal(t, "SUCCEEDED", final.Report.FinalStatus, "diagnostics: %s\n%s", final.Report.Diagnostics, out)

	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "gpu-topology: ") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 1, "one gpu-topology event:\n%s", out)
	assert.Contains(t, lines[0], "WARNING gpu-topology: TaskExecutor container_")
	assert.Regexp(t, ` on [^ ]+ got gpu 0,3 linked by PXB at worst; the node's best set of 2 is linked by PIX but was not free, so --topology prefer took the best free set`, lines[0])
	t.Logf("the test took %s", time.Since(start).Round(time.Second))
}
