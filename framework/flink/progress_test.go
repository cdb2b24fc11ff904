package flink

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// A job that stops making progress is noticed (docs/flink.md#a-job-that-stops-making-progress): no
// checkpoint completes within the timeout, or it restarts loopRestarts times without one. One
// warning event per stall, the status's Progress line, an event when it progresses again; with a
// restart, the JobManager is ended once per stalled job, and a new job (the restarted one) is
// watched afresh.
func TestJobThatMakesNoProgressIsNoticed(t *testing.T) {
	var events []contract.Event
	restarted := 0
	p := &progress{timeout: 10 * time.Minute, checkpointing: true, emit: func(e contract.Event) { events = append(events, e) },
		restart: func() error { restarted++; return nil }}
	t0 := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	job := flinkdist.Job{ID: "j1", Name: "counter", State: "RUNNING"}

	assert.Equal(t, []contract.Detail{{Name: "Progress", Value: "last checkpoint 0s ago (stalled after 10m0s)"}}, p.observe(t0, job, 0))
	p.observe(t0.Add(time.Minute), job, 4)
	assert.Equal(t, []contract.Detail{{Name: "Progress", Value: "last checkpoint 9m0s ago (stalled after 10m0s)"}}, p.observe(t0.Add(10*time.Minute), job, 4))
	assert.Empty(t, events)

	d := p.observe(t0.Add(11*time.Minute), job, 4)
	assert.Equal(t, []contract.Detail{{Name: "Progress", Value: "stalled: no checkpoint completed for 10m0s (the last: 4; flink.progress-timeout = 10m0s)"}}, d)
	require.Len(t, events, 1)
	assert.Equal(t, contract.SeverityWarning, events[0].Severity)
	assert.Equal(t, "Flink job counter (j1) makes no progress: no checkpoint completed for 10m0s (the last: 4; flink.progress-timeout = 10m0s); its JobManager is ended and started again in place from the last completed checkpoint (flink.progress-restart)", events[0].Message)
	assert.Equal(t, 1, restarted)
	p.observe(t0.Add(12*time.Minute), job, 4)
	assert.Len(t, events, 1, "told once")
	assert.Equal(t, 1, restarted, "ended once per stalled job")

	p.observe(t0.Add(13*time.Minute), job, 5)
	require.Len(t, events, 2)
	assert.Equal(t, "Flink job counter (j1) progresses again: checkpoint 5 completed", events[1].Message)

	// A job restarting in a loop, checkpoints or not: the third entry into RESTARTING without a
	// checkpoint completing.
	loop := &progress{timeout: 10 * time.Minute, emit: func(e contract.Event) { events = append(events, e) }}
	j2 := flinkdist.Job{ID: "j2", Name: "fails", State: "RUNNING"}
	now := t0
	for i := 0; i < 3; i++ {
		loop.observe(now, j2, 0)
		j2.State = "RESTARTING"
		now = now.Add(30 * time.Second)
		d = loop.observe(now, j2, 0)
		j2.State = "RUNNING"
		now = now.Add(30 * time.Second)
	}
	require.Len(t, events, 3)
	assert.Equal(t, "Flink job fails (j2) makes no progress: restarted 3 times within 2m30s without a checkpoint completing (none yet); flink.progress-restart = true would restart it from the last completed checkpoint", events[2].Message)
	assert.Equal(t, "stalled: restarted 3 times within 2m30s without a checkpoint completing (none yet)", d[0].Value)

	// A new job (the JobManager restarted) is watched afresh; an ended job is not stalled; off is off.
	assert.Equal(t, "last checkpoint 0s ago (stalled after 10m0s)", p.observe(t0.Add(20*time.Minute), flinkdist.Job{ID: "j3", Name: "counter", State: "RUNNING"}, 0)[0].Value)
	assert.Nil(t, p.observe(t0.Add(40*time.Minute), flinkdist.Job{ID: "j3", Name: "counter", State: "FINISHED"}, 0))
	assert.Nil(t, (&progress{}).observe(t0, job, 0))
	var nilP *progress
	assert.Nil(t, nilP.observe(t0, job, 0))
}

func TestProgressTimeoutDefaults(t *testing.T) {
	assert.Equal(t, 10*time.Minute, progressTimeout(&flinkSpec{}, time.Second), "at least 10 minutes")
	assert.Equal(t, 50*time.Minute, progressTimeout(&flinkSpec{}, 10*time.Minute), "5 checkpoint intervals")
	assert.Equal(t, 3*time.Minute, progressTimeout(&flinkSpec{ProgressTimeout: 3 * time.Minute}, time.Second), "the job's own")
	assert.Zero(t, progressTimeout(&flinkSpec{ProgressOff: true}, time.Second))

	for body, want := range map[string]string{
		"progress-timeout = \"5s\"":                             `flink.progress-timeout = "5s": want a Go duration of at least 1m0s ("30m") or "off"`,
		"progress-timeout = \"soon\"":                           `flink.progress-timeout = "soon": want a Go duration`,
		"progress-restart = \"yes\"":                            `flink.progress-restart = "yes": want true or false`,
		"progress-restart = true\njobmanager-restarts = 0":      `flink.progress-restart = true with flink.jobmanager-restarts = 0`,
		"progress-restart = true\nprogress-timeout = \"off\"":   `flink.progress-restart = true with flink.progress-timeout = "off": nothing would be noticed`,
		"progress-restart = true\nprogress-timeout = \"OFF\"\n": `nothing would be noticed`,
	} {
		p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\n"+body+"\n")
		fakeFlinkHome(t, filepath.Dir(p))
		_, err := jobfile.LoadJob(p)
		var je *jobfile.JobError
		require.True(t, errors.As(err, &je), "%q: %v", body, err)
		assert.Contains(t, err.Error(), want, body)
	}
	p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\nprogress-timeout = \"30m\"\nprogress-restart = true\n")
	fakeFlinkHome(t, filepath.Dir(p))
	j, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	assert.Equal(t, 30*time.Minute, specOf(j).ProgressTimeout)
	assert.True(t, specOf(j).ProgressRestart)
}

// The AM ends the JobManager's JVM named in the bound file, and only a java process.
func TestEndJobManagerEndsOnlyAJVM(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, boundFile)
	sleep := exec.Command("sleep", "30")
	require.NoError(t, sleep.Start())
	t.Cleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })
	require.NoError(t, writeBound(path, boundAddrs{RPC: "127.0.0.1:1", REST: "127.0.0.1:2", PID: sleep.Process.Pid}))
	assert.ErrorContains(t, endJobManager(path), "is not the JobManager's JVM (it runs sleep)")
	require.NoError(t, writeBound(path, boundAddrs{RPC: "127.0.0.1:1", REST: "127.0.0.1:2"}))
	assert.ErrorContains(t, endJobManager(path), "names no JVM")
	require.NoError(t, os.Remove(path))
	assert.ErrorIs(t, endJobManager(path), os.ErrNotExist)

	java := filepath.Join(dir, "java")
	require.NoError(t, os.Symlink("/bin/sleep", java))
	jvm := exec.Command(java, "30")
	require.NoError(t, jvm.Start())
	require.NoError(t, writeBound(path, boundAddrs{RPC: "127.0.0.1:1", REST: "127.0.0.1:2", PID: jvm.Process.Pid}))
	require.NoError(t, endJobManager(path))
	err := jvm.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "signal: killed", ee.Error())
}
