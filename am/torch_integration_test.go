//go:build integration

package am_test

// Real PyTorch on the mini cluster (docs/running.md#pytorch): gang jobs whose TaskExecutors run
// testdata/torch/ddp.py with the torch of `make torch-env`, one process per TaskExecutor and under
// torchrun with two per TaskExecutor. The script's one line per rank (ranks, the all_reduce sum, the
// DDP step, its GPUs) is read from the containers' stdout in the NodeManagers' log dirs. With the
// integration tag a missing torch environment is a failure, never a skip.

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// torchPython returns the python of the torch environment, as `make integration` passes it.
func torchPython(t *testing.T) string {
	t.Helper()
	py, out := venvPython(t, "YARN_AM_TORCH_PYTHON", "torch-env", "import torch, torch.distributed as d; print(torch.__version__, d.is_gloo_available())")
	f := strings.Fields(out)
	require.Len(t, f, 2, "torch's version and gloo: %.200q", out)
	require.Equal(t, "True", f[1], "torch %s has the gloo backend", f[0])
	t.Logf("torch %s", f[0])
	return py
}

// torchJob writes a gang job whose TaskExecutors get gpus fake GPUs each and run command with
// ddp.py and the fake nvidia-smi shipped beside it.
func torchJob(t *testing.T, name string, instances, gpus int, memory, command string) string {
	t.Helper()
	return gangScriptJob(t, name, "../testdata/torch/ddp.py", instances, gpus, memory, command)
}

var ddpLine = regexp.MustCompile(`^ddp: rank=(\d+) world=(\d+) local_rank=(\d+) cuda_visible_devices=(\S*) container_gpus=(\S*) allreduce=(-?\d+) want=(\d+) params_equal=(\w+) stepped=(\w+) maxrss_mib=(\d+) ok=(\w+)$`)

// ddpRank is one process's line, with the container and node (NodeManager log dir) it ran in.
type ddpRank struct {
	node, container                     string
	rank, world, localRank              string
	visible, containerGPUs              string
	allreduce, want, equal, stepped, ok string
	rssMiB                              string
}

// ddpRanks reads every ddp line of the application's TaskExecutors.
func ddpRanks(t *testing.T, id string) []ddpRank {
	t.Helper()
	var out []ddpRank
	for _, l := range scriptLines(t, id, ddpLine) {
		m := l.m
		out = append(out, ddpRank{node: l.node, container: l.container, rank: m[1], world: m[2],
			localRank: m[3], visible: m[4], containerGPUs: m[5], allreduce: m[6], want: m[7], equal: m[8],
			stepped: m[9], rssMiB: m[10], ok: m[11]})
	}
	return out
}

// runTorchJob submits the job, waits for its end and returns its ddp lines; it fails unless the
// application SUCCEEDED.
func runTorchJob(t *testing.T, job string) []ddpRank {
	t.Helper()
	ranks := ddpRanks(t, runGangJob(t, job))
	for _, r := range ranks {
		t.Logf("rank %s in %s: CUDA_VISIBLE_DEVICES=%s of %s, max RSS %s MiB", r.rank, r.container, r.visible, r.containerGPUs, r.rssMiB)
	}
	return ranks
}

// checkRanks asserts what every process checked and printed: ranks 0..n-1 exactly once in a world of
// n, the all_reduce sum n(n-1)/2, equal parameters after a DDP step that changed them, and one GPU
// per process, no GPU of a node used twice.
func checkRanks(t *testing.T, ranks []ddpRank, n int) {
	t.Helper()
	require.Len(t, ranks, n, "one ddp line per process")
	seen, gpuOf := map[string]int{}, map[string]string{}
	for _, r := range ranks {
		seen[r.rank]++
		assert.Equal(t, fmt.Sprint(n), r.world, "WORLD_SIZE of rank %s", r.rank)
		assert.Equal(t, fmt.Sprint(n*(n-1)/2), r.allreduce, "all_reduce sum of the ranks, rank %s", r.rank)
		assert.Equal(t, r.want, r.allreduce, "rank %s", r.rank)
		assert.Equal(t, "true", r.stepped, "the DDP step changed rank %s's parameters", r.rank)
		assert.Equal(t, "true", r.equal, "rank %s's parameters equal every other rank's after the step", r.rank)
		assert.Equal(t, "true", r.ok, "rank %s", r.rank)
		assert.Regexp(t, `^[0-3]$`, r.visible, "rank %s sees one GPU of the node's four", r.rank)
		key := r.node + " gpu " + r.visible
		assert.Empty(t, gpuOf[key], "ranks %s and %s share %s", gpuOf[key], r.rank, key)
		gpuOf[key] = r.rank
	}
	want := map[string]int{}
	for i := range n {
		want[fmt.Sprint(i)] = 1
	}
	assert.Equal(t, want, seen, "global ranks 0..%d exactly once", n-1)
}

// TestTorchDDPFourRanksOneGPUEach: 4 TaskExecutors x 1 GPU, each one rank running ddp.py directly
// with the launcher's RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT; the process sees exactly the
// container's GPU.
func TestTorchDDPFourRanksOneGPUEach(t *testing.T) {
	e2e.Env(t)
	py := torchPython(t)
	ranks := runTorchJob(t, torchJob(t, "torch-ddp-4x1", 4, 1, "1536", py+" ddp.py"))
	checkRanks(t, ranks, 4)
	containers := map[string]bool{}
	for _, r := range ranks {
		containers[r.container] = true
		assert.Equal(t, r.containerGPUs, r.visible, "one process per TaskExecutor keeps the container's GPU, rank %s", r.rank)
	}
	assert.Len(t, containers, 4, "one rank per TaskExecutor")
}

// TestTorchrunTwoNodesTwoGPUsEach: 2 TaskExecutors x 2 GPUs, each a torchrun "node" (node rank =
// the gang's RANK) spawning 2 processes; each process keeps the LOCAL_RANK-th of its container's
// GPUs (the lines at the top of ddp.py), and the global ranks are 0..3.
func TestTorchrunTwoNodesTwoGPUsEach(t *testing.T) {
	e2e.Env(t)
	py := torchPython(t)
	torchrun := filepath.Join(filepath.Dir(py), "torchrun")
	command := torchrun + " --nnodes=$WORLD_SIZE --node-rank=$RANK --master-addr=$MASTER_ADDR --master-port=$MASTER_PORT --nproc-per-node=2 ddp.py"
	ranks := runTorchJob(t, torchJob(t, "torchrun-2x2", 2, 2, "3072", command))
	checkRanks(t, ranks, 4)
	byContainer := map[string][]ddpRank{}
	for _, r := range ranks {
		byContainer[r.container] = append(byContainer[r.container], r)
	}
	require.Len(t, byContainer, 2, "two TaskExecutors")
	for c, rs := range byContainer {
		require.Len(t, rs, 2, "torchrun spawned two processes in %s", c)
		gpus := strings.Split(rs[0].containerGPUs, ",")
		require.Len(t, gpus, 2, "container %s has two GPUs: %q", c, rs[0].containerGPUs)
		assert.Equal(t, rs[0].containerGPUs, rs[1].containerGPUs, "both processes of %s started with the container's GPUs", c)
		var local, visible []string
		for _, r := range rs {
			local = append(local, r.localRank)
			visible = append(visible, r.visible)
			if li, err := strconv.Atoi(r.localRank); err == nil && li < len(gpus) {
				assert.Equal(t, gpus[li], r.visible, "local rank %s keeps the LOCAL_RANK-th GPU of %s", r.localRank, rs[0].containerGPUs)
			}
		}
		sort.Strings(local)
		sort.Strings(visible)
		sort.Strings(gpus)
		assert.Equal(t, []string{"0", "1"}, local, "local ranks in %s", c)
		assert.Equal(t, gpus, visible, "the two processes of %s split its GPUs one each", c)
	}
}
