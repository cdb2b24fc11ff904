//go:build integration

package am_test

// On the real mini cluster: every allocation failure reaches the driver as an event (read here
// through am/driverclient, as a Go driver would) and the RM's final diagnostics (the web UI:
// ui_integration_test.go). The cluster has 2 NodeManagers with 4 GPUs each.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/driverclient"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// driver returns a driver-API client for a once it has registered: on the AM's HTTPS API (named in
// the status on its tracking URL), trusting the authority the test submitted with.
func (c *cluster) driver(t *testing.T, a *app) *driverclient.Client {
	t.Helper()
	base := c.plainBase(t, a)
	plain, err := driverclient.New(base+"api/v1/", "")
	require.NoError(t, err)
	s, err := plain.Status(ctxT(t, 30*time.Second))
	require.NoError(t, err)
	require.Regexp(t, `^https://`, s.SecureAPI, "the status names the HTTPS API")
	dc, err := driverclient.New(s.SecureAPI, a.secret)
	require.NoError(t, err)
	require.NoError(t, dc.Trust(a.caCert))
	return dc
}

// recorder collects a stream's events in the background.
type recorder struct {
	mu  sync.Mutex
	evs []contract.Event
}

func (c *cluster) record(t *testing.T, dc *driverclient.Client) *recorder {
	ctx, cancel := context.WithCancel(context.Background())
	r := &recorder{}
	s := dc.Events(ctx, 0)
	s.GiveUpAfter = 5 * time.Second
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			e, err := s.Next()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.evs = append(r.evs, e)
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			for _, e := range r.all() {
				t.Logf("event %d %s: %s", e.ID, e.Type, e.Message)
			}
		}
	})
	return r
}

func (r *recorder) all() []contract.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]contract.Event(nil), r.evs...)
}

// wait returns the first event matching f, failing after d.
func (r *recorder) wait(t *testing.T, d time.Duration, what string, f func(contract.Event) bool) contract.Event {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, e := range r.all() {
			if f(e) {
				return e
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s event within %v", what, d)
	return contract.Event{}
}

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
	c := miniCluster(t)
	a := c.submit(t, fmt.Sprintf(gpuNJob, 5, 1, `sleep 1`, 1, ""))
	start := time.Now()
	r := c.wait(t, a, time.Minute)
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
	c := miniCluster(t)
	a := c.submit(t, fmt.Sprintf(gpuNJob, 4, 3, `sleep 300`, 1, ""), "--service", "--pending-timeout=3s")
	dc := c.driver(t, a)
	rec := c.record(t, dc)

	// Other applications on the shared mini cluster may hold GPUs for a while: wait for two to run,
	// then for a not-enough-resources event about the third.
	launched := map[string]bool{}
	second := rec.wait(t, 3*time.Minute, "2 launched", func(e contract.Event) bool {
		if e.Type == contract.EventLaunched {
			launched[e.Container] = true
		}
		return len(launched) == 2
	})
	twoAt := time.Now()
	ev := rec.wait(t, time.Minute, "not-enough-resources", func(e contract.Event) bool { return e.Type == contract.EventNotEnoughResources && e.ID > second.ID })
	t.Logf("not-enough-resources %v after the second launch: %s", time.Since(twoAt).Round(time.Millisecond), ev.Message)
	require.NotNil(t, ev.Evidence)
	assert.Equal(t, 1, ev.Evidence.Pending)
	assert.Equal(t, int64(4), ev.Evidence.Asked["yarn.io/gpu"])
	assert.Equal(t, int64(8), ev.Evidence.ClusterTotal["yarn.io/gpu"], "cluster totals: %+v", ev.Evidence)
	assert.Equal(t, 2, ev.Evidence.Nodes)
	assert.Equal(t, int64(4), ev.Evidence.LargestCap["yarn.io/gpu"])
	assert.Contains(t, ev.Message, "still waiting")

	s, err := dc.Status(ctxT(t, 10*time.Second))
	require.NoError(t, err)
	assert.Equal(t, 2, s.Counts.Running)
	assert.Equal(t, 1, s.Counts.Requested)

	req, err := dc.SetRequirements(ctxT(t, 10*time.Second), 2)
	require.NoError(t, err)
	assert.Equal(t, 2, req.Instances)
	rec.wait(t, 30*time.Second, "requirement-changed", ofType(contract.EventRequirementChanged))
	cleared := rec.wait(t, 30*time.Second, "resources-available", ofType(contract.EventResourcesAvailable))
	assert.Greater(t, cleared.ID, ev.ID)
	require.Eventually(t, func() bool {
		s, err := dc.Status(ctxT(t, 10*time.Second))
		return err == nil && s.Counts.Requested == 0 && s.Counts.Running == 2 && s.Requirement.Instances == 2
	}, 30*time.Second, 200*time.Millisecond)

	// Writes need the secret.
	s, err = dc.Status(ctxT(t, 10*time.Second))
	require.NoError(t, err)
	anon, err := driverclient.New(s.SecureAPI, "")
	require.NoError(t, err)
	require.NoError(t, anon.Trust(a.caCert))
	_, err = anon.SetRequirements(ctxT(t, 10*time.Second), 5)
	var apiErr *driverclient.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 401, apiErr.StatusCode)
}

// A worker killed with SIGKILL is classified and replaced; the driver sees both on the stream. A
// worker whose GPU discovery fails produces a discovery-failed event with the script's message.
func TestAMSigkilledWorkerIsReplacedAndDiscoveryFailureReported(t *testing.T) {
	c := miniCluster(t)
	pids := t.TempDir()
	require.NoError(t, os.Chmod(pids, 0o777))
	cmd := fmt.Sprintf(`echo $$ > %s/$CONTAINER_ID.pid; exec sleep 300`, pids)
	a := c.submit(t, fmt.Sprintf(gpuNJob, 1, 1, cmd, 3, ""), "--service", "--restart-backoff=100ms")
	rec := c.record(t, c.driver(t, a))

	first := rec.wait(t, 2*time.Minute, "launched", ofType(contract.EventLaunched))
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

	done := rec.wait(t, time.Minute, "completed", func(e contract.Event) bool {
		return e.Type == contract.EventCompleted && e.Container == first.Container
	})
	assert.Equal(t, contract.ExitFailed, done.ExitClass)
	require.NotNil(t, done.ExitStatus)
	assert.Equal(t, int32(137), *done.ExitStatus)
	assert.Contains(t, done.Message, "killed by signal 9")
	second := rec.wait(t, time.Minute, "replacement launched", func(e contract.Event) bool { return e.Type == contract.EventLaunched && e.Container != first.Container })
	assert.Greater(t, second.ID, done.ID)

	// Discovery failure: the fake nvidia-smi fails with a message the driver must see.
	b := c.submit(t, fmt.Sprintf(gpuNJob, 1, 1, `sleep 1`, 0, `FAKE_NVIDIA_SMI_FAIL = "GPU 0 fell off the bus"`))
	recB := c.record(t, c.driver(t, b))
	ev := recB.wait(t, 2*time.Minute, "discovery-failed", ofType(contract.EventDiscoveryFailed))
	assert.Contains(t, ev.Message, "GPU 0 fell off the bus")
	assert.Contains(t, ev.Message, "discovery of resource gpu failed")
	r := c.wait(t, b, time.Minute)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_FAILED, r.GetFinalApplicationStatus())
	assert.Contains(t, r.GetDiagnostics(), "GPU 0 fell off the bus")
}

// A worker that always fails on one node gets that node excluded; the rest of the job proceeds.
func TestAMExcludesAFailingNode(t *testing.T) {
	c := miniCluster(t)
	nodes := strings.Split(os.Getenv("YARN_AM_NM_NODES"), ",")
	require.Len(t, nodes, 2, "YARN_AM_NM_NODES")
	bad := strings.Split(nodes[0], ":")[0]
	cmd := fmt.Sprintf(`if [ "$NM_HOST" = %q ]; then echo "bad node" >&2; exit 5; fi; sleep 2`, bad)
	a := c.submit(t, fmt.Sprintf(gpuNJob, 1, 4, cmd, 20, ""), "--node-max-failures=2", "--restart-backoff=100ms", "--max-failure-rate=-1")
	rec := c.record(t, c.driver(t, a))
	ex := rec.wait(t, 3*time.Minute, "node-excluded", ofType(contract.EventNodeExcluded))
	assert.Equal(t, bad, strings.Split(ex.Node, ":")[0])
	assert.Contains(t, ex.Message, "2 TaskExecutor failures")
	r := c.wait(t, a, 3*time.Minute)
	require.Equal(t, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, r.GetFinalApplicationStatus(), "diagnostics: %s", r.GetDiagnostics())
	// After the exclusion no TaskExecutor was placed on the bad node.
	for _, e := range rec.all() {
		if e.Type == contract.EventAllocated && e.ID > ex.ID {
			assert.NotEqual(t, ex.Node, e.Node, "allocated on the excluded node after its exclusion: %s", e.Message)
		}
	}
}
