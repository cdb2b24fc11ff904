package flink

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// triggerJobManager is a JobManager's REST API with one RUNNING job that takes checkpoints and
// savepoints on request: each completes once release is closed (or fails with failure).
type triggerJobManager struct {
	mu          sync.Mutex
	state       string
	failure     string
	release     chan struct{}
	checkpoints int            // POST /checkpoints seen
	savepoints  int            // POST /savepoints seen
	body        map[string]any // the last POST's body
}

func (f *triggerJobManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := "/jobs/" + testJobID
	done := func() bool {
		select {
		case <-f.release:
			return true
		default:
			return false
		}
	}
	switch {
	case r.URL.Path == "/jobs/overview":
		_, _ = w.Write([]byte(`{"jobs":[{"jid":"` + testJobID + `","name":"counter","state":"` + f.state + `","start-time":1}]}`))
	case (r.URL.Path == j+"/checkpoints" || r.URL.Path == j+"/savepoints") && r.Method == http.MethodPost:
		f.body = nil
		_ = json.NewDecoder(r.Body).Decode(&f.body)
		if strings.HasSuffix(r.URL.Path, "checkpoints") {
			f.checkpoints++
		} else {
			f.savepoints++
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"request-id":"trig` + itoa(f.checkpoints+f.savepoints) + `"}`))
	case strings.HasPrefix(r.URL.Path, j+"/checkpoints/trig"):
		switch {
		case !done():
			_, _ = w.Write([]byte(`{"status":{"id":"IN_PROGRESS"}}`))
		case f.failure != "":
			_, _ = w.Write([]byte(`{"status":{"id":"COMPLETED"},"operation":{"failureCause":{"class":"org.apache.flink.runtime.checkpoint.CheckpointException","stack-trace":"org.apache.flink.runtime.checkpoint.CheckpointException: ` + f.failure + `\n\tat x"}}}`))
		default:
			_, _ = w.Write([]byte(`{"status":{"id":"COMPLETED"},"operation":{"checkpointId":` + itoa(41+f.checkpoints) + `}}`))
		}
	case strings.HasPrefix(r.URL.Path, j+"/savepoints/trig"):
		if !done() {
			_, _ = w.Write([]byte(`{"status":{"id":"IN_PROGRESS"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":{"id":"COMPLETED"},"operation":{"location":"file:/tmp/sp/savepoint-0123-abcd"}}`))
	default:
		http.Error(w, `{"errors":["Not found: `+r.URL.Path+`"]}`, http.StatusNotFound)
	}
}

func (f *triggerJobManager) lastBody() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.body
}

func (f *triggerJobManager) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checkpoints, f.savepoints
}

// TestPreemptionAsksForOneCheckpointAtATime: a warning asks the JobManager for a checkpoint of the
// running job at once; the warnings that come while it is in flight (the RM names a container in
// every heartbeat, and a second container may be named) ask for no other; after it completed, a new
// warning asks for a new one. Each step is a flink-job event, and the details show the last.
func TestPreemptionAsksForOneCheckpointAtATime(t *testing.T) {
	jm := &triggerJobManager{state: "RUNNING", release: make(chan struct{})}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	var ev recorded
	p := newPreempter(&flinkdist.REST{URL: srv.URL}, ev.emit, preemptCheckpoint, "")
	ctx := context.Background()

	first := make(chan struct{})
	go func() { p.onPreemption(ctx, []string{"container_1_0001_01_000002"}, ""); close(first) }()
	require.Eventually(t, func() bool { c, _ := jm.counts(); return c == 1 }, 10*time.Second, 5*time.Millisecond)
	// Warnings while the checkpoint is in flight: served by it.
	p.onPreemption(ctx, []string{"container_1_0001_01_000002"}, "")
	p.onPreemption(ctx, []string{"container_1_0001_01_000003"}, "")
	c, _ := jm.counts()
	assert.Equal(t, 1, c, "one checkpoint in flight per job")
	close(jm.release)
	<-first
	assert.Equal(t, map[string]any{}, jm.lastBody(), "an empty body: the checkpoint type the job configures")
	msgs := ev.messages()
	for _, want := range []string{
		"Flink job counter (" + testJobID + "): YARN will preempt container_1_0001_01_000002; asking for a checkpoint",
		"Flink job counter (" + testJobID + "): checkpoint 42 completed ",
		" after the preemption warning",
	} {
		assert.Contains(t, msgs, want)
	}
	d := p.details()
	require.Len(t, d, 1)
	assert.Equal(t, "On preemption", d[0].Name)
	assert.Contains(t, d[0].Value, "checkpoint 42 completed")

	// After it completed, the next warning asks again; a failure is told with Flink's reason.
	jm.mu.Lock()
	jm.failure = "Checkpoint was declined (tasks not ready)"
	jm.mu.Unlock()
	p.onPreemption(ctx, []string{"container_1_0001_01_000004"}, "")
	c, _ = jm.counts()
	assert.Equal(t, 2, c)
	ev.mu.Lock()
	failed := ev.evs[len(ev.evs)-1]
	ev.mu.Unlock()
	assert.Equal(t, contract.SeverityWarning, failed.Severity)
	assert.Contains(t, failed.Message, "a checkpoint asked on the preemption warning failed after ")
	assert.Contains(t, failed.Message, "Checkpoint was declined (tasks not ready)")
	assert.Contains(t, p.details()[0].Value, "Checkpoint was declined")

	// A job that is not RUNNING (restarting, say) cannot checkpoint: nothing is asked, and it is told.
	jm.mu.Lock()
	jm.state = "RESTARTING"
	jm.mu.Unlock()
	p.onPreemption(ctx, []string{"container_1_0001_01_000005"}, "")
	c, _ = jm.counts()
	assert.Equal(t, 2, c)
	assert.Contains(t, p.details()[0].Value, "no job is RUNNING, so no checkpoint was taken")
}

// TestIdleGPUNoticeIsNotToldAsPreemption: the AM's own notice before it gives back a TaskManager
// whose GPUs stayed idle asks for the same checkpoint, and its lines say so, not that YARN preempts.
func TestIdleGPUNoticeIsNotToldAsPreemption(t *testing.T) {
	jm := &triggerJobManager{state: "RUNNING", release: make(chan struct{})}
	close(jm.release)
	srv := httptest.NewServer(jm)
	defer srv.Close()
	var ev recorded
	p := newPreempter(&flinkdist.REST{URL: srv.URL}, ev.emit, preemptCheckpoint, "")
	p.onPreemption(context.Background(), []string{"container_1_0001_01_000002"}, contract.NoticeIdleGPURelease)
	c, _ := jm.counts()
	assert.Equal(t, 1, c, "a checkpoint asked")
	msgs := ev.messages()
	assert.Contains(t, msgs, "yarn-am gives back container_1_0001_01_000002 for its idle GPUs; asking for a checkpoint")
	assert.Contains(t, msgs, " after the idle-GPU notice")
	assert.NotContains(t, msgs, "YARN will preempt")
	assert.NotContains(t, msgs, "preemption warning")
}

// TestPreemptionSavepoint: checkpoint-on-preemption = "savepoint" asks for a savepoint in
// state.savepoints.dir, the job left running (cancel-job false), and tells of its path; without a
// directory it asks for nothing and says why.
func TestPreemptionSavepoint(t *testing.T) {
	jm := &triggerJobManager{state: "RUNNING", release: make(chan struct{})}
	close(jm.release)
	srv := httptest.NewServer(jm)
	defer srv.Close()
	var ev recorded
	p := newPreempter(&flinkdist.REST{URL: srv.URL}, ev.emit, preemptSavepoint, "file:///tmp/sp")
	p.onPreemption(context.Background(), []string{"container_1_0001_01_000002"}, "")
	assert.Equal(t, map[string]any{"target-directory": "file:///tmp/sp", "cancel-job": false}, jm.lastBody())
	assert.Contains(t, ev.messages(), "asking for a savepoint in file:///tmp/sp")
	assert.Contains(t, ev.messages(), "savepoint file:/tmp/sp/savepoint-0123-abcd completed ")

	p = newPreempter(&flinkdist.REST{URL: srv.URL}, ev.emit, preemptSavepoint, "")
	p.onPreemption(context.Background(), []string{"container_1_0001_01_000002"}, "")
	_, s := jm.counts()
	assert.Equal(t, 1, s, "no savepoint without a directory")
	assert.Contains(t, p.details()[0].Value, "no savepoint taken, state.savepoints.dir is not set")
}

// StartAM wires the response to preemption warnings unless the job turns it off.
func TestPreemptionIsWiredUnlessOff(t *testing.T) {
	for _, tc := range []struct {
		line  string
		wired bool
	}{{"", true}, {`checkpoint-on-preemption = "checkpoint"`, true}, {`checkpoint-on-preemption = "off"`, false}} {
		p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\n"+tc.line+"\n")
		fakeFlinkHome(t, filepath.Dir(p))
		j, err := jobfile.LoadJob(p)
		require.NoError(t, err)
		t.Chdir(t.TempDir()) // StartAM writes the REST API's TLS into the AM's working directory
		fw, err := flinkFramework{}.StartAM(context.Background(), j, framework.AMStart{Host: "127.0.0.1", TLS: newTestAuthority(t)})
		require.NoError(t, err)
		assert.Equal(t, tc.wired, fw.OnPreemption != nil, tc.line)
	}
}

// check refuses checkpoint-on-preemption = "savepoint" without a savepoint directory, before
// anything is staged, and takes one from [flink.config] or -D.
func TestCheckRefusesAPreemptionSavepointWithoutADirectory(t *testing.T) {
	t.Setenv("YARN_AM_CACHE", t.TempDir())
	p := writeJob(t, strings.Replace(checkJob, "[taskexecutor]", "checkpoint-on-preemption = \"savepoint\"\n[taskexecutor]", 1))
	checkHome(t, filepath.Dir(p), "", "")
	_, err := client.LoadJob(p, client.JobOptions{})
	require.Error(t, err)
	for _, want := range []string{`flink.checkpoint-on-preemption = "savepoint" needs a savepoint directory`, "state.savepoints.dir", `"checkpoint"`} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = client.LoadJob(p, client.JobOptions{Defines: []string{"state.savepoints.dir=file:///tmp/sp"}})
	assert.NoError(t, err)
}
