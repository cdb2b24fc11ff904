package flink

import (
	"context"
	"errors"
	"net/http/httptest"
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

// memStore is a framework.StateStore in memory; fail makes Save fail.
type memStore struct {
	mu    sync.Mutex
	data  []byte
	saves int
	fail  error
}

func (m *memStore) Load(context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.data, nil
}

func (m *memStore) Save(_ context.Context, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.data = append([]byte(nil), data...)
	m.saves++
	return nil
}

func (m *memStore) saved() int { m.mu.Lock(); defer m.mu.Unlock(); return m.saves }

// TestRecoveryAcrossAttempts: attempt 1's watch keeps every newer completed checkpoint of the job
// (not one kept in the JobManager's memory); attempt 2 starts from the latest kept, says so in an
// event and shows it in the details; attempt 3 of a job whose record has no checkpoint starts from
// nothing with a warning that says the state was not kept and why.
func TestRecoveryAcrossAttempts(t *testing.T) {
	store := &memStore{}
	spec := &flinkSpec{Jar: "job.jar", Config: map[string]string{}}
	ck := t.TempDir()
	conf := flinkdist.NewConfig()
	conf.Set(keyCheckpointInterval, "1s")
	conf.Set(keyCheckpointDir, "file://"+ck)
	writeCheckpoints(t, ck+"/"+testJobID, 5, 6)

	// Attempt 1: no earlier state; the watch tells the recorder of each read.
	var ev1 recorded
	from, kept := recoverAtStart(context.Background(), spec, conf, framework.AMStart{Attempt: 1, State: store}, ev1.emit)
	assert.Empty(t, from)
	jm := &fakeJobManager{state: "RUNNING", parallelism: 1, checkpoints: `{"counts":{"completed":1},"latest":{"completed":{"id":1,"external_path":"<checkpoint-not-externally-addressable>"}}}`}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	rec := newRecorder(store, ev1.emit, 1, kept)
	w := &jobWatch{rest: &flinkdist.REST{URL: srv.URL}, emit: ev1.emit, now: time.Now, recorder: rec}
	read := func() {
		t.Helper()
		_, err := w.details(context.Background())
		require.NoError(t, err)
		rec.saveOnce(context.Background())
	}
	read()
	assert.Zero(t, store.saved(), "a checkpoint in the JobManager's memory is nothing to restore from")
	jm.checkpoints = `{"counts":{"completed":5},"latest":{"completed":{"id":5,"external_path":"file:` + ck + `/` + testJobID + `/chk-5"}}}`
	read()
	read() // the same checkpoint: not saved again
	assert.Equal(t, 1, store.saved())
	jm.checkpoints = strings.NewReplacer(`"id":5`, `"id":6`, "chk-5", "chk-6").Replace(jm.checkpoints)
	read()
	assert.Equal(t, 2, store.saved())
	assert.Equal(t, 1, strings.Count(ev1.messages(), "is kept in the staging directory for a later AM attempt"), "the first save is told, once:\n%s", ev1.messages())

	// Attempt 2 starts from checkpoint 6.
	var ev2 recorded
	from, kept = recoverAtStart(context.Background(), spec, conf, framework.AMStart{Attempt: 2, State: store}, ev2.emit)
	assert.Equal(t, "file:"+ck+"/"+testJobID+"/chk-6", from)
	assert.Contains(t, ev2.messages(), "AM attempt 2: the Flink job starts from checkpoint 6 at file:"+ck+"/"+testJobID+"/chk-6, the latest completed one attempt 1 saw")
	assert.Equal(t, contract.SeverityInfo, severityOf(ev2.evs[0]))
	d := newRecorder(store, ev2.emit, 2, kept).details()
	require.Len(t, d, 1)
	assert.Equal(t, contract.Detail{Name: "AM attempt 2", Value: "restored checkpoint 6, file:" + ck + "/" + testJobID + "/chk-6"}, d[0])

	// The restores are kept too: attempt 3 of a store with no checkpoint (a record that lost it)
	// starts from nothing and shows both.
	var ev3 recorded
	noCk := &memStore{data: []byte(`{"v":1,"restores":[{"attempt":2,"checkpoint":6,"path":"file:/x"}]}`)}
	from, kept = recoverAtStart(context.Background(), spec, conf, framework.AMStart{Attempt: 3, State: noCk}, ev3.emit)
	assert.Empty(t, from)
	assert.Equal(t, contract.SeverityWarning, severityOf(ev3.evs[0]))
	assert.Contains(t, ev3.messages(), "AM attempt 3: the Flink job's state was not kept: the earlier attempt saw no completed checkpoint yet; the job starts from nothing")
	d = newRecorder(noCk, ev3.emit, 3, kept).details()
	require.Len(t, d, 2)
	assert.Equal(t, "started from nothing (no checkpoint kept)", d[1].Value)
}

func severityOf(e contract.Event) string {
	if e.Severity == "" {
		return contract.SeverityInfo
	}
	return e.Severity
}

// TestRecoveryWithoutCheckpointing: a job that does not checkpoint (the second case of the brief:
// the event says the state was not kept, and why), one whose checkpoints stay in the JobManager's
// memory, a session cluster, and an unreadable record.
func TestRecoveryWithoutCheckpointing(t *testing.T) {
	app := &flinkSpec{Jar: "job.jar", Config: map[string]string{}}
	for _, tc := range []struct {
		name  string
		spec  *flinkSpec
		conf  map[string]string
		store framework.StateStore
		want  string
	}{
		{"checkpointing off", app, nil, &memStore{}, "the Flink job's state was not kept: the earlier attempt saw no completed checkpoint (execution.checkpointing.interval is not set: checkpointing is off, unless the job turns it on itself); the job starts from nothing"},
		{"no checkpoint directory", app, map[string]string{keyCheckpointInterval: "10s"}, &memStore{}, "(execution.checkpointing.dir is not set: checkpoints are kept in the JobManager's memory)"},
		{"submitted with a savepoint", &flinkSpec{Jar: "job.jar", Config: map[string]string{keyRestore: "file:/sp/savepoint-1"}}, nil, &memStore{}, "the job starts again from the savepoint it was submitted with (file:/sp/savepoint-1)"},
		{"session cluster", &flinkSpec{Config: map[string]string{}}, nil, &memStore{}, "the jobs submitted to the earlier attempt's are not restored"},
		{"unreadable record", app, nil, &memStore{data: []byte("{")}, "the earlier attempt's record could not be read (the kept Flink state is not readable"},
		{"record too large", app, nil, &memStore{data: make([]byte, framework.MaxState+1)}, "at most 8192 are read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := flinkdist.NewConfig()
			for k, v := range tc.conf {
				conf.Set(k, v)
			}
			var ev recorded
			from, _ := recoverAtStart(context.Background(), tc.spec, conf, framework.AMStart{Attempt: 2, State: tc.store}, ev.emit)
			assert.Empty(t, from)
			require.Len(t, ev.evs, 1)
			assert.Equal(t, contract.SeverityWarning, ev.evs[0].Severity)
			assert.Equal(t, eventJob, ev.evs[0].Type)
			assert.Contains(t, ev.evs[0].Message, tc.want)
		})
	}
}

// TestRecorderSaveFailureIsToldOnce: a failed save is a warning once, until one succeeds again.
func TestRecorderSaveFailureIsToldOnce(t *testing.T) {
	store := &memStore{fail: errors.New("NameNode in safe mode")}
	var ev recorded
	r := newRecorder(store, ev.emit, 1, recovery{})
	r.savedOnce = true
	for id := int64(1); id <= 3; id++ {
		r.saw(testJobID, &flinkdist.Checkpoint{ID: id, ExternalPath: "file:/ck/chk"})
		r.saveOnce(context.Background())
	}
	require.Len(t, ev.evs, 1, ev.messages())
	assert.Contains(t, ev.evs[0].Message, "checkpoint 1 could not be kept for a later AM attempt (NameNode in safe mode)")
	store.mu.Lock()
	store.fail = nil
	store.mu.Unlock()
	r.saw(testJobID, &flinkdist.Checkpoint{ID: 4, ExternalPath: "file:/ck/chk"})
	r.saveOnce(context.Background())
	assert.Contains(t, ev.messages(), "checkpoint 4 is kept for a later AM attempt again")
}

// TestCheckpointDefaults: a checkpointing job's JobManager keeps its checkpoints when stopped and
// retains enough of them for the AM's lag; a key the configuration sets is left alone, and a job that
// does not checkpoint gets neither.
func TestCheckpointDefaults(t *testing.T) {
	get := func(c *flinkdist.Config, k string) string { v, _ := c.Get(k); return v }
	var out strings.Builder
	c := flinkdist.NewConfig()
	c.Set(keyCheckpointInterval, "1 s")
	checkpointDefaults(c, &out)
	assert.Equal(t, retainOnCancellation, get(c, keyCheckpointRetention))
	assert.Equal(t, "7", get(c, keyCheckpointsRetained))
	assert.Contains(t, out.String(), "RETAIN_ON_CANCELLATION (default of yarn-am")

	c = flinkdist.NewConfig()
	c.Set(keyCheckpointInterval, "1min")
	c.Set(keyCheckpointRetention, "DELETE_ON_CANCELLATION")
	c.Set(keyCheckpointsRetainedOld, "3")
	checkpointDefaults(c, &out)
	assert.Equal(t, "DELETE_ON_CANCELLATION", get(c, keyCheckpointRetention))
	_, set := c.Get(keyCheckpointsRetained)
	assert.False(t, set, "the deprecated key the user set stands")
	assert.Equal(t, "3", get(c, keyCheckpointsRetainedOld), "more than the AM needs (2 for a checkpoint a minute)")

	// The job keeps one checkpoint (its own keys): raised to what the AM's reads need, under the
	// names it set, and said.
	out.Reset()
	c = flinkdist.NewConfig()
	c.Set(keyCheckpointInterval, "1s")
	c.Set(keyCheckpointRetention, retainOnCancellation)
	c.Set(keyCheckpointsRetained, "1")
	c.Set(keyCheckpointsRetainedOld, "1")
	checkpointDefaults(c, &out)
	assert.Equal(t, "7", get(c, keyCheckpointsRetained))
	assert.Equal(t, "7", get(c, keyCheckpointsRetainedOld))
	assert.Contains(t, out.String(), "execution.checkpointing.num-retained: 1 raised to 7 (for a checkpoint every 1s")
	c.Set(keyCheckpointsRetained, "9")
	out.Reset()
	checkpointDefaults(c, &out)
	assert.Equal(t, "9", get(c, keyCheckpointsRetained), "more than yarn-am's default stands")
	assert.Empty(t, out.String())

	c = flinkdist.NewConfig()
	checkpointDefaults(c, &out)
	assert.Empty(t, c.Keys())

	assert.Equal(t, 2, retained(time.Minute))
	assert.Equal(t, 10, retained(100*time.Millisecond))

	c = flinkdist.NewConfig()
	c.Set(keyStateRecoveryPath, "file:/old")
	applyRecovery(c, "file:/ck/chk-6", &out)
	assert.Equal(t, "file:/ck/chk-6", get(c, keyRestore))
	assert.Equal(t, "file:/ck/chk-6", get(c, keyStateRecoveryPath), "Flink reads the current key first")
}

// TestWatchReadsNoCheckpointsWhileInitializing: the watch does not read /checkpoints of a job still
// INITIALIZING (its JobManager would log an error for each read), and reads them once it runs.
func TestWatchReadsNoCheckpointsWhileInitializing(t *testing.T) {
	jm := &fakeJobManager{state: "INITIALIZING", parallelism: 1, checkpoints: `{"counts":{"completed":0}}`}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	var ev recorded
	w := &jobWatch{rest: &flinkdist.REST{URL: srv.URL}, emit: ev.emit, now: time.Now}
	_, err := w.details(context.Background())
	require.NoError(t, err)
	_, err = w.details(context.Background())
	require.NoError(t, err)
	assert.Zero(t, jm.cpReads, "no checkpoint read while the job initialises")
	jm.mu.Lock()
	jm.state = "RUNNING"
	jm.mu.Unlock()
	_, err = w.details(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, jm.cpReads, "read once the job runs")
}
