package flinkdist

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The answers in testdata/ are a real JobManager's (Flink 2.3.0 and 1.20.5 from make flink-dist,
// running the test job of make flink-job as an application cluster): "main-threw" is the test job run
// with args gpu x (its main() throws a NumberFormatException before it submits a job), "job-failed"
// the fail mode while its job has FAILED and its application still runs, "finished" the gpu mode at
// its end; 1.20.5's 404 is its answer to /applications/overview.

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeJobManager serves path -> answer (a status code other than 200 as its first word: "404 body");
// asked counts the requests per path.
func fakeJobManager(t *testing.T, answers map[string][]byte) (*REST, map[string]*atomic.Int32) {
	t.Helper()
	asked := map[string]*atomic.Int32{}
	for p := range answers {
		asked[p] = &atomic.Int32{}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := answers[r.URL.Path]
		if !ok {
			http.Error(w, `{"errors":["Not found: `+r.URL.Path+`"]}`, http.StatusNotFound)
			return
		}
		asked[r.URL.Path].Add(1)
		if code, rest, found := strings.Cut(string(body), " "); found && code == "404" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(rest))
			return
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return &REST{URL: srv.URL}, asked
}

func waitJob(t *testing.T, c *REST) *Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	o, err := c.WaitJob(ctx, time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// A 2.3 application whose main() threw: no job ever shows in /jobs/overview, and the outcome is the
// application's FAILED with the user's exception as the root cause.
func TestWaitJobApplicationWhoseMainThrew(t *testing.T) {
	const app = "5688d295fd02f40e5f9afbff60bc34b3"
	c, _ := fakeJobManager(t, map[string][]byte{
		"/applications/overview":               fixture(t, "flink-2.3.0-applications-overview-main-threw.json"),
		"/applications/" + app + "/exceptions": fixture(t, "flink-2.3.0-application-exceptions-main-threw.json"),
		"/jobs/overview":                       fixture(t, "flink-2.3.0-jobs-overview-main-threw.json"),
	})
	o := waitJob(t, c)
	if o.Application == nil || o.Application.ID != app || o.State() != "FAILED" || o.Job.ID != "" {
		t.Fatalf("outcome %+v (application %+v): want application %s FAILED", o, o.Application, app)
	}
	if got, want := o.String(), "Flink application yarnam.flinkjob.Job ("+app+") FAILED"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
	rc := o.RootCause
	if rc == nil {
		t.Fatal("no root cause")
	}
	if rc.Cause != `java.lang.NumberFormatException: For input string: "x"` ||
		rc.Exception != "org.apache.flink.client.deployment.application.ApplicationExecutionException" ||
		rc.Message != "Could not execute application." {
		t.Errorf("root cause %+v", rc)
	}
	if rc.String() != rc.Cause {
		t.Errorf("String %q: no task to name for an application's failure", rc.String())
	}
}

// A job that failed under a 2.3 application is the outcome (with the job's own root cause), whether
// the application is still RUNNING or FAILED by then: the job is what failed.
func TestWaitJobAJobThatEndedComesFirst(t *testing.T) {
	const job = "83cbf2797ce4dab46c687d28aea99635"
	overview := fixture(t, "flink-2.3.0-applications-overview-job-failed.json")
	for name, apps := range map[string][]byte{
		"application running": overview,
		"application failed":  []byte(strings.Replace(string(overview), `"status":"RUNNING"`, `"status":"FAILED"`, 1)),
	} {
		t.Run(name, func(t *testing.T) {
			c, asked := fakeJobManager(t, map[string][]byte{
				"/applications/overview":       apps,
				"/jobs/overview":               fixture(t, "flink-2.3.0-jobs-overview-job-failed.json"),
				"/jobs/" + job:                 []byte(failedDetail(job)),
				"/jobs/" + job + "/exceptions": []byte(exceptionsDoc),
			})
			o := waitJob(t, c)
			if o.Job.ID != job || o.State() != "FAILED" || o.RootCause == nil || o.RootCause.Cause != "java.lang.IllegalStateException: boom in subtask 0" {
				t.Fatalf("outcome %+v, root cause %+v: want job %s FAILED with its root cause", o, o.RootCause, job)
			}
			if !strings.HasPrefix(o.String(), "Flink job yarn-am-flink-test fail ("+job+") FAILED") {
				t.Errorf("String %q", o.String())
			}
			if n := asked["/applications/overview"].Load(); n != 1 {
				t.Errorf("/applications/overview asked %d times, want 1", n)
			}
		})
	}
}

// A 2.3 application that FINISHED without a job (a main() that returns without executing one) ends
// the wait too, FINISHED.
func TestWaitJobApplicationFinishedWithoutAJob(t *testing.T) {
	apps := strings.Replace(string(fixture(t, "flink-2.3.0-applications-overview-finished.json")), `"jobs":{"FINISHED":1}`, `"jobs":{}`, 1)
	c, _ := fakeJobManager(t, map[string][]byte{
		"/applications/overview": []byte(apps),
		"/jobs/overview":         []byte(`{"jobs":[]}`),
	})
	o := waitJob(t, c)
	if o.Application == nil || o.State() != "FINISHED" || o.RootCause != nil {
		t.Fatalf("outcome %+v (application %+v): want FINISHED", o, o.Application)
	}
}

// Flink 1.20 answers /applications/overview with a 404: asked once, then the wait reads the jobs
// alone, as before 2.3.
func TestWaitJobWithoutApplicationEndpoints(t *testing.T) {
	const job = "0123456789abcdef0123456789abcdef"
	var polls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/applications/overview":
			polls.Add(1000)
			w.WriteHeader(http.StatusNotFound)
			w.Write(fixture(t, "flink-1.20.5-applications-overview-404.json"))
		case "/jobs/overview":
			state := "RUNNING"
			if polls.Add(1)%1000 > 3 {
				state = "FINISHED"
			}
			w.Write([]byte(`{"jobs":[{"jid":"` + job + `","name":"j","state":"` + state + `"}]}`))
		default:
			http.Error(w, "{}", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	c := &REST{URL: srv.URL}
	if _, err := c.Applications(context.Background()); !errors.Is(err, errNoApplications) {
		t.Fatalf("Applications from 1.20: %v, want ErrNoApplications", err)
	}
	polls.Store(0)
	o := waitJob(t, c)
	if o.Job.ID != job || o.State() != "FINISHED" || o.Application != nil {
		t.Fatalf("outcome %+v", o)
	}
	if n := polls.Load(); n/1000 != 1 || n%1000 != 4 {
		t.Errorf("/applications/overview asked %d times, /jobs/overview %d: want once and 4 times", n/1000, n%1000)
	}
}

func TestApplicationRootCauseRefusesABadID(t *testing.T) {
	c := &REST{URL: "http://127.0.0.1:1"}
	if _, err := c.ApplicationRootCause(context.Background(), "../../x"); err == nil || !strings.Contains(err.Error(), "want 32 hex digits") {
		t.Errorf("bad id: %v", err)
	}
}
