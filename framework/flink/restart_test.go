package flink

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// A lost JobManager is started again in place (docs/flink.md#a-jobmanager-restarted-in-place): from
// the newest completed checkpoint that exists, on the ports the first JVM bound, with an event that
// says so; at most max restarts within the window, the next loss ends the attempt with an error
// event naming the key; nothing before the JobManager's ports were published (a JobManager that
// never started is not restarted) and nothing for an exit that is the job's own failure.
func TestLostJobManagerRestartedInPlace(t *testing.T) {
	dir := t.TempDir()
	ckpts := filepath.Join(dir, "job1")
	writeCheckpoints(t, ckpts, 3, 4)
	var events []contract.Event
	now := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	jm := newJobManager("127.0.0.1")
	rec := newRecorder(nil, func(contract.Event) {}, 1, recovery{})
	r := &restarter{max: 2, window: time.Hour, jm: jm, rec: rec, spec: &flinkSpec{Config: map[string]string{}},
		emit: func(e contract.Event) { events = append(events, e) }, now: func() time.Time { return now }}
	ctx := context.Background()

	_, ok := r.restart(ctx, exitJobManagerLost)
	assert.False(t, ok, "its ports were never published: the JobManager did not start, nothing to restart")
	jm.set(boundAddrs{RPC: "127.0.0.1:41001", REST: "127.0.0.1:41002"})
	_, ok = r.restart(ctx, 1)
	assert.False(t, ok, "exit 1 is the job's own failure (or a start that failed), not a lost JobManager")
	assert.Empty(t, events)
	assert.Nil(t, r.details())

	// No checkpoint seen yet: started again from what the job was submitted with.
	env, ok := r.restart(ctx, exitJobManagerLost)
	require.True(t, ok)
	assert.Equal(t, map[string]string{envJobManagerPorts: "41001,41002", envRecover: ""}, env)
	require.Len(t, events, 1)
	assert.Equal(t, contract.SeverityWarning, events[0].Severity)
	assert.Equal(t, "the JobManager was lost (its JVM ended before its job did) while the AM runs: started again in place (restart 1 of at most 2 within 1h0m0s), with no checkpoint to start from: it starts from nothing; its TaskManagers register again at RPC 127.0.0.1:41001", events[0].Message)

	// Checkpoint 4 seen: the next restart starts from it. A driver killed by a signal is lost too.
	rec.saw("job1", &flinkdist.Checkpoint{ID: 4, ExternalPath: "file:" + filepath.Join(ckpts, "chk-4")})
	now = now.Add(10 * time.Minute)
	env, ok = r.restart(ctx, 128+9)
	require.True(t, ok)
	assert.Equal(t, "file:"+filepath.Join(ckpts, "chk-4"), env[envRecover])
	assert.Contains(t, events[1].Message, "the JobManager was lost (its driver was killed by signal 9) while the AM runs: started again in place (restart 2 of at most 2 within 1h0m0s), from checkpoint 4 at file:")
	assert.Equal(t, []contract.Detail{{Name: "JobManager restarts", Value: "2 (last at 04:10:00, from checkpoint 4 at file:" + filepath.Join(ckpts, "chk-4") + ", the latest completed one attempt 1 saw of job job1)"}}, r.details())

	// A third loss within the hour: the attempt ends, and the event names the key.
	now = now.Add(10 * time.Minute)
	_, ok = r.restart(ctx, exitJobManagerLost)
	assert.False(t, ok)
	assert.Equal(t, contract.SeverityError, events[2].Severity)
	assert.Equal(t, "the JobManager was lost (its JVM ended before its job did) after 2 restarts within 1h0m0s (flink.jobmanager-restarts = 2): not started again; the attempt ends", events[2].Message)

	// An hour after the first restart it has left the window: one more is allowed.
	now = now.Add(45 * time.Minute)
	_, ok = r.restart(ctx, exitJobManagerLost)
	assert.True(t, ok, "the window slides")
}

func TestPinnedPorts(t *testing.T) {
	rpc, rest, ok, err := pinnedPorts("41001,41002")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, [2]string{"41001", "41002"}, [2]string{rpc, rest})
	_, _, ok, err = pinnedPorts("")
	assert.False(t, ok)
	assert.NoError(t, err)
	for _, bad := range []string{"41001", "0,1", "a,b", "41001,70000", "1,2,3"} {
		_, _, _, err := pinnedPorts(bad)
		assert.ErrorContains(t, err, envJobManagerPorts+` = "`+bad+`": want the RPC and REST ports as "RPC,REST"`)
	}
}
