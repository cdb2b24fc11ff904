package flinkdist

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

// failedDetail is /jobs/<id> of a job that has FAILED, as far as WaitJob reads it.
func failedDetail(id string) string {
	return `{"jid":"` + id + `","name":"j","state":"FAILED","vertices":[]}`
}

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
	if got := innermostCause("a.B: top\n\tat x\nCaused by: c.D: mid\nCaused by: e.F: deepest\n\tat y"); got != "e.F: deepest" {
		t.Errorf("%q", got)
	}
	if got := innermostCause("a.B: only\n\tat x"); got != "a.B: only" {
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

// staleJobManager serves a real JobManager's answers around a failing job's end (testdata/flink-V-*:
// Flink 1.20.5's and 2.3.0's, the test job's fail mode, read while another client read /jobs/<id>
// every second as the AM's status does): /jobs/overview says FAILED at once, while /jobs/<id> and
// /jobs/<id>/exceptions, which Flink answers from its cached execution graph, give the graph cached
// before the failure (no exception) for their first stale reads together, then the settled ones.
// reads counts the per-job reads.
func staleJobManager(t *testing.T, version, job string, stale int32) (*REST, *atomic.Int32) {
	t.Helper()
	f := func(name string) []byte { return fixture(t, "flink-"+version+"-"+name+".json") }
	overview, apps := f("stale-jobs-overview"), []byte(nil)
	if version != "1.20.5" {
		apps = f("stale-applications-overview")
	}
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		state := "settled"
		switch r.URL.Path {
		case "/jobs/overview":
			w.Write(overview)
			return
		case "/applications/overview":
			if apps == nil {
				http.Error(w, string(fixture(t, "flink-1.20.5-applications-overview-404.json")), http.StatusNotFound)
				return
			}
			w.Write(apps)
			return
		case "/jobs/" + job, "/jobs/" + job + "/exceptions":
			if reads.Add(1) <= stale {
				state = "stale"
			}
		default:
			http.Error(w, `{"errors":["Not found: `+r.URL.Path+`"]}`, http.StatusNotFound)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/exceptions") {
			w.Write(f(state + "-job-exceptions"))
		} else {
			w.Write(f(state + "-job-detail"))
		}
	}))
	t.Cleanup(srv.Close)
	return &REST{URL: srv.URL}, &reads
}

// A job /jobs/overview shows FAILED while its own answers are still the cached ones of its run (the
// AM's status read /jobs/<id> within the last web.refresh-interval): WaitJob waits until /jobs/<id>
// shows the end, then reads the exceptions, and the root cause is the job's own exception, on both
// lines. Reading the exceptions at once gave none, and the driver fell back on the JobManager's log
// (docs/flink.md#the-rest-api).
func TestWaitJobReadsTheRootCauseOnceTheJobsOwnAnswerShowsItsEnd(t *testing.T) {
	for version, job := range map[string]string{"1.20.5": "248815a1d624bae4129b90638244aed6", "2.3.0": "d2b7203309075fe10f6f1d8c2f27bba1"} {
		t.Run(version, func(t *testing.T) {
			c, reads := staleJobManager(t, version, job, 3)
			o := waitJob(t, c)
			if o.Job.ID != job || o.State() != "FAILED" {
				t.Fatalf("outcome %+v: want job %s FAILED", o, job)
			}
			if o.RootCause == nil || o.RootCause.Cause != "java.lang.IllegalStateException: yarn-am-flink-test deliberate failure in subtask 0" {
				t.Fatalf("root cause %+v: want the job's IllegalStateException (per-job reads: %d)", o.RootCause, reads.Load())
			}
			if o.RootCause.Exception != "org.apache.flink.runtime.JobException" {
				t.Errorf("exception %q", o.RootCause.Exception)
			}
			if n := reads.Load(); n != 5 {
				t.Errorf("%d per-job reads, want 5: /jobs/<id> until it shows FAILED (3 stale, 1 settled), then the exceptions", n)
			}
		})
	}
}

// A job whose own answer never shows its end (a JobManager cached for longer than Settle) is read
// all the same once Settle has passed: what the exceptions say then, here none.
func TestWaitJobReadsTheExceptionsAfterSettle(t *testing.T) {
	const job = "d2b7203309075fe10f6f1d8c2f27bba1"
	c, reads := staleJobManager(t, "2.3.0", job, 1<<30)
	c.Settle = 50 * time.Millisecond
	start := time.Now()
	o := waitJob(t, c)
	if o.Job.ID != job || o.State() != "FAILED" || o.RootCause != nil {
		t.Fatalf("outcome %+v, root cause %+v: want job %s FAILED with none", o, o.RootCause, job)
	}
	if d := time.Since(start); d < c.Settle {
		t.Errorf("returned after %v, before Settle (%v)", d, c.Settle)
	}
	if reads.Load() < 2 {
		t.Errorf("%d per-job reads: want /jobs/<id> polled, then the exceptions", reads.Load())
	}
}

// Once the JobManager has exited, its cache will not settle: WaitJob reads the exceptions at once
// rather than for Settle.
func TestWaitJobStopsWaitingForTheJobsAnswerOnceTheJobManagerExited(t *testing.T) {
	const job = "d2b7203309075fe10f6f1d8c2f27bba1"
	c, _ := staleJobManager(t, "2.3.0", job, 1<<30)
	exited := make(chan struct{})
	close(exited)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	o, err := c.WaitJob(ctx, 10*time.Millisecond, exited)
	if err != nil {
		t.Fatal(err)
	}
	if o.Job.ID != job || o.State() != "FAILED" {
		t.Fatalf("outcome %+v: want job %s FAILED", o, job)
	}
	if d := time.Since(start); d >= defaultSettle/2 {
		t.Errorf("took %v: waited for the job's answer after the JobManager had exited", d)
	}
}
