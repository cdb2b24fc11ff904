//go:build integration

package am_test

// The ApplicationMaster on the real mini cluster (make minicluster-up; source .minicluster/env). The
// test stages and submits the AM itself (e2e.Cluster.Submit, with yarnrpc.ApplicationClient and
// colinmarc/hdfs), following the client ↔ AM contract, so the AM is proven independently of
// `yarn-am submit`.

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

const gpuJob = `name = "am-it"
"external-resources" = "gpu"
"external-resource.gpu.amount" = 1
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
"external-resource.gpu.param.discovery-script.args" = "--enable-coordination-mode --coordination-dir /tmp/yarn-am-gpu-coordination"

[taskexecutor]
instances = %d
command = '%s'
memory = 256
max-failures = %d

[taskexecutor.env]
PATH = "$PWD:/usr/local/bin:/usr/bin:/bin"
FAKE_GPU_COUNT = "4"
`

func TestAMRunsFourGPUTaskExecutors(t *testing.T) {
	c := e2e.MiniCluster(t)
	job := fmt.Sprintf(gpuJob, 4, `echo "worker gpu=$YARN_AM_RESOURCE_GPU cuda=$CUDA_VISIBLE_DEVICES node=$NM_HOST"; sleep 4`, 1)
	a := c.Submit(t, job)
	appID := yarnrpc.FormatApplicationID(a.ID)

	var allRunning time.Duration
	var seen *contract.Status
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		s := c.AMStatus(t, a)
		if s != nil && s.Counts.Running == 4 {
			allRunning = time.Since(a.Submitted)
		}
		if s != nil {
			withInfos := 0
			for _, ct := range s.Containers {
				if len(ct.Infos["gpu"]) == 1 {
					withInfos++
				}
			}
			if withInfos == 4 {
				seen = s
			}
		}
		if allRunning > 0 && seen != nil {
			break
		}
		if r := c.Report(t, a); r.GetYarnApplicationState() >= hadooppb.YarnApplicationStateProto_FINISHED {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := c.Wait(t, a, 3*time.Minute)
	require.Equal(t, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, r.GetFinalApplicationStatus(), "diagnostics: %s", r.GetDiagnostics())
	assert.Contains(t, r.GetDiagnostics(), "all 4 TaskExecutors exited with code 0")
	require.NotZero(t, allRunning, "the AM's status never showed 4 running TaskExecutors")
	require.NotNil(t, seen, "the AM's status never showed a GPU index for all 4 containers")
	t.Logf("submit → 4 TaskExecutors running: %v", allRunning.Round(time.Millisecond))

	// Each TaskExecutor got a distinct GPU on its node; the AM's status shows the same indexes.
	statusIdx := map[string]string{}
	for _, ct := range seen.Containers {
		statusIdx[ct.ID] = ct.Infos["gpu"][0]["index"]
	}
	logs := c.WorkerLogs(appID)
	re := regexp.MustCompile(`worker gpu=(\d+) cuda=(\d+) node=(\S+)`)
	perNode := map[string][]string{}
	matched := 0
	for cid, out := range logs {
		m := re.FindStringSubmatch(out)
		if m == nil {
			continue
		}
		matched++
		assert.Equal(t, m[1], m[2], "CUDA_VISIBLE_DEVICES matches the reported index in %s", cid)
		assert.Equal(t, statusIdx[cid], m[1], "the AM's status shows the index the worker got (%s)", cid)
		perNode[m[3]] = append(perNode[m[3]], m[1])
	}
	assert.Equal(t, 4, matched, "4 worker logs; got %v", logs)
	for node, idx := range perNode {
		sort.Strings(idx)
		for i := 1; i < len(idx); i++ {
			assert.NotEqual(t, idx[i-1], idx[i], "two workers on %s share GPU %s", node, idx[i])
		}
	}
	assert.Eventually(t, func() bool { return c.StagingGone(t, a) }, 10*time.Second, 200*time.Millisecond, "staging directory deleted")
	var rss []string
	require.Eventually(t, func() bool {
		rss = regexp.MustCompile(`am peak RSS: ([0-9.]+ MiB)`).FindStringSubmatch(c.AMLog(appID))
		return rss != nil
	}, 20*time.Second, 200*time.Millisecond, "the AM logs its peak RSS at exit")
	t.Logf("AM peak RSS: %s", rss[1])
}

func TestAMFailsAfterRetryLimit(t *testing.T) {
	c := e2e.MiniCluster(t)
	a := c.Submit(t, fmt.Sprintf(gpuJob, 1, `echo failing; exit 3`, 2))
	r := c.Wait(t, a, 3*time.Minute)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_FAILED, r.GetFinalApplicationStatus())
	assert.Contains(t, r.GetDiagnostics(), "exit code 3")
	assert.Contains(t, r.GetDiagnostics(), "3 TaskExecutors failed, more than taskexecutor.max-failures = 2")
	assert.Eventually(t, func() bool { return c.StagingGone(t, a) }, 10*time.Second, 200*time.Millisecond)
}

func TestAMDriverMode(t *testing.T) {
	c := e2e.MiniCluster(t)
	for _, tc := range []struct {
		code int
		want hadooppb.FinalApplicationStatusProto
	}{{0, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED}, {1, hadooppb.FinalApplicationStatusProto_APP_FAILED}} {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			// The driver reads the AM's API with its address from the environment, then exits.
			driver := fmt.Sprintf(`curl -sf --cacert "$YARN_AM_CA_CERT" "${YARN_AM_API}status" | grep -q '"state"' && test -n "$YARN_AM_SECRET" && exit %d; exit 7`, tc.code)
			a := c.Submit(t, fmt.Sprintf(gpuJob, 1, `sleep 60`, 1), "--driver", driver)
			r := c.Wait(t, a, 3*time.Minute)
			assert.Equal(t, tc.want, r.GetFinalApplicationStatus(), "diagnostics: %s", r.GetDiagnostics())
			if tc.code != 0 {
				assert.Contains(t, r.GetDiagnostics(), "exited with code 1")
			}
		})
	}
}

// TestAMKilledDeletesStaging: on its last attempt, an AM stopped by SIGTERM deletes the staging
// directory. (With attempts left it keeps it for the next attempt: TestAMRestartKeepsItsTaskExecutors;
// yarn-am kill then removes it: TestE2EKillRunningJobRemovesStaging.)
func TestAMKilledDeletesStaging(t *testing.T) {
	c := e2e.MiniCluster(t)
	a := c.Submit(t, "max-attempts = 1\n"+fmt.Sprintf(gpuJob, 1, `sleep 300`, 1))
	require.Eventually(t, func() bool { s := c.AMStatus(t, a); return s != nil && s.Counts.Running == 1 }, 2*time.Minute, 200*time.Millisecond)
	_, err := c.RM.KillApplication(e2e.Context(t, 30*time.Second), a.ID, "killed by the test")
	require.NoError(t, err)
	r := c.Wait(t, a, 2*time.Minute)
	assert.Equal(t, hadooppb.YarnApplicationStateProto_KILLED, r.GetYarnApplicationState())
	assert.Eventually(t, func() bool { return c.StagingGone(t, a) }, 20*time.Second, 200*time.Millisecond, "the AM deletes staging on SIGTERM")
}

var _ = io.Discard
