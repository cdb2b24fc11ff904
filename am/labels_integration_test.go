//go:build integration && labels

package am_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Node labels on the mini cluster started with LABELS=1 (make test-labels; testdata/minicluster/
// README.md, "Node labels"): NodeManager 1 is in the exclusive partition gpu, the cluster also has
// the label fpga, which queue default may not use (docs/job-file.md#node-labels).

// gpuNode returns the address (host:port) and host of the one node in the gpu partition, failing the
// test when the cluster was not started with LABELS=1.
func gpuNode(t *testing.T) (addr, host string) {
	t.Helper()
	require.Equal(t, "gpu", os.Getenv("YARN_AM_LABELS"), "YARN_AM_LABELS is not gpu: start the cluster with make test-labels (LABELS=1)")
	rm, err := e2e.RMClient()
	require.NoError(t, err)
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes, err := rm.GetClusterNodes(ctx, hadooppb.NodeStateProto_NS_RUNNING)
	require.NoError(t, err)
	var in []*hadooppb.NodeReportProto
	for _, n := range nodes {
		for _, l := range n.GetNodeLabels() {
			if l == "gpu" {
				in = append(in, n)
			}
		}
	}
	require.Len(t, in, 1, "one node in the gpu partition among %d", len(nodes))
	require.Greater(t, len(nodes), 1, "the cluster has nodes outside the partition, or the test proves nothing")
	return yarnrpc.NodeAddress(in[0].GetNodeId()), in[0].GetNodeId().GetHost()
}

// labelJob writes a test job whose TaskExecutors (and, with am, the AM) ask for the gpu partition;
// extra is appended to the file (a [policy] table).
func labelJob(t *testing.T, s jobSpec, am bool, extra string) string {
	t.Helper()
	s.teExtra = `node-label = "gpu"` + "\n" + s.teExtra
	p := writeJob(t, s)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	body := string(data)
	if am {
		body = strings.Replace(body, "[am]\n", "[am]\nnode-label = \"gpu\"\n", 1)
	}
	require.NoError(t, os.WriteFile(p, []byte(body+extra), 0o644))
	return p
}

// TestLabelsTaskExecutorsRunInThePartition: every TaskExecutor of a job with taskexecutor.node-label
// = "gpu" runs on the labelled node (the node yarn-am status --json names), and the AM of
// am.node-label = "gpu" does too (the application report's host).
func TestLabelsTaskExecutorsRunInThePartition(t *testing.T) {
	addr, host := gpuNode(t)
	job := labelJob(t, jobSpec{name: "labels-run", instances: 3, gpus: 1, command: "./worker --sleep 1h", maxFailures: 1}, true, "")
	id := e2e.SubmitDetached(t, job)
	d := e2e.WaitFor(t, id, 3*time.Minute, "3 TaskExecutors running", func(d e2e.StatusDoc) bool {
		return d.AM != nil && d.AM.Counts.Running == 3 || e2e.IsEnded(d.Report.State)
	})
	require.NotNil(t, d.AM, "%+v", d.Report)
	require.Equal(t, 3, d.AM.Counts.Running, "%+v", d.Report)
	running := 0
	for _, c := range d.AM.Containers {
		if c.State == "RUNNING" {
			running++
			assert.Equal(t, addr, c.Node, "TaskExecutor %s runs in the gpu partition", c.ID)
		}
	}
	assert.Equal(t, 3, running)

	rep := e2e.RMReport(t, id, 30*time.Second)
	assert.Equal(t, host, rep.GetHost(), "the AM runs in the gpu partition (am.node-label)")
}

// TestLabelsCheckRefusesUnknownAndInaccessibleLabels: check names the cluster's labels for a
// misspelt one, and the queue's for one the queue may not use; the right label passes.
func TestLabelsCheckRefusesUnknownAndInaccessibleLabels(t *testing.T) {
	gpuNode(t)
	job := labelJob(t, jobSpec{name: "labels-check", instances: 1, gpus: 1, command: "./worker", maxFailures: 1}, false, "")
	r := e2e.YarnAM(t, time.Minute, "check", job)
	assert.Equal(t, 0, r.Code, "the gpu label passes:\n%s", r)

	for _, c := range []struct{ label, want string }{
		{"gpus", `taskexecutor.node-label = "gpus": the cluster has no such node label (did you mean "gpu"?); its labels are fpga, gpu`},
		{"fpga", `taskexecutor.node-label = "fpga": queue "default" may not use it`},
	} {
		data, err := os.ReadFile(job)
		require.NoError(t, err)
		bad := strings.Replace(string(data), `node-label = "gpu"`, `node-label = "`+c.label+`"`, 1)
		p := job + "." + c.label + ".toml"
		require.NoError(t, os.WriteFile(p, []byte(bad), 0o644))
		for _, cmd := range []string{"check", "submit"} {
			r := e2e.YarnAM(t, time.Minute, cmd, p)
			assert.NotEqual(t, 0, r.Code, "%s %s:\n%s", cmd, c.label, r)
			assert.Contains(t, r.Stderr, c.want, "%s %s:\n%s", cmd, c.label, r)
			assert.NotContains(t, r.Stdout, "submitted", "nothing is submitted")
		}
	}
	data, err := os.ReadFile(job)
	require.NoError(t, err)
	p := job + ".fpga2.toml"
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), `node-label = "gpu"`, `node-label = "fpga"`, 1)), 0o644))
	r = e2e.YarnAM(t, time.Minute, "check", p)
	assert.Contains(t, r.Stderr, "the labels it may use are gpu", r.String())
}

// TestLabelsEvidenceCountsOnlyThePartition: 3 TaskExecutors of 2 GPUs in a partition of one node
// with 4: the third stays pending, and the not-enough-resources evidence (here failing the job)
// counts the partition's one node and its 4 GPUs, not the cluster's 2 nodes and 8.
func TestLabelsEvidenceCountsOnlyThePartition(t *testing.T) {
	gpuNode(t)
	job := labelJob(t, jobSpec{name: "labels-short", instances: 3, gpus: 2, command: "./worker --sleep 1h", maxFailures: 1}, false,
		"\n[policy]\npending-timeout = \"5s\"\non-pending-timeout = \"fail\"\n")
	id := e2e.SubmitDetached(t, job)
	d := e2e.WaitFor(t, id, 4*time.Minute, "the application ended", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	assert.Equal(t, "FAILED", d.Report.FinalStatus, "%+v", d.Report)
	diag := d.Report.Diagnostics
	assert.Contains(t, diag, "not enough resources", diag)
	assert.Contains(t, diag, `node-label partition "gpu" (1 nodes) total`, diag)
	assert.Contains(t, diag, "yarn.io/gpu=4, free", diag)
	assert.NotContains(t, diag, "cluster (2 nodes)", diag)
}
