//go:build integration

package am_test

// Real JAX on the mini cluster (docs/running.md#jax): a gang job whose TaskExecutors each run one JAX
// process of testdata/jax/allreduce.py with the jax of `make jax-env`, the processes meeting at rank
// 0's coordinator (MASTER_ADDR:MASTER_PORT) and summing across processes over gloo on CPU. The
// script's one line per rank is read from the containers' stdout. With the integration tag a missing
// JAX environment is a failure, never a skip.

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// jaxPython returns the python of the JAX environment, as `make integration` passes it.
func jaxPython(t *testing.T) string {
	t.Helper()
	py, out := venvPython(t, "YARN_AM_JAX_PYTHON", "jax-env",
		`import jax; jax.config.update("jax_cpu_collectives_implementation", "gloo"); print(jax.__version__)`)
	t.Logf("jax %s", strings.TrimSpace(out))
	return py
}

var jaxLine = regexp.MustCompile(`^jax: rank=(\d+) world=(\d+) process_index=(\d+) process_count=(\d+) devices=(\d+) sum=(-?\d+) want=(\d+) gathered=(\S+) version=(\S+) maxrss_mib=(\d+) ok=(\w+)$`)

// TestJAXAllReduceThreeRanksOneGPUEach: 3 TaskExecutors x 1 GPU, each one JAX process initialised
// with jax.distributed.initialize from the launcher's RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT;
// every process sees the 3 processes' CPU devices, sums rank+1 across them (6) and gathers the
// process indexes 0,1,2.
func TestJAXAllReduceThreeRanksOneGPUEach(t *testing.T) {
	e2e.Env(t)
	py := jaxPython(t)
	const n = 3
	id := runGangJob(t, gangScriptJob(t, "jax-allreduce-3x1", "../testdata/jax/allreduce.py", n, 1, "512", py+" allreduce.py"))
	lines := scriptLines(t, id, jaxLine)
	require.Len(t, lines, n, "one jax line per process\n%s", e2e.ContainerLogs(id))
	seen, containers := map[string]int{}, map[string]bool{}
	gathered := make([]string, n)
	for i := range n {
		gathered[i] = fmt.Sprint(i)
	}
	for _, l := range lines {
		m := l.m
		rank := m[1]
		t.Logf("rank %s in %s on %s: %s", rank, l.container, l.node, m[0])
		seen[rank]++
		containers[l.container] = true
		assert.Equal(t, fmt.Sprint(n), m[2], "WORLD_SIZE of rank %s", rank)
		assert.Equal(t, rank, m[3], "jax.process_index() is the gang's RANK, rank %s", rank)
		assert.Equal(t, fmt.Sprint(n), m[4], "jax.process_count(), rank %s", rank)
		assert.Equal(t, fmt.Sprint(n), m[5], "global devices (one CPU device per process), rank %s", rank)
		assert.Equal(t, fmt.Sprint(n*(n+1)/2), m[6], "the cross-process sum of rank+1, rank %s", rank)
		assert.Equal(t, m[7], m[6], "rank %s", rank)
		assert.Equal(t, strings.Join(gathered, ","), m[8], "process_allgather of the process indexes, rank %s", rank)
		assert.Equal(t, "true", m[11], "rank %s", rank)
	}
	want := map[string]int{}
	for i := range n {
		want[fmt.Sprint(i)] = 1
	}
	assert.Equal(t, want, seen, "ranks 0..%d exactly once", n-1)
	assert.Len(t, containers, n, "one rank per TaskExecutor")
}
