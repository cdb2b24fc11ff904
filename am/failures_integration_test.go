//go:build integration

package am_test

// On the real mini cluster: every allocation failure reaches the driver as an event (read here
// through am/driverclient, as a Go driver would) and the RM's final diagnostics (the web UI:
// ui_integration_test.go). The cluster has 2 NodeManagers with 4 GPUs each.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/driverclient"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func ofType(ty contract.EventType) func(contract.Event) bool {
	return func(e contract.Event) bool { return e.Type == ty }
}

const gpuNJob = `name = "am-it-failures"
"external-resources" = "gpu"
"external-resource.gpu.amount" = %d
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"

[taskexecutor]
instances = %d
command = '%s'
memory = 256
max-failures = %d

[taskexecutor.env]
PATH = "$PWD:/usr/local/bin:/usr/bin:/bin"
FAKE_GPU_COUNT = "4"
%s
`

// GPU amount 5 per TaskExecutor on nodes with 4: the AM fails within seconds, naming the key and the
// maximum, in an event and in the RM's final diagnostics.
func TestAMRejectsGPUAmountOverTheMaximum(t *testing.T) {
	c := e2e.MiniCluster(t)
	a := c.Submit(t, fmt.Sprintf(gpuNJob, 5, 1, `sleep 1`, 1, ""))
	start := time.Now()
	r := c.Wait(t, a, time.Minute)
	took := time.Since(start)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_FAILED, r.GetFinalApplicationStatus())
	d := r.GetDiagnostics()
	assert.Contains(t, d, "external-resource.gpu.amount = 5")
	assert.Contains(t, d, "at most 4 yarn.io/gpu")
	assert.Less(t, took, 45*time.Second, "fails fast: no hang waiting for containers")
	t.Logf("failed after %v: %s", took.Round(time.Millisecond), d)
}

// 3 TaskExecutors × 4 GPUs on 8 GPUs: two start, the driver gets a not-enough-resources event with
// the evidence within the configured timeout, and lowering the requirement to 2 clears it.
func TestAMNotEnoughResourcesThenScaleDown(t *testing.T) {
	c := e2e.MiniCluster(t)
	a := c.Submit(t, fmt.Sprintf(gpuNJob, 4, 3, `sleep 300`, 1, ""), "--service", "--pending-timeout=3s")
	dc := c.Driver(t, a)
	rec := c.Record(t, dc)

	// Other applications on the shared mini cluster may hold GPUs for a while: wait for two to run,
	// then for a not-enough-resources event about the third.
	launched := map[string]bool{}
	second := rec.Wait(t, 3*time.Minute, "2 launched", func(e contract.Event) bool {
		if e.Type == contract.EventLaunched {
			launched[e.Container] = true
		}
		return len(launched) == 2
	})
	twoAt := time.Now()
	ev := rec.Wait(t, time.Minute, "not-enough-resources", func(e contract.Event) bool { return e.Type == contract.EventNotEnoughResources && e.ID > second.ID })
	t.Logf("not-enough-resources %v after the second launch: %s", time.Since(twoAt).Round(time.Millisecond), ev.Message)
	require.NotNil(t, ev.Evidence)
	assert.Equal(t, 1, ev.Evidence.Pending)
	assert.Equal(t, int64(4), ev.Evidence.Asked["yarn.io/gpu"])
	assert.Equal(t, int64(8), ev.Evidence.ClusterTotal["yarn.io/gpu"], "cluster totals: %+v", ev.Evidence)
	assert.Equal(t, 2, ev.Evidence.Nodes)
	assert.Equal(t, int64(4), ev.Evidence.LargestCap["yarn.io/gpu"])
	assert.Contains(t, ev.Message, "still waiting")

	s, err := dc.Status(e2e.Context(t, 10*time.Second))
	require.NoError(t, err)
	assert.Equal(t, 2, s.Counts.Running)
	assert.Equal(t, 1, s.Counts.Requested)

	req, err := dc.SetRequirements(e2e.Context(t, 10*time.Second), 2)
	require.NoError(t, err)
	assert.Equal(t, 2, req.Instances)
	rec.Wait(t, 30*time.Second, "requirement-changed", ofType(contract.EventRequirementChanged))
	cleared := rec.Wait(t, 30*time.Second, "resources-available", ofType(contract.EventResourcesAvailable))
	assert.Greater(t, cleared.ID, ev.ID)
	require.Eventually(t, func() bool {
		s, err := dc.Status(e2e.Context(t, 10*time.Second))
		return err == nil && s.Counts.Requested == 0 && s.Counts.Running == 2 && s.Requirement.Instances == 2
	}, 30*time.Second, 200*time.Millisecond)

	// Writes need the secret.
	s, err = dc.Status(e2e.Context(t, 10*time.Second))
	require.NoError(t, err)
	anon, err := driverclient.New(s.SecureAPI, "")
	require.NoError(t, err)
	require.NoError(t, anon.Trust(a.CACert))
	_, err = anon.SetRequirements(e2e.Context(t, 10*time.Second), 5)
	var apiErr *driverclient.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 401, apiErr.StatusCode)
}

// A worker killed with SIGKILL is classified and replaced; the driver sees both on the stream. A
// worker whose GPU discovery fails produces a discovery-failed event with the script's message.
func TestAMSigkilledWorkerIsReplacedAndDiscoveryFailureReported(t *testing.T) {
	c := e2e.MiniCluster(t)
	pids := t.TempDir()
	require.NoError(t, os.Chmod(pids, 0o777))
	cmd := fmt.Sprintf(`echo $$ > %s/$CONTAINER_ID.pid; exec sleep 300`, pids)
	a := c.Submit(t, fmt.Sprintf(gpuNJob, 1, 1, cmd, 3, ""), "--service", "--restart-backoff=100ms")
	rec := c.Record(t, c.Driver(t, a))

	first := rec.Wait(t, 2*time.Minute, "launched", ofType(contract.EventLaunched))
	pidFile := filepath.Join(pids, first.Container+".pid")
	var pid int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		_, err = fmt.Sscan(strings.TrimSpace(string(data)), &pid)
		return err == nil && pid > 0
	}, time.Minute, 100*time.Millisecond, "the worker writes its pid")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	done := rec.Wait(t, time.Minute, "completed", func(e contract.Event) bool {
		return e.Type == contract.EventCompleted && e.Container == first.Container
	})
	assert.Equal(t, contract.ExitFailed, done.ExitClass)
	require.NotNil(t, done.ExitStatus)
	assert.Equal(t, int32(137), *done.ExitStatus)
	assert.Contains(t, done.Message, "killed by signal 9")
	second := rec.Wait(t, time.Minute, "replacement launched", func(e contract.Event) bool { return e.Type == contract.EventLaunched && e.Container != first.Container })
	assert.Greater(t, second.ID, done.ID)

	// Discovery failure: the fake nvidia-smi fails with a message the driver must see.
	b := c.Submit(t, fmt.Sprintf(gpuNJob, 1, 1, `sleep 1`, 0, `FAKE_NVIDIA_SMI_FAIL = "GPU 0 fell off the bus"`))
	recB := c.Record(t, c.Driver(t, b))
	ev := recB.Wait(t, 2*time.Minute, "discovery-failed", ofType(contract.EventDiscoveryFailed))
	assert.Contains(t, ev.Message, "GPU 0 fell off the bus")
	assert.Contains(t, ev.Message, "discovery of resource gpu failed")
	r := c.Wait(t, b, time.Minute)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_FAILED, r.GetFinalApplicationStatus())
	assert.Contains(t, r.GetDiagnostics(), "GPU 0 fell off the bus")
}

// A worker that always fails on one node gets that node excluded; the rest of the job proceeds.
func TestAMExcludesAFailingNode(t *testing.T) {
	c := e2e.MiniCluster(t)
	nodes := strings.Split(os.Getenv("YARN_AM_NM_NODES"), ",")
	require.Len(t, nodes, 2, "YARN_AM_NM_NODES")
	bad := strings.Split(nodes[0], ":")[0]
	cmd := fmt.Sprintf(`if [ "$NM_HOST" = %q ]; then echo "bad node" >&2; exit 5; fi; sleep 2`, bad)
	a := c.Submit(t, fmt.Sprintf(gpuNJob, 1, 4, cmd, 20, ""), "--node-max-failures=2", "--restart-backoff=100ms", "--max-failure-rate=-1")
	rec := c.Record(t, c.Driver(t, a))
	ex := rec.Wait(t, 3*time.Minute, "node-excluded", ofType(contract.EventNodeExcluded))
	assert.Equal(t, bad, strings.Split(ex.Node, ":")[0])
	assert.Contains(t, ex.Message, "2 TaskExecutor failures")
	r := c.Wait(t, a, 3*time.Minute)
	require.Equal(t, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, r.GetFinalApplicationStatus(), "diagnostics: %s", r.GetDiagnostics())
	// After the exclusion no TaskExecutor was placed on the bad node.
	for _, e := range rec.All() {
		if e.Type == contract.EventAllocated && e.ID > ex.ID {
			assert.NotEqual(t, ex.Node, e.Node, "allocated on the excluded node after its exclusion: %s", e.Message)
		}
	}
}
