package flink

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// autoscaleVersions are the Flink lines whose JobManagers' answers are the fixtures
// (testdata/autoscale/<version>/, written by the real-Flink TestFlinkAutoscaleRecommendChangesNothing
// with YARN_AM_AUTOSCALE_FIXTURES): the stream job, its map busy all the time, at parallelism 1.
var autoscaleVersions = []string{"1.20.5", "2.3.0"}

// autoscaleJobManager answers as a real JobManager did: the fixtures of one version, the subtasks'
// metrics cut to the names asked for, as Flink does; a PUT of the resource requirements is kept.
type autoscaleJobManager struct {
	mu   sync.Mutex
	dir  string
	put  []map[string]flinkdist.Bounds
	asks []string // the metric queries
	// taskOnly lists the task's metrics only, as a JobManager does before the operators' register.
	taskOnly bool
}

func newAutoscaleJobManager(t *testing.T, version string) (*autoscaleJobManager, *flinkdist.REST) {
	t.Helper()
	f := &autoscaleJobManager{dir: filepath.Join("testdata", "autoscale", version)}
	_, err := os.Stat(f.dir)
	require.NoError(t, err)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, &flinkdist.REST{URL: srv.URL}
}

func (f *autoscaleJobManager) file(name string) []byte {
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		panic(err)
	}
	return b
}

// vertexIndex is the fixture index of a vertex id in job.json.
func (f *autoscaleJobManager) vertexIndex(id string) int {
	var job flinkdist.JobDetail
	if err := json.Unmarshal(f.file("job.json"), &job); err != nil {
		panic(err)
	}
	for i, v := range job.Vertices {
		if v.ID == id {
			return i
		}
	}
	return -1
}

func (f *autoscaleJobManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := r.URL.Path
	switch {
	case p == "/jobs/overview":
		w.Write(f.file("jobs-overview.json"))
	case strings.HasSuffix(p, "/resource-requirements") && r.Method == http.MethodPut:
		var body map[string]struct {
			Parallelism flinkdist.Bounds `json:"parallelism"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b := map[string]flinkdist.Bounds{}
		for v, x := range body {
			b[v] = x.Parallelism
		}
		f.put = append(f.put, b)
		io.WriteString(w, "{}")
	case strings.HasSuffix(p, "/resource-requirements"):
		w.Write(f.file("resource-requirements.json"))
	case p == "/taskmanagers": // the job's one TaskManager of one slot, in use
		io.WriteString(w, `{"taskmanagers":[{"id":"container_1_0001_01_000002","path":"pekko.tcp://flink@127.0.0.2:1/user/rpc/taskmanager_0","slotsNumber":1,"freeSlots":0}]}`)
	case strings.HasSuffix(p, "/plan"):
		w.Write(f.file("plan.json"))
	case strings.HasSuffix(p, "/taskmanagers") && strings.Contains(p, "/vertices/"):
		i := f.vertexIndex(strings.Split(p, "/")[4])
		if i < 0 {
			http.NotFound(w, r)
			return
		}
		w.Write(f.file("vertex" + itoa(i) + "-taskmanagers.json"))
	case strings.HasSuffix(p, "/subtasks/metrics"):
		parts := strings.Split(p, "/")
		i := f.vertexIndex(parts[4])
		if i < 0 {
			http.NotFound(w, r)
			return
		}
		get := r.URL.Query().Get("get")
		if get == "" {
			names := f.file("vertex" + itoa(i) + "-names.json")
			if f.taskOnly {
				var all []map[string]string
				if err := json.Unmarshal(names, &all); err != nil {
					panic(err)
				}
				var task []map[string]string
				for _, n := range all {
					if !strings.Contains(n["id"], ".") {
						task = append(task, n)
					}
				}
				names, _ = json.Marshal(task)
			}
			w.Write(names)
			return
		}
		f.asks = append(f.asks, get)
		var all []map[string]any
		if err := json.Unmarshal(f.file("vertex"+itoa(i)+"-metrics.json"), &all); err != nil {
			panic(err)
		}
		want := map[string]bool{}
		for _, n := range strings.Split(get, ",") {
			want[n] = true
		}
		var out []map[string]any
		for _, m := range all {
			if want[m["id"].(string)] {
				out = append(out, m)
			}
		}
		json.NewEncoder(w).Encode(out)
	case strings.HasPrefix(p, "/jobs/"):
		w.Write(f.file("job.json"))
	default:
		http.NotFound(w, r)
	}
}

// events records what the autoscaler emits.
type events struct {
	mu  sync.Mutex
	all []contract.Event
}

func (e *events) emit(ev contract.Event) { e.mu.Lock(); defer e.mu.Unlock(); e.all = append(e.all, ev) }
func (e *events) list() []contract.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]contract.Event(nil), e.all...)
}

// The autoscaler reads a real JobManager's answers on each Flink line: the stream job's one vertex
// is a source (no inputs in the plan), busy about all the time, its records read from its source
// operator's own numRecordsOutPerSecond (its numRecordsInPerSecond reads 0 on both lines, and the
// task's own rates 0: the sink is chained); a backlog the source does not report is not taken as 0.
// Its TaskManager's GPU utilisation is the GPU signal, by the container id Flink names.
func TestAutoscaleMeasuresARealJobManager(t *testing.T) {
	rates := map[string]float64{"1.20.5": 29.2, "2.3.0": 33.75} // as the fixtures hold them, on a loaded machine
	tms := map[string]string{"1.20.5": "container_1795976096100_0001_01_000002", "2.3.0": "container_1795976096100_0002_01_000003"}
	for _, version := range autoscaleVersions {
		t.Run(version, func(t *testing.T) {
			jm, rest := newAutoscaleJobManager(t, version)
			a := newAutoscaler(defaultAutoscale(), rest, (&events{}).emit, 2, "2 slots", nil)
			a.gpu = func(id string) (float64, bool) {
				if id == tms[version] {
					return 0.96, true
				}
				return 0, false
			}
			jobs, err := rest.Jobs(context.Background())
			require.NoError(t, err)
			require.Len(t, jobs, 1)
			loads, err := a.measure(context.Background(), jobs[0].ID)
			require.NoError(t, err)
			require.Len(t, loads, 1, "source, map and sink chained into one vertex")
			l := loads[0]
			assert.Equal(t, 1, l.Parallelism)
			assert.Equal(t, 128, l.MaxParallelism)
			assert.Empty(t, l.Inputs, "a source")
			assert.Greater(t, l.Busy, 0.9, "the map sleeps 10 ms a record: busy all the time")
			assert.LessOrEqual(t, l.Busy, 1.0)
			assert.False(t, math.IsNaN(l.SourceRate), "the source operator's rate is read")
			assert.InDelta(t, rates[version], l.SourceRate, 1e-9)
			assert.True(t, math.IsNaN(l.Pending), "a sequence source reports no backlog")
			assert.InDelta(t, 0.96, l.GPU, 1e-9, "its TaskManager's GPU")
			d := decide(time.Unix(0, 0), loads, autoscaleBounds{spec: defaultAutoscale()}, lowerSince{})
			assert.Equal(t, 2, d.Vertices[0].To)
			assert.Contains(t, d.inputs(), "gpu=96%")
			require.NotEmpty(t, jm.asks)
			assert.Contains(t, jm.asks[0], "Source__")
		})
	}
}

// A source vertex whose operator metrics are not listed yet (the task's register first) is listed
// again at the next read, not read without its source's rate for as long as the job runs.
func TestAutoscaleListsASourcesMetricsAgainUntilTheyAreThere(t *testing.T) {
	jm, rest := newAutoscaleJobManager(t, autoscaleVersions[0])
	jm.taskOnly = true
	a := newAutoscaler(defaultAutoscale(), rest, (&events{}).emit, 2, "2 slots", nil)
	jobs, err := rest.Jobs(context.Background())
	require.NoError(t, err)
	a.jobID = jobs[0].ID // as poll keeps it: the names are kept for the job
	loads, err := a.measure(context.Background(), jobs[0].ID)
	require.NoError(t, err)
	assert.True(t, math.IsNaN(loads[0].SourceRate), "not listed yet")
	jm.mu.Lock()
	jm.taskOnly = false
	jm.mu.Unlock()
	loads, err = a.measure(context.Background(), jobs[0].ID)
	require.NoError(t, err)
	assert.InDelta(t, 29.2, loads[0].SourceRate, 1e-9, "listed again: the source's rate is read")
}

// "recommend": after a whole window the decision is told once as a flink-autoscale event with its
// inputs, the details show it and the next one; the job's bounds are never set.
func TestAutoscaleRecommendTellsOnceAndSetsNothing(t *testing.T) {
	jm, rest := newAutoscaleJobManager(t, autoscaleVersions[0])
	ev := &events{}
	spec := defaultAutoscale()
	spec.Window = 20 * time.Second
	a := newAutoscaler(spec, rest, ev.emit, 2, "2 slots", nil)
	a.gauges = newAutoscaleGauges()
	now := time.Unix(1000, 0)
	a.now = func() time.Time { return now }
	ctx := context.Background()
	require.NoError(t, a.poll(ctx))
	now = now.Add(10 * time.Second)
	require.NoError(t, a.poll(ctx))
	assert.Empty(t, ev.list(), "not before a whole window")
	assert.Contains(t, a.details(), contract.Detail{Name: "Autoscale last decision", Value: "none yet"})
	assert.Contains(t, a.details(), contract.Detail{Name: "Autoscale next decision", Value: "not before 00:17:00"})
	now = now.Add(10 * time.Second)
	require.NoError(t, a.poll(ctx))
	require.Len(t, ev.list(), 1)
	e := ev.list()[0]
	assert.Equal(t, eventAutoscale, e.Type)
	assert.Regexp(t, `autoscale recommended: .* 1 → 2 \(utilisation \d+% at 1, outside 50%\.\.90%`, e.Message)
	assert.Regexp(t, `measured over 20s: .* p=1 in=[\d.]+/s busy=\d+% true=[\d.]+/s/subtask target=[\d.]+/s`, e.Message)
	now = now.Add(5 * time.Second)
	require.NoError(t, a.poll(ctx))
	assert.Len(t, ev.list(), 1, "the same decision is told once")
	d := a.details()
	assert.Equal(t, "Autoscale", d[0].Name)
	assert.Equal(t, "recommend (utilisation 70%, band 50%..90%, window 20s)", d[0].Value)
	assert.Regexp(t, `1 → 2 .* at 00:17:05`, d[1].Value)
	assert.Empty(t, jm.put, "recommend sets no bound")

	// The gauges at /metrics: the one vertex's parallelism, the decision, what it was made of.
	assert.Equal(t, []float64{1}, gaugeValues(a.gauges.parallelism))
	assert.Equal(t, []float64{2}, gaugeValues(a.gauges.decided))
	require.Len(t, gaugeValues(a.gauges.busy), 1)
	assert.Greater(t, gaugeValues(a.gauges.busy)[0], 0.9)
	require.Len(t, gaugeValues(a.gauges.trueRate), 1)
	assert.Greater(t, gaugeValues(a.gauges.trueRate)[0], 10.0)
	require.Len(t, gaugeValues(a.gauges.targetRate), 1)
	assert.Greater(t, gaugeValues(a.gauges.targetRate)[0], 10.0)
	assert.Empty(t, gaugeValues(a.gauges.lag), "no backlog reported: no gauge, not 0")
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(a.gauges.collectors()[1]))
	fams, err := reg.Gather()
	require.NoError(t, err)
	require.Len(t, fams, 1)
	assert.Equal(t, "yarn_am_flink_autoscale_decided_parallelism", fams[0].GetName())
}

// gaugeValues are the values a gauge vector holds, as a registry gathers them.
func gaugeValues(c prometheus.Collector) []float64 {
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		panic(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	var out []float64
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			out = append(out, m.GetGauge().GetValue())
		}
	}
	return out
}

// "on": the decision sets the vertex's upper bound, and the next decision waits the stabilisation
// and a new window; while the job has not rescaled, the same decision is neither set nor told again.
func TestAutoscaleOnSetsTheUpperBoundThenWaits(t *testing.T) {
	jm, rest := newAutoscaleJobManager(t, autoscaleVersions[1])
	ev := &events{}
	spec := defaultAutoscale()
	spec.Mode, spec.Window, spec.Stabilise = autoscaleOn, 10*time.Second, 30*time.Second
	a := newAutoscaler(spec, rest, ev.emit, 4, "4 slots", setUpperBounds(rest))
	now := time.Unix(0, 0)
	a.now = func() time.Time { return now }
	ctx := context.Background()
	require.NoError(t, a.poll(ctx))
	now = now.Add(10 * time.Second)
	require.NoError(t, a.poll(ctx))
	require.Len(t, jm.put, 1)
	for _, b := range jm.put[0] {
		assert.Equal(t, flinkdist.Bounds{Lower: 1, Upper: 2}, b)
	}
	require.Len(t, ev.list(), 1)
	assert.Contains(t, ev.list()[0].Message, "autoscale decided:")
	var applied, next string
	for _, d := range a.details() {
		switch d.Name {
		case "Autoscale applied":
			applied = d.Value
		case "Autoscale next decision":
			next = d.Value
		}
	}
	assert.Contains(t, applied, "1 → 2")
	assert.Equal(t, "not before 00:00:50", next, "stabilisation 30 s, then a window of 10 s")
	for range 3 {
		now = now.Add(5 * time.Second)
		require.NoError(t, a.poll(ctx))
	}
	assert.Len(t, jm.put, 1, "nothing more within the stabilisation")
	for range 10 {
		now = now.Add(5 * time.Second)
		require.NoError(t, a.poll(ctx))
	}
	assert.Len(t, jm.put, 1, "the job still runs at 1: the same decision waits for its rescale, not set again")
	assert.Len(t, ev.list(), 1, "nor told again")
}

// "on" with the queue's headroom (framework.AMStart.Headroom): the busy job would go 1 → 2, but the
// queue has 2 of the 3 GPUs a TaskManager asks: the decision holds the vertex at 1, names the
// headroom, and sets nothing; once the queue has room for one more TaskManager, 1 → 2 is set.
func TestAutoscaleOnIsHeldByTheQueuesHeadroom(t *testing.T) {
	jm, rest := newAutoscaleJobManager(t, autoscaleVersions[1])
	ev := &events{}
	spec := defaultAutoscale()
	spec.Mode, spec.Window, spec.Stabilise = autoscaleOn, 10*time.Second, 0
	a := newAutoscaler(spec, rest, ev.emit, 4, "4 slots", setUpperBounds(rest))
	worker := contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": 3}
	h := framework.Headroom{Free: contract.Capability{"memory-mb": 13312, "vcores": 14, "yarn.io/gpu": 2, "yarn.io/fpga": 4}, Worker: worker}
	a.headroom, a.perTM = func() (framework.Headroom, bool) { return h, true }, 1
	now := time.Unix(0, 0)
	a.now = func() time.Time { return now }
	ctx := context.Background()
	require.NoError(t, a.poll(ctx))
	now = now.Add(10 * time.Second)
	require.NoError(t, a.poll(ctx))
	assert.Empty(t, jm.put, "held at its parallelism: nothing set")
	require.Len(t, ev.list(), 1)
	msg := ev.list()[0].Message
	assert.Contains(t, msg, "stays at 1 (utilisation")
	assert.Contains(t, msg, "held by the queue's headroom (13312 MiB, 14 vcores, 2 yarn.io/gpu free: room for 0 more TaskManagers of 1 slot)")

	h.Free["yarn.io/gpu"] = 3
	now = now.Add(5 * time.Second)
	require.NoError(t, a.poll(ctx))
	require.Len(t, jm.put, 1, "room for one more TaskManager: the scale-out is set")
	for _, b := range jm.put[0] {
		assert.Equal(t, flinkdist.Bounds{Lower: 1, Upper: 2}, b)
	}
}

// The idle-GPU give-back and "on" (docs/flink.md#autoscaling): each TaskManager given back lowers the
// autoscaler's slots by its own, so the busy job, given back from 2 TaskManagers to 1, is held at 1
// and the decision names the give-back; a give-back between a decision and its setting wins (the
// decision is dropped, the next window decides on the lowered bounds); a decision sets the bounds
// of the vertices it changes only.
func TestAutoscaleOnNeverAsksBackWhatTheGiveBackReleased(t *testing.T) {
	n, limit := slotsLimit(3, 2, 1)
	assert.Equal(t, 4, n)
	assert.Equal(t, "the TaskManagers' 4 slots (taskexecutor.instances = 3 × taskmanager.numberOfTaskSlots = 2, less 1 TaskManager given back for idle GPUs by taskexecutor.idle-gpu-release)", limit)

	jm, rest := newAutoscaleJobManager(t, autoscaleVersions[0])
	ev := &events{}
	spec := defaultAutoscale()
	spec.Mode, spec.Window, spec.Stabilise = autoscaleOn, 10*time.Second, 0
	a := newAutoscaler(spec, rest, ev.emit, 2, "2 slots", setUpperBounds(rest))
	var mu sync.Mutex
	given := 1
	a.instances, a.perTM, a.bounds = 2, 1, &mu
	a.given = func() int { return given }
	now := time.Unix(0, 0)
	a.now = func() time.Time { return now }
	ctx := context.Background()
	require.NoError(t, a.poll(ctx))
	now = now.Add(10 * time.Second)
	require.NoError(t, a.poll(ctx))
	assert.Empty(t, jm.put, "held at 1: nothing set")
	require.Len(t, ev.list(), 1)
	assert.Contains(t, ev.list()[0].Message, "stays at 1 (utilisation")
	assert.Contains(t, ev.list()[0].Message, "held by the TaskManagers' 1 slots (taskexecutor.instances = 2 × taskmanager.numberOfTaskSlots = 1, less 1 TaskManager given back for idle GPUs by taskexecutor.idle-gpu-release)")

	// No give-back counted: 1 → 2 is decided, but a give-back lands before it is set.
	given = 0
	calls := 0
	a.given = func() int {
		calls++
		if calls > 1 {
			return 1
		}
		return 0
	}
	now = now.Add(5 * time.Second)
	require.NoError(t, a.poll(ctx))
	assert.Empty(t, jm.put, "the give-back since the decision wins: nothing set")
	assert.True(t, mu.TryLock(), "the bounds' lock is let go")
	mu.Unlock()

	a.given = func() int { return 0 }
	now = now.Add(5 * time.Second)
	require.NoError(t, a.poll(ctx))
	require.Len(t, jm.put, 1, "no give-back: 1 → 2 is set")

	d := &autoscaleDecision{Vertices: []vertexDecision{{ID: "a", From: 1, To: 2}, {ID: "b", From: 3, To: 3}}}
	assert.Equal(t, map[string]int{"a": 2}, d.changed(), "an unchanged vertex's bound (a give-back's, say) is not set again")
}

// The page's per-vertex parallelism over time (framework.AM.Series): the parallelism the job runs
// at when first seen and after each rescale, and each decision's, with their times; the newest 100
// points of a vertex kept, and a new job's history starts anew.
func TestAutoscaleKeepsEachVertexsParallelismOverTime(t *testing.T) {
	jm, rest := newAutoscaleJobManager(t, autoscaleVersions[0])
	ev := &events{}
	spec := defaultAutoscale()
	spec.Mode, spec.Window, spec.Stabilise = autoscaleOn, 10*time.Second, 0
	a := newAutoscaler(spec, rest, ev.emit, 4, "4 slots", setUpperBounds(rest))
	assert.Empty(t, a.series(), "nothing before the job is read")
	now := time.Unix(0, 0)
	a.now = func() time.Time { return now }
	ctx := context.Background()
	require.NoError(t, a.poll(ctx))
	now = now.Add(10 * time.Second)
	require.NoError(t, a.poll(ctx))
	require.Len(t, jm.put, 1)
	s := a.series()
	require.Len(t, s, 1)
	assert.Equal(t, "Parallelism of Source: Sequence Source -> Map -> Sink: Writer", s[0].Name)
	assert.Equal(t, []contract.SeriesPoint{{At: time.Unix(0, 0).UTC(), Value: 1, Note: "running"}, {At: time.Unix(10, 0).UTC(), Value: 2, Note: "decided"}}, s[0].Points)

	var h autoscaleHistory
	for i := range 150 {
		h.add("job1", "v", "map", time.Unix(int64(i), 0), i, "running")
	}
	require.Len(t, h.pts["v"], maxHistoryPoints)
	assert.EqualValues(t, 50, h.pts["v"][0].Value, "the newest 100 kept")
	assert.EqualValues(t, 149, h.pts["v"][99].Value)
	h.add("job2", "w", "sink", time.Unix(200, 0), 3, "running")
	assert.Equal(t, []string{"w"}, h.order, "a new job's history starts anew")
}
