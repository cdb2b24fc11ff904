package flink

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

const testJobID = "0123456789abcdef0123456789abcdef"

// fakeJobManager is a JobManager's REST API with one job: its state, parallelism and checkpoints,
// and a stop with a savepoint that completes after polls polls (or fails with failure).
type fakeJobManager struct {
	mu          sync.Mutex
	state       string
	parallelism int
	checkpoints string // the /checkpoints answer
	polls       int
	failure     string
	stopBody    map[string]any
	exceptions  string // the /exceptions answer ("": an empty history)
	cpReads     int    // how many times /checkpoints was read
}

func (f *fakeJobManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := "/jobs/" + testJobID
	switch {
	case r.URL.Path == "/jobs/overview":
		_, _ = w.Write([]byte(`{"jobs":[{"jid":"` + testJobID + `","name":"stream","state":"` + f.state + `","start-time":1}]}`))
	case r.URL.Path == j:
		_, _ = w.Write([]byte(`{"jid":"` + testJobID + `","name":"stream","state":"` + f.state + `","vertices":[{"name":"Source","parallelism":1},{"name":"Map","parallelism":` + itoa(f.parallelism) + `}]}`))
	case r.URL.Path == j+"/checkpoints":
		f.cpReads++
		_, _ = w.Write([]byte(f.checkpoints))
	case r.URL.Path == j+"/exceptions":
		_, _ = w.Write([]byte(cmp.Or(f.exceptions, `{"exceptionHistory":{"entries":[]}}`)))
	case r.URL.Path == j+"/stop" && r.Method == http.MethodPost:
		_ = json.NewDecoder(r.Body).Decode(&f.stopBody)
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"request-id":"trig1"}`))
	case r.URL.Path == j+"/savepoints/trig1":
		f.polls--
		switch {
		case f.polls > 0:
			_, _ = w.Write([]byte(`{"status":{"id":"IN_PROGRESS"}}`))
		case f.failure != "":
			_, _ = w.Write([]byte(`{"status":{"id":"COMPLETED"},"operation":{"failure-cause":{"class":"java.util.concurrent.CompletionException","stack-trace":"java.util.concurrent.CompletionException: x\nCaused by: ` + f.failure + `"}}}`))
		default:
			f.state = "FINISHED"
			_, _ = w.Write([]byte(`{"status":{"id":"COMPLETED"},"operation":{"location":"file:/tmp/sp/savepoint-012345-abcdef"}}`))
		}
	default:
		http.Error(w, `{"errors":["Not found: `+r.URL.Path+`"]}`, http.StatusNotFound)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

type recorded struct {
	mu  sync.Mutex
	evs []contract.Event
}

func (r *recorded) emit(e contract.Event) { r.mu.Lock(); r.evs = append(r.evs, e); r.mu.Unlock() }
func (r *recorded) messages() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var l []string
	for _, e := range r.evs {
		if e.Type != eventJob {
			l = append(l, "WRONG TYPE "+string(e.Type))
		}
		l = append(l, e.Message)
	}
	return strings.Join(l, "\n")
}

// TestStopWithSavepoint: stop asks the JobManager to stop the running job with a savepoint in the
// directory given (drain false, as flink stop), polls the trigger until it completes and returns the
// savepoint's path, named "Savepoint"; without a directory it takes state.savepoints.dir, and without that it refuses
// naming --savepoint; a failed savepoint is an error with Flink's innermost cause.
func TestStopWithSavepoint(t *testing.T) {
	jm := &fakeJobManager{state: "RUNNING", parallelism: 2, checkpoints: `{}`, polls: 3}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	var ev recorded
	s := &stopper{rest: &flinkdist.REST{URL: srv.URL}, emit: ev.emit}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if _, err := s.stop(ctx, framework.StateRequest{}); err == nil || !strings.Contains(err.Error(), "--savepoint DIR") || !strings.Contains(err.Error(), keySavepointsDir) {
		t.Fatalf("no directory: %v, want a refusal naming --savepoint and %s", err, keySavepointsDir)
	}
	if jm.stopBody != nil {
		t.Fatal("a refused stop reached the JobManager")
	}
	kept, err := s.stop(ctx, framework.StateRequest{Dir: "file:///tmp/sp"})
	if err != nil || kept != (framework.Kept{What: "Savepoint", Where: "file:/tmp/sp/savepoint-012345-abcdef"}) {
		t.Fatalf("stop = %+v, %v", kept, err)
	}
	if jm.stopBody["targetDirectory"] != "file:///tmp/sp" || jm.stopBody["drain"] != false {
		t.Errorf("the stop's body: %v, want the directory and drain false", jm.stopBody)
	}
	if m := ev.messages(); !strings.Contains(m, "stopping with a savepoint in file:///tmp/sp") || !strings.Contains(m, "stopped with a savepoint at file:/tmp/sp/savepoint-012345-abcdef") {
		t.Errorf("events:\n%s", m)
	}

	// The job is FINISHED now: nothing to stop.
	if _, err := s.stop(ctx, framework.StateRequest{Dir: "file:///tmp/sp"}); err == nil || !strings.Contains(err.Error(), "no running job") {
		t.Errorf("a finished job: %v", err)
	}

	jm.state, jm.polls, jm.failure, jm.stopBody = "RUNNING", 1, "java.io.IOException: Permission denied: /nope", nil
	s.configured = "file:///configured"
	if _, err := s.stop(ctx, framework.StateRequest{}); err == nil || !strings.Contains(err.Error(), "Permission denied: /nope") {
		t.Errorf("a failed savepoint: %v, want Flink's cause", err)
	}
	if jm.stopBody["targetDirectory"] != "file:///configured" {
		t.Errorf("without --savepoint the configured directory is used: %v", jm.stopBody)
	}
}

// TestJobDetailsAndEvents: the details show the job's id, state, parallelism and checkpoints; the
// events tell of the first sight, a change of state, a rescale, a checkpoint (at most one a minute),
// a savepoint and a restore, each once.
func TestJobDetailsAndEvents(t *testing.T) {
	jm := &fakeJobManager{state: "RUNNING", parallelism: 2, checkpoints: `{"counts":{"completed":3,"failed":0},
		"latest":{"completed":{"id":3,"latest_ack_timestamp":1700000000000,"external_path":"<checkpoint-not-externally-addressable>"},
		"restored":{"id":7,"is_savepoint":true,"external_path":"file:/tmp/sp/savepoint-1"}}}`}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	var ev recorded
	now := time.Unix(1700000000, 0)
	w := &jobWatch{rest: &flinkdist.REST{URL: srv.URL}, emit: ev.emit, now: func() time.Time { return now }}
	ctx := context.Background()
	details := func() map[string]string {
		t.Helper()
		d, err := w.details(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, x := range d {
			m[x.Name] = x.Value
		}
		return m
	}
	d := details()
	want := map[string]string{"Job": "stream (" + testJobID + ")", "State": "RUNNING", "Parallelism": "2",
		"Checkpoints": "3 completed, 0 failed", "Last checkpoint": "#3 at 2023-11-14T22:13:20Z", "Restored from": "savepoint file:/tmp/sp/savepoint-1"}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s = %q, want %q", k, d[k], v)
		}
	}
	first := ev.messages()
	for _, m := range []string{"Flink job stream (" + testJobID + ") is RUNNING, parallelism 2", "checkpoint 3 completed", "restored from savepoint file:/tmp/sp/savepoint-1"} {
		if !strings.Contains(first, m) {
			t.Errorf("the first read's events lack %q:\n%s", m, first)
		}
	}
	// Nothing changed: no event. A checkpoint within the minute: no event either.
	jm.checkpoints = strings.Replace(jm.checkpoints, `"id":3`, `"id":4`, 1)
	now = now.Add(10 * time.Second)
	details()
	if got := ev.messages(); got != first {
		t.Errorf("events without a change worth telling:\n%s", strings.TrimPrefix(got, first))
	}
	// A rescale, a checkpoint after the minute, a savepoint.
	jm.parallelism = 3
	jm.checkpoints = `{"counts":{"completed":9},"latest":{"completed":{"id":9},"savepoint":{"id":8,"external_path":"file:/tmp/sp/savepoint-8"}}}`
	now = now.Add(time.Minute)
	details()
	more := strings.TrimPrefix(ev.messages(), first)
	for _, m := range []string{"rescaled: parallelism 2 → 3", "checkpoint 9 completed (6 since the last such event)", "savepoint 8 written to file:/tmp/sp/savepoint-8"} {
		if !strings.Contains(more, m) {
			t.Errorf("the events lack %q:\n%s", m, more)
		}
	}
	jm.state = "FINISHED"
	details()
	if !strings.HasSuffix(ev.messages(), "RUNNING → FINISHED") {
		t.Errorf("the end of the job is not told:\n%s", ev.messages())
	}
}

// TestRescaleRestoreIsNotARecovery: the adaptive scheduler's rescale restores the job's latest
// checkpoint, which Flink reports as it reports a recovery; with no failure in the job's exception
// history since, the watch tells it as the rescale carrying the state over, never as "restored from
// checkpoint N <checkpoint-not-externally-addressable>". A restore after a failure (a newer entry in
// the history) is a recovery, told as "restored from"; so is a restore the watch saw at the job's
// start, before it ran.
func TestRescaleRestoreIsNotARecovery(t *testing.T) {
	jm := &fakeJobManager{state: "RUNNING", parallelism: 2, checkpoints: `{"counts":{"completed":3},"latest":{"completed":{"id":3,"external_path":"<checkpoint-not-externally-addressable>"}}}`}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	var ev recorded
	w := &jobWatch{rest: &flinkdist.REST{URL: srv.URL}, emit: ev.emit, now: func() time.Time { return time.Unix(1700000000, 0) }}
	ctx := context.Background()
	details := func() map[string]string {
		t.Helper()
		d, err := w.details(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, x := range d {
			m[x.Name] = x.Value
		}
		return m
	}
	details() // RUNNING, no restore yet
	jm.mu.Lock()
	jm.parallelism = 1
	jm.checkpoints = `{"counts":{"completed":3,"restored":1},"latest":{"completed":{"id":3,"external_path":"<checkpoint-not-externally-addressable>"},
		"restored":{"id":3,"is_savepoint":false,"external_path":"<checkpoint-not-externally-addressable>","restore_timestamp":1700000005000}}}`
	jm.mu.Unlock()
	d := details()
	msgs := ev.messages()
	if strings.Contains(msgs, "restored from") || d["Restored from"] != "" {
		t.Errorf("a rescale's restore told as a recovery:\n%s\n%v", msgs, d)
	}
	if !strings.Contains(msgs, "its rescale carried its state over from checkpoint 3") || !strings.Contains(d["Rescaled with"], "checkpoint 3") {
		t.Errorf("the rescale's restore is not told:\n%s\n%v", msgs, d)
	}
	// The job fails (a TaskManager lost) and restores checkpoint 4: a recovery.
	jm.mu.Lock()
	jm.exceptions = `{"exceptionHistory":{"entries":[{"exceptionName":"org.apache.flink.runtime.jobmaster.JobMasterException","stacktrace":"org.apache.flink.runtime.jobmaster.JobMasterException: TaskManager with id container_1 is no longer reachable.","timestamp":1700000009000}]}}`
	jm.checkpoints = strings.NewReplacer(`"id":3,"is_savepoint"`, `"id":4,"is_savepoint"`, "1700000005000", "1700000010000").Replace(jm.checkpoints)
	jm.mu.Unlock()
	d = details()
	if more := strings.TrimPrefix(ev.messages(), msgs); !strings.Contains(more, "restored from checkpoint 4") || d["Restored from"] != "checkpoint 4 <checkpoint-not-externally-addressable>" {
		t.Errorf("a recovery after a failure is not told as one:\n%s\n%v", more, d)
	}

	// A new job that shows a restore at its first read started from it.
	var ev2 recorded
	w = &jobWatch{rest: w.rest, emit: ev2.emit, now: w.now}
	w.details(ctx)
	if !strings.Contains(ev2.messages(), "restored from checkpoint 4") {
		t.Errorf("a restore seen at the job's start is not told as one:\n%s", ev2.messages())
	}
}
