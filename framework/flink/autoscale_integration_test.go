//go:build integration

package flink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	flink "github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// TestFlinkAutoscaleRecommendChangesNothing: with [flink] autoscale = "recommend", the stream job
// (a map of 10 ms a record, chained to its source, at parallelism 1) runs busy all the time, above
// the band around the 70 % target: within a short metrics window (15 s here) the AM's autoscaler
// tells a scale-out to 2 as a flink-autoscale event with its inputs, status shows it as the last
// decision, and nothing changes: the job's parallelism and its upper bounds stay 1
// (docs/flink.md#autoscaling). On each tested Flink line. With YARN_AM_AUTOSCALE_FIXTURES set it
// also writes the JobManager's answers the autoscaler reads there, the unit tests' fixtures
// (framework/flink/testdata/autoscale).
func TestFlinkAutoscaleRecommendChangesNothing(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkAutoscaleRecommendChangesNothing)
}

func testFlinkAutoscaleRecommendChangesNothing(t *testing.T, v flinkVersion) {
	job := autoscaleJob(t, v, "flink-autoscale", 2, "stream", "", "autoscale = \"recommend\"\nautoscale-window = \"15s\"\n", "")
	start := time.Now()
	id := e2e.SubmitDetached(t, job)

	decision := waitAutoscaleEvent(t, id, "a scale-out recommendation", func(m string) bool {
		return strings.Contains(m, "autoscale recommended") && strings.Contains(m, "1 → 2")
	})
	t.Logf("measured: submit -> the autoscaler's scale-out recommendation: %s (load %s); event: %s", time.Since(start).Round(time.Second), loadAvgE2E(), decision.Message)
	assert.Regexp(t, `utilisation \d+% at 1, outside 50%\.\.90%`, decision.Message, "the reason")
	assert.Regexp(t, `measured over 15s: .* p=1 in=[\d.]+/s busy=(9\d|100)% true=[\d.]+/s/subtask target=[\d.]+/s`, decision.Message,
		"the inputs: rate, busy %, true and target rates")
	// The details are read every 3 s (contract.FrameworkDetailsInterval): the status may be older
	// than the event.
	assert.Eventually(t, func() bool { return strings.Contains(flinkDetail(t, id, "Autoscale last decision"), "1 → 2") },
		time.Minute, time.Second, "status shows the last decision")
	assert.Contains(t, flinkDetail(t, id, "Autoscale next decision"), "not before")

	rest := &flink.REST{URL: flinkUI(t, id)}
	ctx := context.Background()
	jobs, err := rest.Jobs(ctx)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	jobID := jobs[0].ID
	if dir := os.Getenv("YARN_AM_AUTOSCALE_FIXTURES"); dir != "" {
		writeAutoscaleFixtures(t, rest, filepath.Join(dir, flinkHomeVersion(t, v)), jobID)
	}
	detail, err := rest.JobDetail(ctx, jobID)
	require.NoError(t, err)
	assert.Equal(t, 1, detail.Parallelism(), "recommend changes no parallelism")
	bounds, err := rest.ResourceRequirements(ctx, jobID)
	require.NoError(t, err)
	for vid, b := range bounds {
		assert.Equal(t, 1, b.Upper, "vertex %s: recommend sets no bound", vid)
	}
	for _, e := range statusEvents(t, id) {
		assert.NotContains(t, e.Message, "parallelism upper bound set", "recommend sets no bound")
	}
}

// writeAutoscaleFixtures writes what the autoscaler reads of the job, as the JobManager answered:
// its plan, and per vertex the names of its subtasks' metrics and their aggregates.
func writeAutoscaleFixtures(t *testing.T, rest *flink.REST, dir, jobID string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	get := func(path, file string) []byte {
		c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(c, http.MethodGet, strings.TrimRight(rest.URL, "/")+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode, "%s: %s", path, b)
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), b, 0o644))
		return b
	}
	get("/jobs/"+jobID+"/plan", "plan.json")
	detail, err := rest.JobDetail(context.Background(), jobID)
	require.NoError(t, err)
	for i, vx := range detail.Vertices {
		get("/jobs/"+jobID+"/vertices/"+vx.ID+"/subtasks/metrics", fmt.Sprintf("vertex%d-names.json", i))
		get("/jobs/"+jobID+"/vertices/"+vx.ID+"/taskmanagers", fmt.Sprintf("vertex%d-taskmanagers.json", i))
		names, err := rest.VertexMetricNames(context.Background(), jobID, vx.ID)
		require.NoError(t, err)
		// The autoscaler's names first (the task's and its sources'), then others of the kind.
		var want, more []string
		for _, n := range names {
			switch {
			case !strings.Contains(n, ".") && (strings.HasSuffix(n, "TimeMsPerSecond") || strings.HasPrefix(n, "numRecords")),
				strings.HasPrefix(n, "Source__") && (strings.HasSuffix(n, "PerSecond") || strings.HasSuffix(n, "pendingRecords")):
				want = append(want, n)
			case strings.HasSuffix(n, "PerSecond") || strings.HasSuffix(n, "pendingRecords"):
				more = append(more, n)
			}
		}
		want = append(want, more...)
		if len(want) > 40 {
			want = want[:40]
		}
		q := url.Values{"get": {strings.Join(want, ",")}, "agg": {"sum,avg,max"}}
		get("/jobs/"+jobID+"/vertices/"+vx.ID+"/subtasks/metrics?"+q.Encode(), fmt.Sprintf("vertex%d-metrics.json", i))
	}
	get("/jobs/"+jobID, "job.json")
	get("/jobs/overview", "jobs-overview.json")
	get("/jobs/"+jobID+"/resource-requirements", "resource-requirements.json")
	t.Logf("autoscale fixtures of %s written to %s", jobID, dir)
}

// TestFlinkAutoscaleOnScalesOutThroughTheDemand: with autoscale = "on", taskmanagers = "demand" and
// the adaptive scheduler, the stream job at parallelism 1 (its map busy all the time, its sequence
// source as fast as the map takes) is scaled out by the AM's own decision: the job's upper bound is
// set to 2, the demand asks for a second TaskManager and the job runs at parallelism 2 on two
// containers; busy still, it is scaled to 3 and there held by the TaskManagers' slots
// (taskexecutor.instances = 3 × 1), which the decision names (docs/flink.md#autoscaling). On each
// tested Flink line.
func TestFlinkAutoscaleOnScalesOutThroughTheDemand(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkAutoscaleOnScalesOutThroughTheDemand)
}

func testFlinkAutoscaleOnScalesOutThroughTheDemand(t *testing.T, v flinkVersion) {
	job := autoscaleJob(t, v, "flink-autoscale-on", 3, "stream", `"jobmanager.adaptive-scheduler.scaling-interval.min" = "0 s"
"jobmanager.adaptive-scheduler.resource-stabilization-timeout" = "5 s"
"slot.idle.timeout" = "5 s"
"restart-strategy.type" = "fixed-delay"
"restart-strategy.fixed-delay.attempts" = 100
"restart-strategy.fixed-delay.delay" = "1 s"
`, "taskmanagers = \"demand\"\nautoscale = \"on\"\nautoscale-window = \"15s\"\nautoscale-stabilisation = \"10s\"\n", "")
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
	e2e.WaitFor(t, id, 3*time.Minute, "the job RUNNING at parallelism 1", func(d e2e.StatusDoc) bool {
		return e2e.IsEnded(d.Report.State) || len(at("1")) == 1
	})
	t1 := time.Now()
	t.Logf("measured: submit -> the job at parallelism 1: %s (load %s)", t1.Sub(start).Round(time.Second), loadAvgE2E())
	d := e2e.WaitFor(t, id, 4*time.Minute, "the job rescaled by the autoscaler to 2 on 2 TaskManagers", func(d e2e.StatusDoc) bool {
		return e2e.IsEnded(d.Report.State) || len(at("2")) == 2
	})
	require.Len(t, at("2"), 2, e2e.ContainerLogs(id))
	assert.GreaterOrEqual(t, d.AM.Requirement.Instances, 2, "the demand followed the upper bound")
	t.Logf("measured: the job at parallelism 1 -> rescaled by the autoscaler to 2 on 2 TaskManagers: %s (load %s)", time.Since(t1).Round(time.Second), loadAvgE2E())
	var decided []string
	for _, e := range statusEvents(t, id) {
		if e.Type == "flink-autoscale" {
			decided = append(decided, e.Message)
		}
	}
	require.NotEmpty(t, decided)
	assert.Contains(t, decided[0], "autoscale decided:")
	assert.Contains(t, decided[0], "1 → 2")

	t2 := time.Now()
	e2e.WaitFor(t, id, 4*time.Minute, "the job rescaled by the autoscaler to 3 on 3 TaskManagers", func(d e2e.StatusDoc) bool {
		return e2e.IsEnded(d.Report.State) || len(at("3")) == 3
	})
	require.Len(t, at("3"), 3, e2e.ContainerLogs(id))
	t.Logf("measured: parallelism 2 -> rescaled by the autoscaler to 3: %s (load %s)", time.Since(t2).Round(time.Second), loadAvgE2E())
	held := false
	require.Eventually(t, func() bool {
		held = strings.Contains(flinkDetail(t, id, "Autoscale last decision"), "held by the TaskManagers' 3 slots")
		return held
	}, 2*time.Minute, 2*time.Second, "busy at 3, the next decision is held by the slots and names them")
	rest := &flink.REST{URL: flinkUI(t, id)}
	jobs, err := rest.Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	bounds, err := rest.ResourceRequirements(context.Background(), jobs[0].ID)
	require.NoError(t, err)
	for vid, b := range bounds {
		assert.Equal(t, 3, b.Upper, "vertex %s: never above the slots", vid)
	}
}

// amEventsSoFar are the AM's events as status --json gives them; none while the AM is not up yet.
func amEventsSoFar(t *testing.T, id string) []contract.Event {
	t.Helper()
	j := e2e.YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, j.Code, "status:\n%s", j)
	var doc struct {
		AM *contract.Status `json:"am"`
	}
	require.NoError(t, json.Unmarshal([]byte(j.Stdout), &doc))
	if doc.AM == nil {
		return nil
	}
	return doc.AM.Events
}

// TestFlinkAutoscaleRecommendsOnTheGPUAlone: the gpubound job's "GPU stand-in" map costs nothing,
// so Flink sees it idle between records, while its TaskManagers' GPUs read 96 % busy (the fake
// nvidia-smi's FAKE_GPU_UTIL, sampled by the launchers and read by the AM): with autoscale =
// "recommend" the autoscaler recommends a scale-out of that vertex on the GPU signal alone, its busy
// time low in the same event (docs/flink.md#autoscaling). On each tested Flink line.
func TestFlinkAutoscaleRecommendsOnTheGPUAlone(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkAutoscaleRecommendsOnTheGPUAlone)
}

func testFlinkAutoscaleRecommendsOnTheGPUAlone(t *testing.T, v flinkVersion) {
	job := autoscaleJob(t, v, "flink-autoscale-gpu", 2, "gpubound", "", "autoscale = \"recommend\"\nautoscale-window = \"15s\"\n",
		"FAKE_GPU_UTIL = \"0=96,1=96,2=96,3=96\"\n")
	start := time.Now()
	id := e2e.SubmitDetached(t, job)

	decision := waitAutoscaleEvent(t, id, "a scale-out recommendation on the GPU", gpuScaleOut.MatchString)
	t.Logf("measured: submit -> the GPU scale-out recommendation: %s (load %s); event: %s", time.Since(start).Round(time.Second), loadAvgE2E(), decision.Message)
	assert.Regexp(t, `GPU stand-in[^;]* p=1 in=[\d.]+/s busy=(\d|[1-4]\d)% [^;]*gpu=96%`, decision.Message,
		"the vertex's busy time is low: the GPU alone asks for the scale-out")

	// The decision's gauges on the AM's own /metrics (framework.AM.Collectors).
	j := e2e.YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, j.Code, "status:\n%s", j)
	var doc struct {
		Report struct {
			AMURL string `json:"amUrl"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(j.Stdout), &doc))
	require.NotEmpty(t, doc.Report.AMURL)
	metrics := e2e.HTTPGet(t, strings.TrimSuffix(doc.Report.AMURL, "/")+"/metrics")
	assert.Regexp(t, `yarn_am_flink_autoscale_decided_parallelism\{vertex="GPU stand-in[^"]*",vertex_id="[0-9a-f]{32}"\} 2`, metrics)
	assert.Regexp(t, `yarn_am_flink_autoscale_parallelism\{vertex="GPU stand-in[^"]*",vertex_id="[0-9a-f]{32}"\} 1`, metrics)
}

// gpuScaleOut is the GPU stand-in's scale-out on the GPU in a decision (its vertex chains the sink).
var gpuScaleOut = regexp.MustCompile(`GPU stand-in[^;(]* 1 → 2 \(GPU 96% above 90%\)`)

// autoscaleJob is the test job in mode (its arguments, split at spaces) on the adaptive scheduler at parallelism 1, its metrics
// fetched every 2 s, with config added to [flink.config], flinkKeys (autoscale's) to [flink] and env
// to [taskexecutor.env].
func autoscaleJob(t *testing.T, v flinkVersion, name string, instances int, mode, config, flinkKeys, env string) string {
	t.Helper()
	job := flinkJobOf(t, v, name, instances, 1, strings.Fields(mode), `"jobmanager.scheduler" = "adaptive"
"parallelism.default" = 1
"metrics.fetcher.update-interval" = "2 s"
`+config+v.reactive)
	body, err := os.ReadFile(job)
	require.NoError(t, err)
	s := strings.Replace(string(body), "[flink]\n", "[flink]\n"+flinkKeys, 1)
	if env != "" {
		require.True(t, strings.HasSuffix(s, "FAKE_GPU_COUNT = \"4\"\n"), "the [taskexecutor.env] table ends the job file")
		s += env
	}
	require.NoError(t, os.WriteFile(job, []byte(s), 0o644))
	return job
}

// waitAutoscaleEvent waits up to 4 minutes for a flink-autoscale event whose message matches.
func waitAutoscaleEvent(t *testing.T, id, what string, match func(string) bool) contract.Event {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		for _, e := range amEventsSoFar(t, id) {
			if e.Type == "flink-autoscale" && match(e.Message) {
				return e
			}
		}
		require.False(t, time.Now().After(deadline), "no flink-autoscale event of %s within 4 minutes; events: %v\n%s", what, amEventsSoFar(t, id), e2e.ContainerLogs(id))
		time.Sleep(time.Second)
	}
}
