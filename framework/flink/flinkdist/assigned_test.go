package flinkdist

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

func TestReadAssigned(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, contract.InfoFileName)
	os.WriteFile(path, []byte(`{"gpu": [{"index": "2"}, {"index": "0", "uuid": "GPU-x"}], "fpga": []}`), 0o644)
	got, err := readAssigned(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{"gpu": {"2", "0"}, "fpga": {}}; !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	os.WriteFile(path, []byte(`{"gpu": [{"uuid": "GPU-x"}]}`), 0o644)
	if _, err := readAssigned(path); err == nil || !strings.Contains(err.Error(), "gpu info 0 has no index property") {
		t.Errorf("no index: %v", err)
	}
	if _, err := readAssigned(filepath.Join(dir, "missing.json")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// WaitJob answers with the terminal job and a FAILED job's root cause, and gives up when the
// JobManager exits first.
func TestWaitJob(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	state := "RUNNING"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/jobs/overview":
			w.Write([]byte(`{"jobs":[{"jid":"` + id + `","name":"j","state":"` + state + `"}]}`))
			state = "FAILED" // the next poll sees the end
		case "/jobs/" + id:
			w.Write([]byte(failedDetail(id)))
		case "/jobs/" + id + "/exceptions":
			w.Write([]byte(exceptionsDoc))
		}
	}))
	defer srv.Close()
	c := &REST{URL: srv.URL}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := c.WaitJob(ctx, 10*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Job.State != "FAILED" || o.RootCause == nil || !strings.Contains(o.RootCause.Cause, "boom in subtask 0") {
		t.Errorf("%+v %+v", o.Job, o.RootCause)
	}
	// The JobManager gone: lost while its job ran (a restart in place resumes it), or before its
	// job ever ran (a start that failed, which would fail again).
	for _, tc := range []struct {
		state, want string
		lost        bool
	}{{"RUNNING", "exited while its job " + id + " ran", true}, {"INITIALIZING", "exited before its job ended", false}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"jobs":[{"jid":"` + id + `","state":"` + tc.state + `"}]}`))
		}))
		c = &REST{URL: srv.URL}
		exited := make(chan struct{})
		close(exited)
		_, err := c.WaitJob(ctx, 10*time.Millisecond, exited)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrLostWhileRunning) != tc.lost {
			t.Errorf("JobManager gone, its job %s: %v", tc.state, err)
		}
		srv.Close()
	}
}

func TestInContainer(t *testing.T) {
	dir := t.TempDir()
	info := filepath.Join(dir, contract.InfoFileName)
	os.WriteFile(info, []byte(`{"gpu": [{"index": "1"}]}`), 0o644)
	env := map[string]string{"LOG_DIRS": "/logs/a,/logs/b", contract.EnvInfoFile: info}
	s, err := InContainer(Spec{MemoryMiB: 1024}, dir, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if s.LogDir != "/logs/a" || s.Dir != dir || !reflect.DeepEqual(s.GPUs, map[string][]string{"gpu": {"1"}}) || s.MemoryMiB != 1024 {
		t.Errorf("%+v", s)
	}
	delete(env, contract.EnvInfoFile)
	if _, err := InContainer(Spec{}, dir, func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "YARN_AM_EXTERNAL_RESOURCES_FILE is not set") {
		t.Errorf("no info file: %v", err)
	}
	delete(env, "LOG_DIRS")
	if _, err := InContainer(Spec{}, dir, func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "LOG_DIRS is not set") {
		t.Errorf("no LOG_DIRS: %v", err)
	}
}
