package flink

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

func TestSlotsNeededAndTaskManagersWanted(t *testing.T) {
	// One slot sharing group (Flink's default): the largest parallelism; several: the sum of each
	// group's largest.
	assert.Equal(t, 0, slotsNeeded(nil, nil))
	assert.Equal(t, 4, slotsNeeded(map[string]int{"a": 2, "b": 4, "c": 1}, nil))
	assert.Equal(t, 7, slotsNeeded(map[string]int{"a": 2, "b": 4, "c": 3}, map[string]string{"a": "g1", "b": "g1", "c": "g2"}))
	for _, tc := range []struct{ slots, perTM, lo, hi, want int }{
		{2, 1, 1, 3, 2},
		{5, 2, 1, 10, 3}, // ceil(5/2)
		{0, 1, 1, 3, 1},  // never under min-instances
		{9, 1, 1, 3, 3},  // never over instances
		{4, 0, 1, 9, 4},  // a slot count that is not one counts as 1
		{0, 1, 2, 3, 2},
	} {
		assert.Equal(t, tc.want, wantedTaskManagers(tc.slots, tc.perTM, tc.lo, tc.hi), "%+v", tc)
	}
}

func TestFlinkDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"30 s": 30 * time.Second, "5s": 5 * time.Second, "30000": 30 * time.Second,
		"1 min": time.Minute, "2 h": 2 * time.Hour, "250 ms": 250 * time.Millisecond, " 10 SECONDS ": 10 * time.Second} {
		d, err := flinkDuration(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, d, in)
	}
	for _, in := range []string{"", "soon", "-5 s", "5 fortnights", "1.5 s", "99999999999999999999 d"} {
		_, err := flinkDuration(in)
		assert.Error(t, err, in)
	}
}

// demandJobManager serves the answers of a real Flink 1.20 JobManager (testdata/demand-*.json, read
// from one running the test job's stream mode with the adaptive scheduler), changed per test.
type demandJobManager struct {
	mu           sync.Mutex
	overview     string
	job          string // /jobs/<id>, the same for every job
	requirements string
	taskManagers string
	put          []map[string]flinkdist.Bounds
}

func newDemandJobManager(t *testing.T) (*demandJobManager, *flinkdist.REST) {
	read := func(name string) string {
		b, err := os.ReadFile("testdata/demand-" + name + ".json")
		require.NoError(t, err)
		return string(b)
	}
	f := &demandJobManager{overview: read("jobs-overview"), job: read("job"), requirements: read("resource-requirements"), taskManagers: read("taskmanagers")}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, &flinkdist.REST{URL: srv.URL}
}

func (f *demandJobManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == "/jobs/overview":
		io.WriteString(w, f.overview)
	case r.URL.Path == "/taskmanagers":
		io.WriteString(w, f.taskManagers)
	case strings.HasSuffix(r.URL.Path, "/resource-requirements") && r.Method == http.MethodPut:
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
	case strings.HasSuffix(r.URL.Path, "/resource-requirements"):
		io.WriteString(w, f.requirements)
	case strings.HasPrefix(r.URL.Path, "/jobs/"):
		io.WriteString(w, f.job)
	default:
		http.NotFound(w, r)
	}
}

func (f *demandJobManager) set(p *string, old, new string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	*p = strings.ReplaceAll(*p, old, new)
}

// scaler records what the demand asks of the AM (framework.AMStart.Scale) and keeps its count.
type scaler struct {
	mu     sync.Mutex
	count  int
	calls  []string
	events []string
}

func (s *scaler) scale(to int, stopFirst []string, why string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count = to
	s.calls = append(s.calls, strings.Join(append([]string{why}, stopFirst...), " | "))
	return nil
}

func (s *scaler) instances() int { s.mu.Lock(); defer s.mu.Unlock(); return s.count }

func (s *scaler) emit(e contract.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e.Message)
}

func testDemand(rest *flinkdist.REST, s *scaler, now *time.Time) *demand {
	return &demand{rest: rest, emit: s.emit, scale: s.scale, instances: s.instances, now: func() time.Time { return *now },
		perTM: 1, lo: 1, hi: 3, adaptive: true, idleTimeout: 5 * time.Second, slotIdle: demandSlotIdleTimeout}
}

// The adaptive scheduler's upper bound (3, after a rescale to 3) is the demand: two TaskManagers
// declared become three, in one step, and the details say so.
func TestDemandScalesUpToTheJobsUpperBound(t *testing.T) {
	_, rest := newDemandJobManager(t)
	s := &scaler{count: 2}
	now := time.Unix(1000, 0)
	d := testDemand(rest, s, &now)
	require.NoError(t, d.poll(context.Background()))
	assert.Equal(t, []string{"Flink demand: 3 slots → 3 TaskManagers"}, s.calls)
	assert.Equal(t, []contract.Detail{{Name: "Slots needed", Value: "3"}, {Name: "TaskManagers wanted", Value: "3 (1 slot(s) each, 1 to 3)"}}, d.details())
	require.NoError(t, d.poll(context.Background()))
	assert.Len(t, s.calls, 1, "met: nothing more")
}

// The default scheduler's demand is the vertices' parallelism (2 in the real answer); a session
// cluster's is the sum over its jobs that have not ended.
func TestDemandOfTheDefaultSchedulerAndASession(t *testing.T) {
	f, rest := newDemandJobManager(t)
	s := &scaler{count: 1}
	now := time.Unix(1000, 0)
	d := testDemand(rest, s, &now)
	d.adaptive = false
	require.NoError(t, d.poll(context.Background()))
	assert.Equal(t, []string{"Flink demand: 2 slots → 2 TaskManagers"}, s.calls)

	d.session, d.hi, s.count, s.calls = true, 9, 1, nil
	f.set(&f.overview, `{"jobs":[`, `{"jobs":[{"jid":"00000000000000000000000000000001","name":"other","state":"RUNNING"},{"jid":"00000000000000000000000000000002","name":"old","state":"FINISHED"},`)
	require.NoError(t, d.poll(context.Background()))
	assert.Equal(t, []string{"Flink demand: 4 slots → 4 TaskManagers"}, s.calls, "2 + 2 of the jobs not ended")
}

// Fewer slots needed: only TaskManagers whose slots have all been free for the job's
// resourcemanager.taskmanager-timeout (5 s here) go, named (their ids are their containers'), never
// one that runs a task, and never one named before.
func TestDemandReleasesOnlyTaskManagersIdleForTheTimeout(t *testing.T) {
	f, rest := newDemandJobManager(t)
	freeOne(f)
	s := &scaler{count: 3}
	now := time.Unix(1000, 0)
	d := testDemand(rest, s, &now)
	require.NoError(t, d.poll(context.Background()))
	assert.Empty(t, s.calls, "idle since now: not yet")
	require.Len(t, s.events, 1)
	assert.Contains(t, s.events[0], "Flink demand: 1 slots → 1 TaskManagers; 2 fewer wait until Flink frees their slots (the JobMaster keeps a slot the job no longer uses for slot.idle.timeout = 10 s, then resourcemanager.taskmanager-timeout = 5s)")
	now = now.Add(4 * time.Second)
	require.NoError(t, d.poll(context.Background()))
	assert.Empty(t, s.calls)
	assert.Len(t, s.events, 1, "the wait is told once")
	now = now.Add(time.Second)
	require.NoError(t, d.poll(context.Background()))
	assert.Equal(t, []string{"Flink demand: 1 slots → 1 TaskManagers: container_1795796623620_0001_01_000003 released, its slots free for 5s (resourcemanager.taskmanager-timeout) | container_1795796623620_0001_01_000003"}, s.calls)
	assert.Equal(t, 2, s.count)
	// The released one still listed (it has not deregistered yet) is not named again.
	now = now.Add(time.Minute)
	require.NoError(t, d.poll(context.Background()))
	assert.Len(t, s.calls, 1)
	// A TaskManager whose id is not a container's cannot be picked: the count stays.
	f.set(&f.taskManagers, "container_1795796623620_0001_01_000002", "tm-on-its-own")
	f.set(&f.taskManagers, `"id":"tm-on-its-own","path":"pekko.tcp://flink@127.0.0.2:36013/user/rpc/taskmanager_0","dataPort":33299,"jmxPort":-1,"timeSinceLastHeartbeat":1795796990052,"slotsNumber":1,"freeSlots":0`,
		`"id":"tm-on-its-own","path":"pekko.tcp://flink@127.0.0.2:36013/user/rpc/taskmanager_0","dataPort":33299,"jmxPort":-1,"timeSinceLastHeartbeat":1795796990052,"slotsNumber":1,"freeSlots":1`)
	now = now.Add(time.Minute)
	require.NoError(t, d.poll(context.Background()))
	now = now.Add(time.Minute)
	require.NoError(t, d.poll(context.Background()))
	assert.Len(t, s.calls, 1)
	assert.Equal(t, 2, s.count)
}

// freeOne makes the real answer's TaskManager 000003 idle (its slot free) and the job's demand one
// slot; 000002 runs the job's task.
func freeOne(f *demandJobManager) {
	f.set(&f.requirements, `"upperBound":3`, `"upperBound":1`)
	f.set(&f.taskManagers, `"id":"container_1795796623620_0001_01_000003","path":"pekko.tcp://flink@127.0.0.2:32811/user/rpc/taskmanager_0","dataPort":40921,"jmxPort":-1,"timeSinceLastHeartbeat":1795796990041,"slotsNumber":1,"freeSlots":0`,
		`"id":"container_1795796623620_0001_01_000003","path":"pekko.tcp://flink@127.0.0.2:32811/user/rpc/taskmanager_0","dataPort":40921,"jmxPort":-1,"timeSinceLastHeartbeat":1795796990041,"slotsNumber":1,"freeSlots":1`)
}

// With no taskmanager-timeout set (yarn-am's default), a TaskManager whose slots Flink freed is
// released on the second read that finds them free (demandEvery later), not after 30 s: one read
// alone could catch a slot between its release and the next offer, and a read that finds it busy
// again starts the count over.
func TestDemandReleasesAFreedTaskManagerAtOnceWithoutATimeout(t *testing.T) {
	f, rest := newDemandJobManager(t)
	freeOne(f)
	s := &scaler{count: 3}
	now := time.Unix(1000, 0)
	d := testDemand(rest, s, &now)
	d.idleTimeout = 0
	require.NoError(t, d.poll(context.Background()))
	assert.Empty(t, s.calls, "one read: not yet")
	assert.Equal(t, []string{"Flink demand: 1 slots → 1 TaskManagers; 2 fewer wait until Flink frees their slots (the JobMaster keeps a slot the job no longer uses for slot.idle.timeout = 10 s)"}, s.events)
	busy := strings.Replace(f.taskManagers, `"timeSinceLastHeartbeat":1795796990041,"slotsNumber":1,"freeSlots":1`, `"timeSinceLastHeartbeat":1795796990041,"slotsNumber":1,"freeSlots":0`, 1)
	free := f.taskManagers
	f.set(&f.taskManagers, free, busy)
	now = now.Add(demandEvery)
	require.NoError(t, d.poll(context.Background()))
	f.set(&f.taskManagers, busy, free)
	now = now.Add(demandEvery)
	require.NoError(t, d.poll(context.Background()))
	assert.Empty(t, s.calls, "busy in between: the count starts over")
	now = now.Add(demandEvery)
	require.NoError(t, d.poll(context.Background()))
	assert.Equal(t, []string{"Flink demand: 1 slots → 1 TaskManagers: container_1795796623620_0001_01_000003 released, Flink freed its slots | container_1795796623620_0001_01_000003"}, s.calls)
}

// demandDefaults sets a short slot.idle.timeout where the job sets none, and says so; a job's own
// value is kept.
func TestDemandDefaultsShortenTheSlotIdleTimeout(t *testing.T) {
	conf := flinkdist.NewConfig()
	var out strings.Builder
	demandDefaults(conf, &out)
	v, _ := conf.Get(keySlotIdleTimeout)
	assert.Equal(t, demandSlotIdleTimeout, v)
	assert.Contains(t, out.String(), "slot.idle.timeout: 10 s (default of yarn-am")
	assert.Equal(t, "10 s", slotIdleTimeout(flinkdist.NewConfig()))

	conf = flinkdist.NewConfig()
	conf.Set(keySlotIdleTimeout, "50 s")
	out.Reset()
	demandDefaults(conf, &out)
	v, _ = conf.Get(keySlotIdleTimeout)
	assert.Equal(t, "50 s", v, "the job's own value is kept")
	assert.Empty(t, out.String())
	assert.Equal(t, "50 s", slotIdleTimeout(conf))
	d, err := taskManagerTimeout(conf)
	require.NoError(t, err)
	assert.Zero(t, d, "unset: released once freed")
}

// yarn-am scale of an adaptive job in demand mode sets the job's upper bound: up at once, down
// deferred until the job has rescaled away from the TaskManagers; out of bounds or another
// scheduler is refused with what works.
func TestDemandOnScale(t *testing.T) {
	f, rest := newDemandJobManager(t)
	s := &scaler{count: 2}
	now := time.Unix(1000, 0)
	d := testDemand(rest, s, &now)
	ctx := context.Background()
	require.NoError(t, d.onScale(ctx, 2, 3))
	err := d.onScale(ctx, 3, 1)
	var later *framework.Deferred
	require.True(t, errors.As(err, &later), "%v", err)
	assert.Contains(t, later.Message, "rescales to at most 1 slots first")
	assert.Equal(t, []map[string]flinkdist.Bounds{{"cbc357ccb763df2852fee8c4fc7d55f2": {Lower: 1, Upper: 3}}, {"cbc357ccb763df2852fee8c4fc7d55f2": {Lower: 1, Upper: 1}}}, f.put)
	assert.Len(t, s.events, 2)

	assert.ErrorContains(t, d.onScale(ctx, 2, 4), "taskexecutor.instances = 3 is the most")
	assert.ErrorContains(t, d.onScale(ctx, 2, 0), "keeps at least 1")
	d.adaptive = false
	assert.ErrorContains(t, d.onScale(ctx, 2, 3), `"jobmanager.scheduler" = "adaptive"`)
	assert.Len(t, f.put, 2, "nothing set by a refusal")
}

// A JobManager that does not answer (not up yet): the details say why the demand is not read, and
// the count is left alone.
func TestDemandNotReadSaysWhy(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	s := &scaler{count: 1}
	now := time.Unix(1000, 0)
	d := testDemand(&flinkdist.REST{URL: srv.URL}, s, &now)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.run(ctx); close(done) }()
	require.Eventually(t, func() bool {
		got := d.details()
		return len(got) == 1 && strings.HasPrefix(got[0].Value, "not read yet: flink rest:")
	}, 10*time.Second, 10*time.Millisecond)
	cancel()
	<-done
	assert.Empty(t, s.calls)
}

// An idle-GPU give-back (framework.AM.GiveBack) lowers the job's upper bound by one TaskManager's
// slots, the path yarn-am scale takes, and the TaskManager named is released first once Flink freed
// it; it is refused at one TaskManager, on another scheduler, and under a vertex's lower bound.
func TestDemandGivesBackAnIdleTaskManager(t *testing.T) {
	f, rest := newDemandJobManager(t)
	s := &scaler{count: 2}
	now := time.Unix(1000, 0)
	d := testDemand(rest, s, &now)
	d.idleTimeout = 0
	gb := d.giveBack()
	ctx := context.Background()
	const idle = "container_1795796623620_0001_01_000003"
	require.NoError(t, gb.Can(2))
	require.NoError(t, gb.Release(ctx, idle))
	assert.Equal(t, []map[string]flinkdist.Bounds{{"cbc357ccb763df2852fee8c4fc7d55f2": {Lower: 1, Upper: 1}}}, f.put)
	require.Len(t, s.events, 1)
	assert.Contains(t, s.events[0], "parallelism upper bound set to 1 (1 TaskManagers): the GPUs of "+idle+" stayed idle (taskexecutor.idle-gpu-release)")
	assert.Empty(t, s.calls, "nothing released before Flink freed a TaskManager")
	assert.Equal(t, 1, d.given(), "the give-back is counted: the autoscaler's slots are lowered by its TaskManager's")

	// The job rescaled and Flink freed both slots (a moment before the job takes one again): the idle
	// one goes first, though the other sorts before it.
	f.set(&f.requirements, `"upperBound":3`, `"upperBound":1`)
	f.set(&f.taskManagers, `"freeSlots":0`, `"freeSlots":1`)
	require.NoError(t, d.poll(ctx))
	now = now.Add(demandEvery)
	require.NoError(t, d.poll(ctx))
	require.Len(t, s.calls, 1)
	assert.True(t, strings.HasSuffix(s.calls[0], "| "+idle), s.calls[0])
	assert.Equal(t, 1, s.count)

	assert.ErrorContains(t, gb.Can(1), "runs on 1 TaskManager(s), the fewest")
	assert.ErrorContains(t, gb.Release(ctx, idle), "runs on 1 TaskManager(s), the fewest")
	s.count = 2
	f.set(&f.requirements, `"lowerBound":1`, `"lowerBound":2`)
	assert.ErrorContains(t, gb.Release(ctx, idle), "needs at least 2 slots (its lower bound, the job's minimum parallelism), more than the 1 of 1 TaskManager(s)")
	d.adaptive = false
	assert.ErrorContains(t, gb.Can(2), `only an application job on the adaptive scheduler ("jobmanager.scheduler" = "adaptive" in [flink.config]) rescales`)
	assert.Len(t, f.put, 1, "nothing set by a refusal")
	assert.Equal(t, 1, d.given(), "nor counted")
}
