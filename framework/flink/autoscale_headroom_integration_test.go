//go:build integration

package flink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	flink "github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// TestFlinkAutoscaleIsHeldByTheQueuesHeadroom: with autoscale = "on" and TaskManagers of 3 GPUs
// each, on the mini cluster's 2 × 4 GPUs, the stream job (its map busy all the time) is scaled
// 1 → 2 while the queue's headroom (5 GPUs free) holds another TaskManager; busy still at 2, the
// next decision wants 3 but the headroom has 2 GPUs: the vertex stays at 2, the decision names the
// queue's headroom with its free GPUs and the room it leaves, and the bounds stay 2 although
// taskexecutor.instances = 4 would give it 4 slots; the status' series (the page's table) show the
// vertex's parallelism over time (docs/flink.md#autoscaling). On each tested
// Flink line, one after the other: each counts the cluster's free GPUs.
func TestFlinkAutoscaleIsHeldByTheQueuesHeadroom(t *testing.T) {
	e2e.Env(t)
	eachFlink(t, testFlinkAutoscaleIsHeldByTheQueuesHeadroom)
}

func testFlinkAutoscaleIsHeldByTheQueuesHeadroom(t *testing.T, v flinkVersion) {
	job := flinkJobOf(t, v, "flink-autoscale-headroom", 4, 3, []string{"stream"}, `"jobmanager.scheduler" = "adaptive"
"parallelism.default" = 1
"metrics.fetcher.update-interval" = "2 s"
"jobmanager.adaptive-scheduler.scaling-interval.min" = "0 s"
"jobmanager.adaptive-scheduler.resource-stabilization-timeout" = "5 s"
"slot.idle.timeout" = "5 s"
"restart-strategy.type" = "fixed-delay"
"restart-strategy.fixed-delay.attempts" = 100
"restart-strategy.fixed-delay.delay" = "1 s"
`+v.reactive)
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	s := strings.Replace(string(body), "[flink]\n", "[flink]\ntaskmanagers = \"demand\"\nautoscale = \"on\"\nautoscale-window = \"15s\"\nautoscale-stabilisation = \"10s\"\n", 1)
	// Two TaskManagers of 3 GPUs on one host (the mini cluster's nodes share it): the fake
	// nvidia-smi shows them 8 to pick from.
	s = strings.Replace(s, "FAKE_GPU_COUNT = \"4\"\n", "FAKE_GPU_COUNT = \"8\"\n", 1)
	require.NoError(t, os.WriteFile(job, []byte(s), 0o644))
	start := time.Now()
	id := e2e.SubmitDetached(t, job)

	at := func(p string) map[string]bool {
		out := map[string]bool{}
		for _, l := range tmLines(id, flinkParallism) {
			if l[2] == p {
				out[l[3]] = true
			}
		}
		return out
	}
	e2e.WaitFor(t, id, 4*time.Minute, "the job rescaled by the autoscaler to 2 on 2 TaskManagers", func(d e2e.StatusDoc) bool {
		return e2e.IsEnded(d.Report.State) || len(at("2")) == 2
	})
	require.Len(t, at("2"), 2, e2e.ContainerLogs(id))
	t.Logf("measured: submit -> rescaled by the autoscaler to 2 on 2 TaskManagers of 3 GPUs: %s (load %s)", time.Since(start).Round(time.Second), loadAvgE2E())

	t2 := time.Now()
	held := waitAutoscaleEvent(t, id, "a decision held by the queue's headroom", func(m string) bool {
		return strings.Contains(m, "held by the queue's headroom")
	})
	t.Logf("measured: parallelism 2 -> the decision held by the headroom: %s (load %s); event: %s", time.Since(t2).Round(time.Second), loadAvgE2E(), held.Message)
	assert.Contains(t, held.Message, "autoscale decided:")
	assert.Regexp(t, `stays at 2 \(utilisation \d+% at 2, outside 50%\.\.90%[^)]*\), held by the queue's headroom \(\d+ MiB, \d+ vcores, 2 yarn\.io/gpu free: room for 0 more TaskManagers of 1 slot\)`,
		held.Message, "the vertex held at 2, the headroom's free GPUs and the room named")
	// The details are read every 3 s (contract.FrameworkDetailsInterval): the status may be older
	// than the event.
	assert.Eventually(t, func() bool {
		return strings.Contains(flinkDetail(t, id, "Autoscale last decision"), "held by the queue's headroom")
	},
		time.Minute, time.Second, "status shows the held decision")
	rest := &flink.REST{URL: flinkUI(t, id)}
	jobs, err := rest.Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	bounds, err := rest.ResourceRequirements(context.Background(), jobs[0].ID)
	require.NoError(t, err)
	for vid, b := range bounds {
		assert.Equal(t, 2, b.Upper, "vertex %s: never above what the queue holds", vid)
	}
	assert.Empty(t, at("3"), "no subtask ever ran at parallelism 3")

	// The page's parallelism over time (framework.series in the status): it ran at 1, 2 was
	// decided, and it ran at 2; no 3.
	var got []string
	assert.Eventually(t, func() bool {
		got = parallelismSeries(t, id)
		return strings.Join(got, ", ") == "1 running, 2 decided, 2 running"
	}, time.Minute, time.Second, "the vertex's parallelism over time in the status")
	t.Logf("the vertex's parallelism over time: %v", got)
	d := e2e.Status(t, id)
	assert.Equal(t, 2, d.AM.Requirement.Instances, "the demand asked for no third TaskManager")
}

// parallelismSeries are the points of the job's one "Parallelism of …" series in the status, as
// "<value> <note>", oldest first.
func parallelismSeries(t *testing.T, id string) []string {
	t.Helper()
	j := e2e.YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, j.Code, "status:\n%s", j)
	var doc struct {
		AM *contract.Status `json:"am"`
	}
	require.NoError(t, json.Unmarshal([]byte(j.Stdout), &doc))
	if doc.AM == nil || doc.AM.Framework == nil {
		return nil
	}
	var out []string
	for _, s := range doc.AM.Framework.Series {
		if strings.HasPrefix(s.Name, "Parallelism of ") {
			for _, p := range s.Points {
				out = append(out, fmt.Sprintf("%d %s", p.Value, p.Note))
			}
		}
	}
	return out
}
