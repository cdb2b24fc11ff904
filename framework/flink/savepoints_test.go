package flink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
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

// savepointJM is a JobManager's REST API with one job that takes savepoints without stopping it:
// each trigger takes the next of outcomes ("ok", "not-running", or a failure's cause; "ok" when none
// is left). An "ok" savepoint is written as Flink writes one, a directory savepoint-<job>-<n> with
// its _metadata, under the target directory: file:///X on the local disk, hdfs://nn:8020/X under
// root (a fakeFiles' root).
type savepointJM struct {
	mu       sync.Mutex
	state    string
	root     string
	outcomes []string
	n        int
	targets  []string
	pending  map[string]string // trigger → location or "!cause"
}

func (f *savepointJM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := "/jobs/" + testJobID
	switch {
	case r.URL.Path == "/jobs/overview":
		_, _ = w.Write([]byte(`{"jobs":[{"jid":"` + testJobID + `","name":"stream","state":"` + f.state + `","start-time":1}]}`))
	case r.URL.Path == j+"/savepoints" && r.Method == http.MethodPost:
		var body struct {
			Target string `json:"target-directory"`
			Cancel *bool  `json:"cancel-job"`
		}
		if json.NewDecoder(r.Body).Decode(&body) != nil || body.Cancel == nil || *body.Cancel {
			http.Error(w, `{"errors":["want cancel-job false"]}`, http.StatusBadRequest)
			return
		}
		f.targets = append(f.targets, body.Target)
		f.n++
		out := "ok"
		if len(f.outcomes) > 0 {
			out, f.outcomes = f.outcomes[0], f.outcomes[1:]
		}
		trig := fmt.Sprintf("t%d", f.n)
		if f.pending == nil {
			f.pending = map[string]string{}
		}
		switch out {
		case "ok":
			name := fmt.Sprintf("savepoint-012345-%012d", f.n)
			local, loc := "", ""
			if p, ok := strings.CutPrefix(body.Target, "file://"); ok {
				local, loc = filepath.Join(p, name), "file:"+p+"/"+name
			} else if p, ok := strings.CutPrefix(body.Target, "hdfs://nn:8020"); ok {
				local, loc = filepath.Join(f.root, p, name), body.Target+"/"+name
			}
			if os.MkdirAll(local, 0o755) != nil || os.WriteFile(filepath.Join(local, "_metadata"), []byte("metadata"), 0o644) != nil {
				http.Error(w, `{"errors":["cannot write"]}`, http.StatusInternalServerError)
				return
			}
			f.pending[trig] = loc
		case "not-running":
			f.pending[trig] = "!org.apache.flink.runtime.checkpoint.CheckpointException: " + notAllRunning + "."
		default:
			f.pending[trig] = "!" + out
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"request-id":"` + trig + `"}`))
	case strings.HasPrefix(r.URL.Path, j+"/savepoints/"):
		res := f.pending[strings.TrimPrefix(r.URL.Path, j+"/savepoints/")]
		if cause, failed := strings.CutPrefix(res, "!"); failed {
			doc, _ := json.Marshal(map[string]any{"status": map[string]string{"id": "COMPLETED"},
				"operation": map[string]any{"failure-cause": map[string]string{"class": "java.util.concurrent.CompletionException", "stack-trace": "java.util.concurrent.CompletionException: x\nCaused by: " + cause}}})
			_, _ = w.Write(doc)
			return
		}
		_, _ = w.Write([]byte(`{"status":{"id":"COMPLETED"},"operation":{"location":"` + res + `"}}`))
	default:
		http.Error(w, `{"errors":["Not found: `+r.URL.Path+`"]}`, http.StatusNotFound)
	}
}

func (f *savepointJM) set(state string, outcomes ...string) {
	f.mu.Lock()
	f.state, f.outcomes = state, outcomes
	f.mu.Unlock()
}

func (f *savepointJM) triggers() int { f.mu.Lock(); defer f.mu.Unlock(); return f.n }

// scheduledIn are the savepoint directories under dir, by name.
func savepointDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestScheduledSavepointsKeepTheNewest: each tick takes a savepoint of the running job (cancel-job
// false) into state.savepoints.dir and tells it in an event; a job not running, or whose tasks are
// not all running yet, is left to the next tick without a word; a failure is one warning until it
// changes, and the success after it is told. The savepoints the schedule took beyond savepoints-kept
// are deleted, oldest first, never one taken on demand nor one the schedule did not take; what is
// kept is in the framework's state for a later start. A delete that fails is one warning and is
// retried at the next tick.
func TestScheduledSavepointsKeepTheNewest(t *testing.T) {
	root := t.TempDir()
	jm := &savepointJM{state: "CREATED", root: root}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	files := &fakeFiles{root: root}
	local := filepath.Join(root, "local")
	require.NoError(t, os.MkdirAll(filepath.Join(local, "savepoint-user-000000000000"), 0o755)) // a user's own
	var ev recorded
	store := &memStore{}
	rec := newRecorder(store, ev.emit, 1, recovery{})
	clock := time.UnixMilli(1_700_000_000_000)
	s := &savepointSchedule{rest: &flinkdist.REST{URL: srv.URL}, emit: ev.emit, rec: rec, files: files, dir: "file://" + local,
		interval: time.Hour, kept: 2, now: func() time.Time { clock = clock.Add(time.Second); return clock }}
	ctx := context.Background()
	tick := func() { s.take(ctx); s.prune(ctx) }

	tick()
	assert.Zero(t, jm.triggers(), "a job not RUNNING is not asked")
	jm.set("RUNNING", "not-running")
	tick()
	assert.Equal(t, 1, jm.triggers())
	assert.Empty(t, ev.messages(), "a job whose tasks are not all running yet is left to the next tick without a word")
	assert.Empty(t, rec.savepoints())

	jm.set("RUNNING")
	tick()
	tick()
	assert.Len(t, savepointDirs(t, local), 3)
	assert.Contains(t, ev.messages(), "Flink job stream ("+testJobID+"): scheduled savepoint written to file:"+local+"/savepoint-012345-000000000002 in 1s (flink.savepoint-interval = 1h0m0s)")

	// One on demand, in the same directory: never counted nor deleted.
	demand, err := s.onDemand(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, "file:"+local+"/savepoint-012345-000000000004", demand)

	tick() // the third scheduled: the first is deleted
	assert.ElementsMatch(t, []string{"savepoint-user-000000000000", "savepoint-012345-000000000003", "savepoint-012345-000000000004", "savepoint-012345-000000000005"}, savepointDirs(t, local))
	assert.Contains(t, ev.messages(), "scheduled savepoint file:"+local+"/savepoint-012345-000000000002 deleted (flink.savepoints-kept = 2: the newest 2 are kept)")

	jm.set("RUNNING", "java.io.IOException: No space left on device", "java.io.IOException: No space left on device")
	before := len(ev.evs)
	tick()
	tick()
	var warnings []string
	for _, e := range ev.evs[before:] {
		require.Equal(t, contract.SeverityWarning, severityOf(e), e.Message)
		warnings = append(warnings, e.Message)
	}
	require.Len(t, warnings, 1, "one warning for one cause")
	assert.Contains(t, warnings[0], "the scheduled savepoint in file://"+local+" failed after 1s: flink: the savepoint failed: java.io.IOException: No space left on device; tried again every 1h0m0s (flink.savepoint-interval)")
	tick()
	assert.Contains(t, ev.messages(), "scheduled savepoints are written again, after 2 failed")
	assert.ElementsMatch(t, []string{"savepoint-user-000000000000", "savepoint-012345-000000000004", "savepoint-012345-000000000005", "savepoint-012345-000000000008"}, savepointDirs(t, local))

	// What is kept for a later start: the two scheduled ones and the one on demand.
	rec.saveOnce(ctx)
	kept, err := loadRecovery(ctx, store)
	require.NoError(t, err)
	require.NotNil(t, kept)
	var paths []string
	for _, sp := range kept.Savepoints {
		paths = append(paths, fmt.Sprintf("%s %v", filepath.Base(sp.Path), sp.Scheduled))
		assert.Equal(t, testJobID, sp.JobID)
	}
	assert.Equal(t, []string{"savepoint-012345-000000000004 false", "savepoint-012345-000000000005 true", "savepoint-012345-000000000008 true"}, paths)

	// On HDFS (the staging NameNode): a delete that fails is told once and retried.
	s.dir = "hdfs://nn:8020/sp"
	tick()
	tick() // 9 and 10 on HDFS; 5 and 8 deleted
	files.removeErr = errors.New("Permission denied: user=nobody")
	before = len(ev.evs)
	tick()       // 11: 9 is to be deleted
	s.prune(ctx) // again: told once
	var failed []string
	for _, e := range ev.evs[before:] {
		if e.Severity == contract.SeverityWarning {
			failed = append(failed, e.Message)
		}
	}
	require.Len(t, failed, 1, "%q", failed)
	assert.Equal(t, "scheduled savepoint hdfs://nn:8020/sp/savepoint-012345-000000000009, beyond flink.savepoints-kept = 2, could not be deleted: Permission denied: user=nobody; tried again every 1h0m0s", failed[0])
	files.removeErr = nil
	s.prune(ctx)
	assert.Equal(t, []string{"savepoint-012345-000000000010", "savepoint-012345-000000000011"}, savepointDirs(t, filepath.Join(root, "sp")))
	assert.ElementsMatch(t, []string{"savepoint-user-000000000000", "savepoint-012345-000000000004"}, savepointDirs(t, local))
}

// TestSavepointScheduleRunsEveryInterval: the goroutine takes one every interval and stops with ctx;
// a stop pauses it; a schedule without a directory is not started and says why.
func TestSavepointScheduleRunsEveryInterval(t *testing.T) {
	local := t.TempDir()
	jm := &savepointJM{state: "RUNNING"}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	written := make(chan string, 100)
	emit := func(e contract.Event) {
		if strings.Contains(e.Message, "scheduled savepoint written") {
			written <- e.Message
		}
	}
	s := &savepointSchedule{rest: &flinkdist.REST{URL: srv.URL}, emit: emit, rec: newRecorder(nil, emit, 1, recovery{}), dir: "file://" + local,
		interval: 20 * time.Millisecond, kept: 1, now: time.Now}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.run(ctx); close(done) }()
	for range 3 {
		select {
		case <-written:
		case <-time.After(30 * time.Second):
			t.Fatal("no scheduled savepoint")
		}
	}
	cancel()
	<-done
	assert.Len(t, s.rec.savepoints(), 1, "kept = 1")

	// A stop pauses the schedule while it runs, and for good once it succeeded.
	var stops []string
	fw := &framework.AM{OnStop: func(_ context.Context, r framework.StateRequest) (framework.Kept, error) {
		stops = append(stops, r.Dir)
		if r.Dir == "" {
			return framework.Kept{}, errors.New("no directory")
		}
		return framework.Kept{What: keptName, Where: r.Dir + "/savepoint-1"}, nil
	}}
	paused := &savepointSchedule{emit: emit, interval: time.Hour, kept: 1, dir: "file://" + local}
	startSavepoints(context.Background(), fw, paused)
	_, err := fw.OnStop(context.Background(), framework.StateRequest{})
	require.Error(t, err)
	assert.False(t, paused.stopping.Load(), "a failed stop: the schedule goes on")
	_, err = fw.OnStop(context.Background(), framework.StateRequest{Dir: "file:///sp"})
	require.NoError(t, err)
	assert.True(t, paused.stopping.Load())
	assert.Equal(t, []string{"", "file:///sp"}, stops)
	before := jm.triggers()
	paused.rest = &flinkdist.REST{URL: srv.URL}
	paused.take(context.Background())
	assert.Equal(t, before, jm.triggers(), "no savepoint once stopped")

	var ev recorded
	fw = &framework.AM{}
	startSavepoints(context.Background(), fw, &savepointSchedule{emit: ev.emit, interval: time.Hour, kept: 3})
	assert.NotNil(t, fw.OnKeepState, "yarn-am savepoint works without a schedule")
	assert.Equal(t, `flink.savepoint-interval = "1h0m0s": no savepoints are taken: state.savepoints.dir is not set (set it in [flink.config] or with -D)`, ev.messages())
}

// TestOnDemandSavepoint: yarn-am savepoint without --dir uses state.savepoints.dir and without that
// refuses naming both; a job whose tasks are not all running yet is asked again until it takes the
// savepoint; a job that ended is refused; a failure is Flink's cause.
func TestOnDemandSavepoint(t *testing.T) {
	local := t.TempDir()
	jm := &savepointJM{state: "RUNNING"}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	var ev recorded
	s := &savepointSchedule{rest: &flinkdist.REST{URL: srv.URL}, emit: ev.emit, rec: newRecorder(nil, ev.emit, 1, recovery{}), now: time.Now}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := s.onDemand(ctx, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "yarn-am savepoint --dir DIR")
	assert.Contains(t, err.Error(), keySavepointsDir)
	assert.Zero(t, jm.triggers())

	s.dir = "file://" + local
	jm.set("RUNNING", "not-running")
	p, err := s.onDemand(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, 2, jm.triggers(), "asked again")
	assert.Equal(t, "file:"+local+"/savepoint-012345-000000000002", p)
	assert.FileExists(t, filepath.Join(local, "savepoint-012345-000000000002", "_metadata"))
	assert.Equal(t, []keptSavepoint{{Path: p, JobID: testJobID, At: s.rec.savepoints()[0].At}}, s.rec.savepoints())
	assert.Contains(t, ev.messages(), "taking a savepoint in file://"+local+" (yarn-am savepoint); the job runs on")

	other := t.TempDir()
	p, err = s.onDemand(ctx, "file://"+other)
	require.NoError(t, err)
	assert.Equal(t, "file:"+other+"/savepoint-012345-000000000003", p, "--dir over the configured one")

	jm.set("RUNNING", "java.io.IOException: Permission denied")
	_, err = s.onDemand(ctx, "")
	assert.ErrorContains(t, err, "Permission denied")
	jm.set("FINISHED")
	_, err = s.onDemand(ctx, "")
	assert.ErrorContains(t, err, "no running job to take a savepoint of")

	// Only the newest few on demand are recorded; the one dropped is told.
	for range maxOnDemand {
		jm.set("RUNNING")
		_, err := s.onDemand(ctx, "")
		require.NoError(t, err)
	}
	assert.Len(t, s.rec.savepoints(), maxOnDemand)
	assert.Contains(t, ev.messages(), "is no longer recorded for a later start (only the newest 3 taken on demand are kept in it; it is never deleted)")
}

// TestScheduledSavepointDeletesOnlySavepoints: a recorded path that is not named as Flink names a
// savepoint, or that is on a filesystem the AM does not reach, is never deleted: a warning, and it
// is forgotten.
func TestScheduledSavepointDeletesOnlySavepoints(t *testing.T) {
	dir := t.TempDir()
	precious := filepath.Join(dir, "data")
	require.NoError(t, os.MkdirAll(precious, 0o755))
	var ev recorded
	rec := newRecorder(nil, ev.emit, 1, recovery{Savepoints: []keptSavepoint{
		{Path: "file:" + precious, At: 1, Scheduled: true},
		{Path: "s3://bucket/sp/savepoint-1", At: 2, Scheduled: true},
		{Path: "file:" + dir + "/savepoint-0-3", At: 3, Scheduled: true},
	}})
	s := &savepointSchedule{emit: ev.emit, rec: rec, kept: 1, interval: time.Minute}
	s.prune(context.Background())
	assert.DirExists(t, precious)
	assert.Contains(t, ev.messages(), "is not named as Flink names a savepoint")
	assert.Contains(t, ev.messages(), "s3://bucket/sp/savepoint-1 is beyond flink.savepoints-kept = 1 but not deleted by yarn-am: it is on a filesystem the AM does not reach")
	assert.Equal(t, []keptSavepoint{{Path: "file:" + dir + "/savepoint-0-3", At: 3, Scheduled: true}}, rec.savepoints())
}

// TestPickRestoreChoosesTheNewerOfACheckpointAndASavepoint: a later start restores the newest of
// the latest completed checkpoint and the savepoints the AM took, by when their metadata was
// written, and its event says which and why; a savepoint that is gone is passed over.
func TestPickRestoreChoosesTheNewerOfACheckpointAndASavepoint(t *testing.T) {
	ck := t.TempDir()
	sp := t.TempDir()
	writeCheckpoints(t, ck+"/"+testJobID, 8)
	for _, name := range []string{"savepoint-012345-000000000001", "savepoint-012345-000000000002"} {
		require.NoError(t, os.MkdirAll(filepath.Join(sp, name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(sp, name, "_metadata"), []byte("metadata"), 0o644))
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	touch := func(p string, at time.Time) { require.NoError(t, os.Chtimes(filepath.Join(p, "_metadata"), at, at)) }
	touch(ck+"/"+testJobID+"/chk-8", t0)
	touch(sp+"/savepoint-012345-000000000001", t0.Add(-time.Hour))
	touch(sp+"/savepoint-012345-000000000002", t0.Add(time.Minute))
	chk := "file:" + ck + "/" + testJobID + "/chk-8"
	sched := keptSavepoint{Path: "file:" + sp + "/savepoint-012345-000000000001", At: 1, Scheduled: true}
	demand := keptSavepoint{Path: "file:" + sp + "/savepoint-012345-000000000002", At: 2}
	rec := recovery{JobID: testJobID, Checkpoint: 8, Path: chk, Attempt: 1, Savepoints: []keptSavepoint{sched, demand}}
	ctx := context.Background()

	got := pickRestore(ctx, rec, nil)
	assert.True(t, got.Savepoint)
	assert.Equal(t, demand.Path, got.Path)
	assert.Equal(t, "the newest savepoint the AM took, on demand (yarn-am savepoint), newer than checkpoint 8 (written 2026-01-02T03:04:05Z)", got.Why)

	touch(ck+"/"+testJobID+"/chk-8", t0.Add(2*time.Minute))
	got = pickRestore(ctx, rec, nil)
	assert.False(t, got.Savepoint)
	assert.Equal(t, chk, got.Path)
	assert.Contains(t, got.Why, "newer than the latest savepoint the AM took ("+demand.Path+", written 2026-01-02T03:05:05Z)")

	// The newest savepoint gone, no checkpoint kept: the older savepoint.
	require.NoError(t, os.RemoveAll(filepath.Join(sp, "savepoint-012345-000000000002")))
	got = pickRestore(ctx, recovery{Savepoints: rec.Savepoints}, nil)
	assert.True(t, got.At.Equal(t0.Add(-time.Hour)), "%s", got.At)
	got.At = time.Time{}
	assert.Equal(t, restorePoint{Path: sched.Path, Savepoint: true,
		Why: "the newest savepoint the AM took on its schedule (flink.savepoint-interval); 1 newer ones are gone (no checkpoint was kept)"}, got)

	// A later AM attempt: the event and the status say a savepoint.
	touch(ck+"/"+testJobID+"/chk-8", t0.Add(-2*time.Hour))
	data, err := rec.encode()
	require.NoError(t, err)
	conf := flinkdist.NewConfig()
	conf.Set(keyCheckpointInterval, "1s")
	var ev recorded
	from, kept := recoverAtStart(ctx, &flinkSpec{Jar: "job.jar", Config: map[string]string{}}, conf, framework.AMStart{Attempt: 2, State: &memStore{data: data}}, ev.emit)
	assert.Equal(t, sched.Path, from)
	assert.Contains(t, ev.messages(), "AM attempt 2: the Flink job starts from savepoint at "+sched.Path+", the newest savepoint the AM took on its schedule (flink.savepoint-interval); 1 newer ones are gone, newer than checkpoint 8")
	assert.Equal(t, restore{Attempt: 2, Path: from, Savepoint: true}, kept.Restores[0])
	assert.Equal(t, []contract.Detail{{Name: "AM attempt 2", Value: "restored savepoint " + from}}, newRecorder(nil, nil, 2, kept).details())
}

// TestSavepointScheduleKeys: the keys' values, defaults and refusals, and check's refusal of a
// schedule without a savepoint directory, naming both keys and the value.
func TestSavepointScheduleKeys(t *testing.T) {
	load := func(body string) (*jobfile.Job, error) {
		p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\n"+body+"\n")
		fakeFlinkHome(t, filepath.Dir(p))
		return jobfile.LoadJob(p)
	}
	j, err := load("")
	require.NoError(t, err)
	assert.Zero(t, specOf(j).SavepointInterval)
	assert.Equal(t, defaultSavepointsKept, specOf(j).SavepointsKept)
	j, err = load("savepoint-interval = \"30m\"\nsavepoints-kept = 5")
	require.NoError(t, err)
	assert.Equal(t, 30*time.Minute, specOf(j).SavepointInterval)
	assert.Equal(t, 5, specOf(j).SavepointsKept)

	for body, want := range map[string]string{
		`savepoint-interval = "often"`:                      `flink.savepoint-interval = "often": not a duration`,
		`savepoint-interval = "100ms"`:                      `flink.savepoint-interval = "100ms": must be at least 1s`,
		"savepoint-interval = \"1h\"\nsavepoints-kept = 0":  "flink.savepoints-kept",
		"savepoint-interval = \"1h\"\nsavepoints-kept = 21": "flink.savepoints-kept",
		"savepoints-kept = 2":                               "flink.savepoints-kept = 2 without flink.savepoint-interval",
	} {
		_, err := load(body)
		require.Error(t, err, body)
		assert.Contains(t, err.Error(), want, body)
	}
	p := writeJob(t, "[flink]\nhome = \"flink\"\nsavepoint-interval = \"1h\"\n")
	fakeFlinkHome(t, filepath.Dir(p))
	_, err = jobfile.LoadJob(p)
	assert.ErrorContains(t, err, `flink.savepoint-interval = "1h0m0s": a session cluster (no flink.jar)`)

	t.Setenv("YARN_AM_CACHE", t.TempDir())
	p = writeJob(t, strings.Replace(checkJob, "[taskexecutor]", "savepoint-interval = \"10m\"\n[taskexecutor]", 1))
	checkHome(t, filepath.Dir(p), "", "")
	_, err = client.LoadJob(p, client.JobOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `flink.savepoint-interval = "10m0s" needs a savepoint directory: set state.savepoints.dir`)
	_, err = client.LoadJob(p, client.JobOptions{Defines: []string{"state.savepoints.dir=file:///tmp/sp"}})
	assert.NoError(t, err)
}
