//go:build integration

package flink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	flink "github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// The rate step's numbers: the rated job's Cost map sleeps 4 ms a record (250 records a second a
// subtask); 175 a second keeps it 70 % busy at parallelism 1, the middle of the default band
// (50 %..90 %); three times that needs 3 subtasks at 70 %, which the job's 3 TaskManagers of one
// slot hold. The backlog's bound is 2 s of the stepped rate.
const (
	stepLow     = 175
	stepHigh    = 3 * stepLow
	stepBacklog = 2 * stepHigh
)

// TestFlinkAutoscaleFollowsARateStep: the rated job (a source at a rate the test rewrites on HDFS,
// rebalanced to a Cost map of 4 ms a record) with autoscale = "on", taskmanagers = "demand" and the
// documented pacing defaults (window 1m, stabilisation 30s, utilisation 0.7 ± 0.2, max-step 4,
// catch-up 2m) except the scale-down grace, shortened from 5m to 1m to keep the test short:
// (a) at a steady 175 records a second the Cost map is about 70 % busy at parallelism 1, and over
// 10 minutes no decision changes a parallelism and nothing rescales (no flapping), while the
// autoscaler decides (status shows its last decision, without a change); (b) at 3 × the rate the map falls behind, the source's
// pendingRecords grows, the autoscaler decides a scale-out with its inputs (busy, lag), the job
// runs at more than 1 and the backlog (read on Flink's REST) returns under 2 s of the new rate;
// (c) back at 175 the map is scaled in to 1 no sooner than the grace and the freed TaskManagers are
// released as info events (docs/flink.md#autoscaling). On each tested Flink line at once. With
// YARN_AM_AUTOSCALE_TRACE set to a directory it writes there each line's timeline and its per-vertex
// samples (rates, busy, backlog every ~5 s), which make bench BENCH=autoscale replays; that bench
// sets YARN_AM_AUTOSCALE_GRACE=default (the key left out: the documented 5m) and
// YARN_AM_AUTOSCALE_STEADY (the steady phase's length, 10m here).
func TestFlinkAutoscaleFollowsARateStep(t *testing.T) {
	e2e.Env(t)
	grace, steady := "1m", 10*time.Minute
	if g := os.Getenv("YARN_AM_AUTOSCALE_GRACE"); g != "" {
		grace = g
	}
	if s := os.Getenv("YARN_AM_AUTOSCALE_STEADY"); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, "YARN_AM_AUTOSCALE_STEADY")
		require.GreaterOrEqual(t, d, 90*time.Second, "YARN_AM_AUTOSCALE_STEADY: at least the window (1m) and a margin")
		steady = d
	}
	eachFlinkAtOnce(t, func(t *testing.T, v flinkVersion) { testFlinkAutoscaleFollowsARateStep(t, v, grace, steady) })
}

// stepSample is one read of the job's vertices on Flink's REST.
type stepSample struct {
	At       float64      `json:"at"` // seconds since the rate was first written
	Vertices []stepVertex `json:"vertices"`
	Rate     float64      `json:"rate"` // the source's target rate then
	Events   []string     `json:"events,omitempty"`
}

// MarshalJSON writes a value not measured (NaN, which encoding/json refuses) as null.
func (v stepVertex) MarshalJSON() ([]byte, error) {
	f := func(x float64) *float64 {
		if math.IsNaN(x) {
			return nil
		}
		return &x
	}
	return json.Marshal(struct {
		Name        string   `json:"name"`
		Parallelism int      `json:"parallelism"`
		Busy        *float64 `json:"busy"`
		In          *float64 `json:"in"`
		Out         *float64 `json:"out"`
		Pending     *float64 `json:"pending"`
	}{v.Name, v.Parallelism, f(v.Busy), f(v.In), f(v.Out), f(v.Pending)})
}

type stepVertex struct {
	Name        string  `json:"name"`
	Parallelism int     `json:"parallelism"`
	Busy        float64 `json:"busy"` // ms a second, the subtasks' average
	In          float64 `json:"in"`   // records a second, summed
	Out         float64 `json:"out"`
	Pending     float64 `json:"pending"` // the source's pendingRecords; NaN: not a source
}

// stepTimeline is what the test measured, seconds after each step.
type stepTimeline struct {
	Line            string       `json:"line"`
	Grace           string       `json:"grace"`
	StepAt          float64      `json:"stepAt"`
	DecidedAt       float64      `json:"decidedAt"`
	AppliedAt       float64      `json:"appliedAt"`
	BacklogUnderAt  float64      `json:"backlogUnderAt"`
	PeakBacklog     float64      `json:"peakBacklog"`
	DownAt          float64      `json:"downAt"`
	ScaledInAt      float64      `json:"scaledInAt"`
	ReleasedAt      float64      `json:"releasedAt"`
	Rescales        int          `json:"rescales"`
	Decisions       []string     `json:"decisions"`
	Samples         []stepSample `json:"samples"`
	BacklogBound    float64      `json:"backlogBound"`
	LowRate         float64      `json:"lowRate"`
	HighRate        float64      `json:"highRate"`
	CostMicros      int          `json:"costMicros"`
	TaskManagerMax  int          `json:"taskManagerMax"`
	SteadySeconds   float64      `json:"steadySeconds"`
	RecordsPerTaskS float64      `json:"recordsPerSubtaskSecond"`
}

// testFlinkAutoscaleFollowsARateStep: grace is the autoscale-scale-down-grace set, "default" for
// none (the documented 5m); steady the steady phase's length.
func testFlinkAutoscaleFollowsARateStep(t *testing.T, v flinkVersion, grace string, steady time.Duration) {
	graceKey := fmt.Sprintf("autoscale-scale-down-grace = %q\n", grace)
	if grace == "default" {
		grace, graceKey = "5m", ""
	}
	fsys := testUserHDFS(t)
	dir := fmt.Sprintf("/tmp/yarn-am-flink-rated-%d", time.Now().UnixNano())
	require.NoError(t, fsys.MkdirAll(dir, 0o755))
	t.Cleanup(func() { _ = fsys.RemoveAll(dir) })
	rateFile := path.Join(dir, "rate")
	var rates []string
	setRate := func(r int) time.Time {
		now := time.Now()
		rates = append(rates, fmt.Sprintf("%d %d", now.UnixMilli(), r))
		writeHDFSFile(t, fsys, rateFile, strings.Join(rates, "\n")+"\n")
		return now
	}

	job := autoscaleJob(t, v, "flink-autoscale-step", 3, "rated "+fsys.DefaultFS+rateFile+" 4000", `"jobmanager.adaptive-scheduler.scaling-interval.min" = "0 s"
"jobmanager.adaptive-scheduler.resource-stabilization-timeout" = "5 s"
"slot.idle.timeout" = "5 s"
"restart-strategy.type" = "fixed-delay"
"restart-strategy.fixed-delay.attempts" = 100
"restart-strategy.fixed-delay.delay" = "1 s"
`, "taskmanagers = \"demand\"\nautoscale = \"on\"\n"+graceKey, "")
	start := time.Now()
	id := e2e.SubmitDetached(t, job)
	e2e.WaitFor(t, id, 4*time.Minute, "the rated job RUNNING at parallelism 1", func(d e2e.StatusDoc) bool {
		return e2e.IsEnded(d.Report.State) || len(tmLines(id, flinkParallism)) > 0
	})
	require.NotEmpty(t, tmLines(id, flinkParallism), e2e.ContainerLogs(id))
	rest := &flink.REST{URL: flinkUI(t, id)}
	jobs, err := rest.Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	jobID := jobs[0].ID
	t.Logf("measured: submit -> the rated job at parallelism 1: %s (load %s)", time.Since(start).Round(time.Second), loadAvgE2E())

	tl := stepTimeline{Line: flinkHomeVersion(t, v), Grace: grace, BacklogBound: stepBacklog, LowRate: stepLow, HighRate: stepHigh,
		CostMicros: 4000, TaskManagerMax: 3, RecordsPerTaskS: 250}
	t0 := setRate(stepLow)
	rate := float64(stepLow)
	since := func(at time.Time) float64 { return math.Round(at.Sub(t0).Seconds()*10) / 10 }
	seen := map[string]bool{}
	// sample reads the vertices on REST, the decisions told so far; a vertex not read is left out.
	sample := func() stepSample {
		s := stepSample{At: since(time.Now()), Rate: rate}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if detail, err := rest.JobDetail(ctx, jobID); err == nil {
			for _, vx := range detail.Vertices {
				sv := stepVertex{Name: vx.Name, Parallelism: vx.Parallelism, Busy: math.NaN(), In: math.NaN(), Out: math.NaN(), Pending: math.NaN()}
				names := []string{"busyTimeMsPerSecond", "numRecordsInPerSecond", "numRecordsOutPerSecond"}
				pending := ""
				if strings.HasPrefix(vx.Name, "Source: rated") {
					pending = "Source__rated.pendingRecords"
					names = append(names, pending)
				}
				if m, err := rest.VertexMetrics(ctx, jobID, vx.ID, names); err == nil {
					sv.Busy, sv.In, sv.Out = float64(m[names[0]].Avg), float64(m[names[1]].Sum), float64(m[names[2]].Sum)
					if a, ok := m[pending]; ok && pending != "" {
						sv.Pending = float64(a.Sum)
					}
				}
				s.Vertices = append(s.Vertices, sv)
			}
		}
		for _, e := range amEventsSoFar(t, id) {
			if e.Type == "flink-autoscale" && !seen[e.Message] {
				seen[e.Message] = true
				s.Events = append(s.Events, e.Message)
				tl.Decisions = append(tl.Decisions, fmt.Sprintf("%.0f s: %s", s.At, e.Message))
			}
		}
		tl.Samples = append(tl.Samples, s)
		return s
	}
	costAt := func(s stepSample) int {
		for _, vx := range s.Vertices {
			if strings.HasPrefix(vx.Name, "Cost") {
				return vx.Parallelism
			}
		}
		return 0
	}
	backlog := func(s stepSample) float64 {
		for _, vx := range s.Vertices {
			if !math.IsNaN(vx.Pending) {
				return vx.Pending
			}
		}
		return math.NaN()
	}
	// decided are the decisions told that change a parallelism.
	decided := func() []string {
		var out []string
		for _, m := range tl.Decisions {
			if strings.Contains(m, "autoscale decided:") && strings.Contains(m, "→") {
				out = append(out, m)
			}
		}
		return out
	}
	defer func() {
		if dir := os.Getenv("YARN_AM_AUTOSCALE_TRACE"); dir != "" {
			b, err := json.MarshalIndent(tl, "", " ")
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, "rate-step-"+tl.Line+".json"), b, 0o644)
			}
			t.Logf("trace written to %s: %v", dir, err)
		}
	}()

	// (a) Steady: ten minutes at 175 a second, nothing decided, the Cost map at 1 throughout.
	var lagRead, busyRead bool
	for time.Since(t0) < steady {
		s := sample()
		require.Equal(t, 1, costAt(s), "steady rate: the Cost map stays at 1; decisions: %v", tl.Decisions)
		require.Empty(t, decided(), "steady rate: no decision to rescale")
		for _, vx := range s.Vertices {
			lagRead = lagRead || !math.IsNaN(vx.Pending)
			busyRead = busyRead || (strings.HasPrefix(vx.Name, "Cost") && vx.Busy > 300)
		}
		time.Sleep(5 * time.Second)
	}
	tl.SteadySeconds = since(time.Now())
	require.True(t, lagRead, "the source's pendingRecords read on REST")
	require.True(t, busyRead, "the Cost map busy at the steady rate (over 30 %%): %v", tl.Samples[len(tl.Samples)-1])
	last := flinkDetail(t, id, "Autoscale last decision")
	assert.NotContains(t, last, "none yet", "the autoscaler decided at the steady rate")
	assert.NotContains(t, last, "→", "the autoscaler decided at the steady rate: nothing to change")
	t.Logf("measured: steady %s at %d/s: no decision, the Cost map at 1; last decision: %s (load %s)", steady, stepLow, last, loadAvgE2E())

	// (b) The step: three times the rate.
	tStep := setRate(stepHigh)
	rate = stepHigh
	tl.StepAt = since(tStep)
	var decidedAt, appliedAt, underAt, underSince time.Time
	peak := 0.0
	deadline := tStep.Add(15 * time.Minute)
	for underAt.IsZero() {
		require.False(t, time.Now().After(deadline), "within 15 minutes of the step: decided %v, applied %v, backlog peak %.0f; decisions %v\n%s",
			!decidedAt.IsZero(), !appliedAt.IsZero(), peak, tl.Decisions, e2e.ContainerLogs(id))
		s := sample()
		if decidedAt.IsZero() && len(decided()) > 0 {
			decidedAt = time.Now()
			d := decided()[0]
			assert.Regexp(t, `Cost[^;(]* 1 → [2-9]`, d, "a scale-out of the Cost map")
			assert.Regexp(t, `lag=\d+`, d, "the source's backlog among the inputs")
			// The window's averages: a decision soon after the step averages the steady minute in.
			assert.Regexp(t, `Cost[^;]* p=1 in=[\d.]+/s busy=\d+% true=[\d.]+/s/subtask target=[\d.]+/s`, d, "the Cost map's rate, busy time and target among the inputs")
			t.Logf("measured: step -> decided: %s: %s", decidedAt.Sub(tStep).Round(time.Second), d)
		}
		if appliedAt.IsZero() && costAt(s) > 1 {
			appliedAt = time.Now()
			t.Logf("measured: step -> the job at Cost parallelism %d (REST): %s", costAt(s), appliedAt.Sub(tStep).Round(time.Second))
		}
		if b := backlog(s); !math.IsNaN(b) {
			peak = max(peak, b)
			// Under the bound on every read for 15 s, so at least one of the JobManager's metric
			// fetches (10 s apart) between: a source subtask a rescale has just restarted reads
			// no backlog until it has its rates and its position.
			switch {
			case appliedAt.IsZero() || peak <= stepBacklog || b >= stepBacklog:
				underSince = time.Time{}
			case underSince.IsZero():
				underSince = time.Now()
			case time.Since(underSince) >= 15*time.Second:
				underAt = underSince
			}
			if !underAt.IsZero() {
				break
			}
		}
		time.Sleep(5 * time.Second)
	}
	tl.DecidedAt, tl.AppliedAt, tl.BacklogUnderAt, tl.PeakBacklog = since(decidedAt), since(appliedAt), since(underAt), peak
	t.Logf("measured: step -> backlog under %d records: %s (peak %.0f, load %s)", stepBacklog, underAt.Sub(tStep).Round(time.Second), peak, loadAvgE2E())
	require.False(t, decidedAt.IsZero(), "a decision before the job rescaled")

	// (c) Back down: scaled in after the grace, the freed TaskManagers released.
	tDown := setRate(stepLow)
	rate = stepLow
	tl.DownAt = since(tDown)
	grace_, err := time.ParseDuration(grace)
	require.NoError(t, err)
	var inAt time.Time
	deadline = tDown.Add(grace_ + 8*time.Minute)
	for inAt.IsZero() {
		require.False(t, time.Now().After(deadline), "no scale-in to 1 within the grace and 8 minutes; decisions %v\n%s", tl.Decisions, e2e.ContainerLogs(id))
		if costAt(sample()) == 1 {
			inAt = time.Now()
			break
		}
		time.Sleep(5 * time.Second)
	}
	tl.ScaledInAt = since(inAt)
	t.Logf("measured: rate down -> the job at Cost parallelism 1: %s (grace %s)", inAt.Sub(tDown).Round(time.Second), grace)
	assert.GreaterOrEqual(t, inAt.Sub(tDown), grace_, "no scale-in before the grace")
	d := decided()
	require.NotEmpty(t, d)
	assert.Regexp(t, `Cost[^;(]* [2-9] → 1`, d[len(d)-1], "the last decision scales the Cost map in")
	var released time.Time
	require.Eventually(t, func() bool {
		for _, e := range amEventsSoFar(t, id) {
			if e.Severity == "info" && strings.Contains(e.Message, "released: no longer needed") {
				released = time.Now()
				return true
			}
		}
		return false
	}, 4*time.Minute, 2*time.Second, "the freed TaskManagers released as info events")
	tl.ReleasedAt = since(released)
	for _, m := range d {
		if strings.Contains(m, "→") {
			tl.Rescales++
		}
	}
	t.Logf("measured: rate down -> a freed TaskManager released: %s; decisions: %v (load %s)", released.Sub(tDown).Round(time.Second), d, loadAvgE2E())
}

// writeHDFSFile replaces the file at p on HDFS with body: written beside it, then renamed over it,
// so a reader sees the old body or the new one.
func writeHDFSFile(t *testing.T, fsys *client.HDFS, p, body string) {
	t.Helper()
	tmp := fmt.Sprintf("%s.%d", p, time.Now().UnixNano())
	w, err := fsys.Create(tmp, 0o644)
	require.NoError(t, err)
	_, err = w.Write([]byte(body))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, fsys.Rename(tmp, p))
}
