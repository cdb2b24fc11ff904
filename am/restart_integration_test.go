//go:build integration

package am_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Faults of the AM on the real mini cluster (docs/design.md#faults): YARN starts a second attempt, which
// must take over the running TaskExecutors (none killed, none launched twice) and finish the job.

// launchShell returns the container's launch shell: the ancestor of pid that the NodeManager (a java
// process in the mini cluster) started.
func launchShell(t *testing.T, pid int) int {
	t.Helper()
	parent := func(p int) int {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		require.NoError(t, err)
		f := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+1:])
		pp, _ := strconv.Atoi(f[1])
		return pp
	}
	for p := pid; p > 1; p = parent(p) {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", parent(p)))
		if strings.Contains(strings.SplitN(string(cmd), "\x00", 2)[0], "java") {
			return p
		}
	}
	t.Fatalf("no process started by the NodeManager above pid %d", pid)
	return 0
}

// nmStartRe is the NodeManager's own record of a container start request (ContainerManagerImpl); a
// container's id carries an epoch (container_e01_...) once the RM restarted or failed over.
var nmStartRe = regexp.MustCompile(`Start request for (container_(?:e\d+_)?(\d+_\d+)_\d+_\d+) `)

// taskExecutorContainers lists the TaskExecutor containers the NodeManagers were asked to start for the
// application, from their own log (the harness's, all NodeManagers in one JVM: a stopped node's
// container directories may be gone); AM containers, which end in _000001, are left out.
func taskExecutorContainers(t *testing.T, id string) []string {
	t.Helper()
	state := os.Getenv("YARN_AM_MINICLUSTER_STATE")
	require.NotEmpty(t, state, "YARN_AM_MINICLUSTER_STATE is not set: source the mini cluster's env")
	data, err := os.ReadFile(filepath.Join(state, "logs", "minicluster.log"))
	require.NoError(t, err)
	seen := map[string]bool{}
	var out []string
	app := strings.TrimPrefix(id, "application_")
	for _, m := range nmStartRe.FindAllStringSubmatch(string(data), -1) {
		if c := m[1]; m[2] == app && !strings.HasSuffix(c, "_000001") && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

func TestAMRestartKeepsItsTaskExecutors(t *testing.T) {
	e2e.Env(t)
	for _, tc := range []struct {
		name string
		kill func(t *testing.T, id string, amPid int)
	}{
		{"SIGKILL of the AM process", func(t *testing.T, id string, amPid int) {
			require.NoError(t, syscall.Kill(amPid, syscall.SIGKILL))
		}},
		// The NodeManager then stops the AM with SIGTERM, as it does when it kills an AM container for
		// memory, preemption or a node shutting down: the AM must not delete the staging directory the
		// next attempt localises from.
		{"SIGTERM from the NodeManager", func(t *testing.T, id string, amPid int) {
			require.NoError(t, syscall.Kill(launchShell(t, amPid), syscall.SIGKILL))
			require.Eventually(t, func() bool {
				for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
					logs, _ := filepath.Glob(filepath.Join(d, id, "container_*_01_000001", "am.stderr"))
					for _, l := range logs {
						data, _ := os.ReadFile(l)
						if strings.Contains(string(data), "stopped by SIGTERM with attempts left") {
							return true
						}
					}
				}
				return false
			}, 30*time.Second, 200*time.Millisecond, "the NodeManager stops attempt 1 with SIGTERM and it keeps the staging directory")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 2 TaskExecutors x 1 GPU with a second AM attempt; each worker sleeps long enough to
			// outlive the AM's restart.
			id := e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "restart", instances: 2, gpus: 1, command: "./worker --sleep 45s", maxAttempts: 2}))
			before := e2e.WaitFor(t, id, 2*time.Minute, "2 TaskExecutors running with their GPUs", func(d e2e.StatusDoc) bool {
				if d.AM == nil || d.AM.Counts.Running != 2 {
					return false
				}
				for _, c := range d.AM.Containers {
					if len(c.Infos["gpu"]) != 1 {
						return false
					}
				}
				return true
			})
			appID, err := yarnrpc.ParseApplicationID(id)
			require.NoError(t, err)
			amCID := strings.Replace(id, "application_", "container_", 1) + "_01_000001"
			pids := e2e.ProcsOfContainer(amCID, "yarn-am", "am")
			require.Len(t, pids, 1, "the AM process of %s", amCID)

			// The AM saves its state at most once a second: a SIGKILL right after the launchers' reports
			// would lose them (the resource infos a later attempt shows).
			time.Sleep(2 * time.Second)
			fault := time.Now()
			tc.kill(t, id, pids[0])

			rm, err := e2e.RMClient()
			require.NoError(t, err)
			defer rm.Close()
			var after *contract.Status
			require.Eventually(t, func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				r, err := rm.GetApplicationReport(ctx, appID)
				if err != nil || r.GetCurrentApplicationAttemptId().GetAttemptId() != 2 || r.GetYarnApplicationState() != hadooppb.YarnApplicationStateProto_RUNNING {
					return false
				}
				base := client.AMURL(r)
				if base == "" {
					return false
				}
				st, _, err := client.FetchAMStatus(ctx, base)
				if err != nil || st.Counts.Running != 2 {
					return false
				}
				after = st
				return true
			}, 2*time.Minute, 500*time.Millisecond, "attempt 2 runs the 2 TaskExecutors")
			whole := time.Since(fault)

			// The same containers with the same GPUs: adopted, not started again.
			type ct struct{ id, node, gpus string }
			var was, is []ct
			for _, c := range before.AM.Containers {
				was = append(was, ct{c.ID, c.Node, c.Infos["gpu"][0]["index"]})
			}
			for _, c := range after.Containers {
				require.Len(t, c.Infos["gpu"], 1, "attempt 2 knows the GPUs of %s", c.ID)
				is = append(is, ct{c.ID, c.Node, c.Infos["gpu"][0]["index"]})
			}
			assert.ElementsMatch(t, was, is)
			var restarted bool
			for _, e := range after.Events {
				restarted = restarted || e.Type == contract.EventAMRestarted
			}
			assert.True(t, restarted, "attempt 2 says it took over: %+v", after.Events)

			d := e2e.WaitFor(t, id, 3*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
			assert.Equal(t, "SUCCEEDED", d.Report.FinalStatus, d.Report.Diagnostics)

			// Exact accounting from the NodeManagers' own records: each worker ran once.
			tes := taskExecutorContainers(t, id)
			assert.Len(t, tes, 2, "TaskExecutor containers the NodeManagers ran: %v", tes)
			lines := workerLines(t, id)
			assert.Len(t, lines, 2, "each worker started exactly once")
			// The kept launchers found attempt 2 through the staging directory and spoke to it
			// (docs/running.md#kept-taskexecutors-find-the-new-attempt); a lost one would have been
			// replaced, a third TaskExecutor container above.
			for _, l := range lines {
				data, err := os.ReadFile(filepath.Join(l.logDir, id, l.container, "stderr"))
				require.NoError(t, err)
				assert.Contains(t, string(data), "the AM moved (a new application attempt)", "%s follows attempt 2", l.container)
			}

			t.Logf("%s: %d TaskExecutor containers, 0 duplicates, whole again %s after the fault", tc.name, len(tes), whole.Round(100*time.Millisecond))
		})
	}
}
