//go:build integration

package am_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// placementEvents is the status document's placement events (docs/job-file.md#placement).
func placementEvents(t *testing.T, id string) []contract.Event {
	t.Helper()
	r := e2e.YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, r.Code, "status:\n%s", r)
	var d struct {
		AM *struct {
			Events []contract.Event `json:"events"`
		} `json:"am"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &d), "status --json:\n%s", r)
	require.NotNil(t, d.AM, "status --json has no am:\n%s", r)
	var out []contract.Event
	for _, e := range d.AM.Events {
		if e.Type == contract.EventPlacement {
			out = append(out, e)
		}
	}
	return out
}

// waitPlacement polls the status document (as e2e.WaitFor does) until its placement events satisfy
// cond, and returns them.
func waitPlacement(t *testing.T, id string, timeout time.Duration, what string, cond func([]contract.Event) bool) []contract.Event {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		evs := placementEvents(t, id)
		if cond(evs) {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s not reached within %s; placement events: %+v", id, what, timeout, evs)
		}
		time.Sleep(time.Second)
	}
}

// placementJob writes a job of instances TaskExecutors that run until killed, with the placement
// table.
func placementJob(t *testing.T, name string, instances int, table string) string {
	t.Helper()
	return writeJob(t, jobSpec{name: name, instances: instances, gpus: 1, command: "./worker --sleep 1h", maxFailures: 1,
		teExtra: "[taskexecutor.placement]\n" + table})
}

// runningNodes waits until want TaskExecutors run and returns their nodes.
func runningNodes(t *testing.T, id string, want int) []string {
	t.Helper()
	d := e2e.WaitFor(t, id, 3*time.Minute, "TaskExecutors running", func(d e2e.StatusDoc) bool {
		return d.AM != nil && d.AM.Counts.Running >= want || e2e.IsEnded(d.Report.State)
	})
	require.NotNil(t, d.AM, "%+v", d.Report)
	require.Equal(t, want, d.AM.Counts.Running, "%+v", d.Report)
	var nodes []string
	for _, c := range d.AM.Containers {
		if c.State == "RUNNING" {
			nodes = append(nodes, c.Node)
		}
	}
	return nodes
}

// TestPlacementAMKeepsMaxPerNodeWithoutAHandler: on the default mini cluster (two NodeManagers, the
// RM's placement handler disabled, YARN's default) check says the ApplicationMaster keeps
// max-per-node = 1 and refuses node attributes; the 2 TaskExecutors run on two distinct nodes, and
// the AM blacklisted each node once it ran one (its placement events).
func TestPlacementAMKeepsMaxPerNodeWithoutAHandler(t *testing.T) {
	require.Equal(t, "disabled", os.Getenv("YARN_AM_PLACEMENT_HANDLER"), "the cluster's placement handler is not disabled: run this on a mini cluster without PLACEMENT")
	job := placementJob(t, "placement-own", 2, "max-per-node = 1\n")
	r := e2e.YarnAM(t, time.Minute, "check", job)
	require.Equal(t, 0, r.Code, "check:\n%s", r)
	assert.Contains(t, r.Stdout, "taskexecutor.placement: kept by the ApplicationMaster (yarn.resourcemanager.placement-constraints.handler = disabled")

	bad := placementJob(t, "placement-attrs", 1, "node-attributes = [\"gpu_model=H200\"]\n")
	for _, cmd := range []string{"check", "submit"} {
		r := e2e.YarnAM(t, time.Minute, cmd, bad)
		assert.NotEqual(t, 0, r.Code, "%s:\n%s", cmd, r)
		assert.Contains(t, r.Stderr, `taskexecutor.placement.node-attributes = ["gpu_model=H200"]: the ResourceManager's yarn.resourcemanager.placement-constraints.handler is "disabled"`, "%s:\n%s", cmd, r)
		assert.NotContains(t, r.Stdout, "submitted", "nothing is submitted")
	}

	id := e2e.SubmitDetached(t, job)
	nodes := runningNodes(t, id, 2)
	assert.NotEqual(t, nodes[0], nodes[1], "max-per-node = 1: one TaskExecutor per node")
	full := map[string]bool{}
	evs := waitPlacement(t, id, 30*time.Second, "both nodes full and blacklisted", func(evs []contract.Event) bool {
		for _, e := range evs {
			if e.Node != "" {
				full[e.Node] = true
			}
		}
		return len(full) == 2
	})
	assert.Contains(t, evs[0].Message, "kept by the ApplicationMaster")
	assert.True(t, full[nodes[0]] && full[nodes[1]], "the full nodes are the TaskExecutors' %v: %+v", nodes, evs)
}
