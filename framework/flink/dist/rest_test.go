package dist

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The shape of Flink 1.20's /jobs/<id>/exceptions for a job whose task threw with restarts off (as
// TestFlinkFailureRootCause sees it from the real JobManager).
const exceptionsDoc = `{"root-exception":"org.apache.flink.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy\n\tat x\nCaused by: java.lang.IllegalStateException: boom in subtask 0\n\tat y\n",
"timestamp":1700000000000,"all-exceptions":[],"truncated":false,
"exceptionHistory":{"entries":[{"exceptionName":"org.apache.flink.runtime.JobException","stacktrace":"org.apache.flink.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy\n\tat x\nCaused by: java.lang.IllegalStateException: boom in subtask 0\n\tat y\n","timestamp":1700000000000,"taskName":"Map (1/1)","taskManagerId":"tm-1","failureLabels":{},"concurrentExceptions":[]}],"truncated":false}}`

func TestRESTRootCause(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/jobs/" + id + "/exceptions":
			w.Write([]byte(exceptionsDoc))
		case "/jobs/overview":
			w.Write([]byte(`{"jobs":[{"jid":"` + id + `","name":"j","state":"FAILED","start-time":1,"end-time":2}]}`))
		case "/taskmanagers":
			w.Write([]byte(`{"taskmanagers":[{"id":"tm-1","path":"pekko.tcp://flink@127.0.0.1:1/user/rpc/taskmanager_0","slotsNumber":2,"freeSlots":2}]}`))
		default:
			http.Error(w, `{"errors":["Not found: /x"]}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	c := &REST{URL: srv.URL + "/"}
	ctx := context.Background()
	rc, err := c.RootCause(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Cause != "java.lang.IllegalStateException: boom in subtask 0" || rc.Exception != "org.apache.flink.runtime.JobException" ||
		rc.Message != "Recovery is suppressed by NoRestartBackoffTimeStrategy" || rc.TaskName != "Map (1/1)" {
		t.Errorf("%+v", rc)
	}
	if got := rc.String(); got != "java.lang.IllegalStateException: boom in subtask 0 (in Map (1/1) on TaskManager tm-1)" {
		t.Errorf("String %q", got)
	}
	jobs, err := c.Jobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].State != "FAILED" || jobs[0].ID != id {
		t.Errorf("jobs %+v %v", jobs, err)
	}
	tms, err := c.TaskManagers(ctx)
	if err != nil || len(tms) != 1 || tms[0].Slots != 2 {
		t.Errorf("taskmanagers %+v %v", tms, err)
	}
	if _, err := c.RootCause(ctx, "../../x"); err == nil || !strings.Contains(err.Error(), "want 32 hex digits") {
		t.Errorf("bad id: %v", err)
	}
	if _, err := c.RootCause(ctx, strings.Repeat("f", 32)); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown job: %v", err)
	}
}

func TestInnermostCause(t *testing.T) {
	if got := InnermostCause("a.B: top\n\tat x\nCaused by: c.D: mid\nCaused by: e.F: deepest\n\tat y"); got != "e.F: deepest" {
		t.Errorf("%q", got)
	}
	if got := InnermostCause("a.B: only\n\tat x"); got != "a.B: only" {
		t.Errorf("%q", got)
	}
}

// A colocated TaskManager's wait: an application cluster has started once its job is past
// INITIALIZING, a session cluster once its REST API answers; a JobManager that never gets there
// ends the wait with ctx, naming what was seen last.
func TestRESTWaitStarted(t *testing.T) {
	var polls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := polls.Add(1); {
		case n > 100:
			w.Write([]byte(`{"jobs":[{"jid":"j1","name":"j","state":"INITIALIZING"}]}`))
		case n <= 2:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		case n <= 4:
			w.Write([]byte(`{"jobs":[]}`))
		case n <= 6:
			w.Write([]byte(`{"jobs":[{"jid":"j1","name":"j","state":"INITIALIZING"}]}`))
		default:
			w.Write([]byte(`{"jobs":[{"jid":"j1","name":"j","state":"CREATED"}]}`))
		}
	}))
	defer srv.Close()
	c := &REST{URL: srv.URL}
	ctx := context.Background()
	saw, err := c.WaitStarted(ctx, time.Millisecond, true)
	if err != nil || saw != "job j1 is CREATED" || polls.Load() != 7 {
		t.Fatalf("application: %q, %v after %d polls", saw, err, polls.Load())
	}
	polls.Store(2)
	if saw, err := c.WaitStarted(ctx, time.Millisecond, false); err != nil || saw != "its REST API answers" || polls.Load() != 3 {
		t.Fatalf("session: %q, %v after %d polls", saw, err, polls.Load())
	}
	polls.Store(100) // from here on the job stays INITIALIZING
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.WaitStarted(short, time.Millisecond, true); err == nil || !strings.Contains(err.Error(), "job j1 is INITIALIZING") {
		t.Fatalf("a JobManager stuck in INITIALIZING: %v", err)
	}
}
