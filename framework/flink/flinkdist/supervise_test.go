package flinkdist

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// RunApplication returns the job's outcome and stops the JobManager process (here `sleep`, standing
// in for the JVM; TestFlinkFailureRootCause runs the real one).
func TestRunApplicationStopsTheJobManagerAtTheJobsEnd(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/jobs/overview":
			w.Write([]byte(`{"jobs":[{"jid":"` + id + `","state":"FAILED"}]}`))
		case "/jobs/" + id:
			w.Write([]byte(failedDetail(id)))
		case "/jobs/" + id + "/exceptions":
			w.Write([]byte(exceptionsDoc))
		}
	}))
	defer srv.Close()
	conf := NewConfig()
	conf.Set(KeyShutdownOnFinish, "false")
	p := &Process{Role: RoleApplication, Argv: []string{"sleep", "600"}, Conf: conf}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	var out bytes.Buffer
	o, err := RunApplication(ctx, p, &REST{URL: srv.URL}, 10*time.Millisecond, 5*time.Second, &out, &out)
	if err != nil {
		t.Fatal(err)
	}
	if o.Job.State != "FAILED" || o.RootCause == nil || !strings.Contains(o.RootCause.Cause, "boom") {
		t.Errorf("%+v %+v", o.Job, o.RootCause)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("RunApplication took %v: the JobManager was not stopped by SIGTERM", d)
	}

	// A JobManager that exits before its job ends is an error, not an outcome.
	p.Argv = []string{"sh", "-c", "exit 3"}
	running := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"jobs":[]}`))
	}))
	defer running.Close()
	if _, err := RunApplication(ctx, p, &REST{URL: running.URL}, 10*time.Millisecond, time.Second, &out, &out); err == nil ||
		!strings.Contains(err.Error(), "exited before its job ended") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("JobManager gone: %v", err)
	}

	conf.Set(KeyShutdownOnFinish, "true")
	if _, err := RunApplication(ctx, p, &REST{URL: srv.URL}, time.Second, time.Second, &out, &out); err == nil ||
		!strings.Contains(err.Error(), "execution.shutdown-on-application-finish must be false") {
		t.Errorf("shutdown on finish: %v", err)
	}
	p.Role = RoleSession
	if _, err := RunApplication(ctx, p, &REST{URL: srv.URL}, time.Second, time.Second, &out, &out); err == nil ||
		!strings.Contains(err.Error(), "needs a jobmanager-application process") {
		t.Errorf("session: %v", err)
	}
}
