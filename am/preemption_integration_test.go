//go:build integration && preemption

package am_test

// Preemption on the mini cluster started with PREEMPTION=1 (make test-preemption;
// testdata/minicluster/README.md, "Preemption"): queues batch and urgent, the CapacityScheduler's
// preemption monitor on, max_wait_before_kill 10 s. A PyTorch gang in batch holds every GPU; a job in
// urgent needs two of them. The RM warns the gang's AM, the AM warns both ranks' launchers, the
// launchers write preemption.json and send SIGUSR1, the ranks agree and rank 0 checkpoints to a
// directory on the local file system (the mini cluster is one host), the RM kills a rank, the gang
// restarts as round 1 once urgent is done and resumes from the checkpoint
// (docs/running.md#preemption). The test fails, never skips, without the cluster or the torch
// environment.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// rankEvent is one line of preempt.py's events-rank<R>.log.
type rankEvent struct {
	at    time.Time
	round string
	what  string
	step  int
	rest  string
}

var rankEventRe = regexp.MustCompile(`^(\d+\.\d+) round=(\S+) (\S+)(?: step=(\d+))?(.*)$`)

func rankEvents(t *testing.T, dir string, rank int) []rankEvent {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "events-rank"+strconv.Itoa(rank)+".log"))
	require.NoError(t, err, "rank %d wrote no events", rank)
	var out []rankEvent
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		m := rankEventRe.FindStringSubmatch(l)
		require.NotNil(t, m, "rank %d: %q", rank, l)
		sec, _ := strconv.ParseFloat(m[1], 64)
		step, _ := strconv.Atoi(m[4])
		out = append(out, rankEvent{at: time.Unix(0, int64(sec*1e9)), round: m[2], what: m[3], step: step, rest: strings.TrimSpace(m[5])})
	}
	return out
}

func find(evs []rankEvent, round, what string) *rankEvent {
	for i := range evs {
		if evs[i].round == round && evs[i].what == what {
			return &evs[i]
		}
	}
	return nil
}

// inQueue puts a job file's application into queue (a top-level key, before the first table).
func inQueue(t *testing.T, job, queue string) {
	t.Helper()
	data, err := os.ReadFile(job)
	require.NoError(t, err)
	body := strings.Replace(string(data), "\n", "\nqueue = \""+queue+"\"\n", 1)
	require.NoError(t, os.WriteFile(job, []byte(body), 0o644))
}

func TestPreemptionWarnsCheckpointsAndResumesAPyTorchGang(t *testing.T) {
	e2e.Env(t)
	require.Equal(t, "1", os.Getenv("YARN_AM_PREEMPTION"), "YARN_AM_PREEMPTION is not 1: start the cluster with make test-preemption (PREEMPTION=1)")
	py := torchPython(t)
	ckpt := t.TempDir()
	const afterResume = 10

	// The gang: 2 ranks x 4 GPUs (every GPU of the two NodeManagers) and 7 GB each, in batch.
	batch := torchJob(t, "preempt-batch", 2, 4, "7168", py+" preempt.py "+ckpt+" "+strconv.Itoa(afterResume))
	data, err := os.ReadFile(batch)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(batch, []byte(strings.Replace(string(data), "testdata/torch/ddp.py", "testdata/torch/preempt.py", 1)), 0o644))
	inQueue(t, batch, "batch")
	id := e2e.SubmitDetached(t, batch)
	require.Eventually(t, func() bool {
		a, err := os.ReadFile(filepath.Join(ckpt, "events-rank0.log"))
		return err == nil && strings.Contains(string(a), " progress step=20")
	}, 4*time.Minute, time.Second, "round 0 trained 20 steps\n%s", e2e.ContainerLogs(id))

	// The competitor: one container of 4 GB and 2 GPUs in urgent, which only a preemption can free.
	urgent := writeJob(t, jobSpec{name: "preempt-urgent", instances: 1, gpus: 2, memory: "4096", command: "sleep 15"})
	inQueue(t, urgent, "urgent")
	uid := e2e.SubmitDetached(t, urgent)
	submitted := time.Now()

	events := map[uint64]contract.Event{}
	var last e2e.AMEvents
	deadline := time.Now().Add(8 * time.Minute)
	for {
		r := e2e.YarnAM(t, time.Minute, "status", id, "--json")
		require.Equal(t, 0, r.Code, "status:\n%s", r)
		last = e2e.AMEvents{}
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &last), r.Stdout)
		if last.AM != nil {
			for _, e := range last.AM.Events {
				events[e.ID] = e
			}
		}
		if e2e.IsEnded(last.Report.State) {
			break
		}
		require.True(t, time.Now().Before(deadline), "%s did not end within 8 minutes; events %v\n%s", id, events, e2e.ContainerLogs(id))
		time.Sleep(500 * time.Millisecond)
	}
	require.Equal(t, "SUCCEEDED", last.Report.FinalStatus, "%s\n%s", last.Report.Diagnostics, e2e.ContainerLogs(id))
	u := e2e.WaitFor(t, uid, 3*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	assert.Equal(t, "SUCCEEDED", u.Report.FinalStatus, "the urgent job ran: %s", u.Report.Diagnostics)

	// The AM's side: both ranks of round 0 warned once, with the RM's 10 s, then one of them
	// preempted, then the gang restarted.
	var warnings, preempted []contract.Event
	restarted := false
	for _, e := range events {
		switch {
		case e.Type == contract.EventPreemptionWarning:
			warnings = append(warnings, e)
		case e.Type == contract.EventCompleted && e.ExitClass == contract.ExitPreempted:
			preempted = append(preempted, e)
		case e.Type == contract.EventGangRestarted:
			restarted = true
		}
	}
	require.Len(t, warnings, 2, "both ranks warned, once each: %v", events)
	require.NotEmpty(t, preempted, "a rank was preempted: %v", events)
	assert.True(t, restarted, "the gang restarted")
	warnedAt := map[string]time.Time{}
	for _, w := range warnings {
		warnedAt[w.Container] = w.Time
		wait := w.Deadline.Sub(w.Time)
		assert.InDelta(t, 10, wait.Seconds(), 1, "the deadline is the RM's max_wait_before_kill from the site files (not the 15 s default): %v", w)
	}
	for _, p := range preempted {
		w, ok := warnedAt[p.Container]
		require.True(t, ok, "the preempted container %s was warned first", p.Container)
		require.True(t, w.Before(p.Time))
		t.Logf("lead time, AM: warning at %s, the kill reported at %s: %s (max_wait_before_kill 10 s; the AM hears of the kill at its next heartbeat)",
			w.Format(time.RFC3339Nano), p.Time.Format(time.RFC3339Nano), p.Time.Sub(w).Round(time.Millisecond))
	}
	t.Logf("from the urgent job's submit to the first warning: %s", minTime(warnings).Sub(submitted).Round(time.Millisecond))

	// The workers' side.
	r0, r1 := rankEvents(t, ckpt, 0), rankEvents(t, ckpt, 1)
	cp := find(r0, "0", "checkpoint")
	require.NotNil(t, cp, "rank 0 checkpointed in round 0: %v", r0)
	assert.Greater(t, cp.step, 20, "the checkpoint is of the training so far")
	for rank, evs := range [][]rankEvent{r0, r1} {
		sig := find(evs, "0", "signal")
		require.NotNil(t, sig, "rank %d got SIGUSR1 in round 0: %v", rank, evs)
		require.NotNil(t, find(evs, "0", "warned"), "rank %d agreed on the warning: %v", rank, evs)
		container := strings.TrimPrefix(strings.Fields(sig.rest)[0], "container=")
		_, warned := warnedAt[container]
		assert.True(t, warned, "rank %d's notice file names its container %s, which the AM warned", rank, container)
		for _, p := range preempted {
			if p.Container != container {
				continue
			}
			assert.True(t, sig.at.Before(p.Time), "rank %d had the signal before its kill", rank)
			assert.True(t, cp.at.Before(p.Time), "the checkpoint was written before the kill")
			if term := find(evs, "0", "sigterm"); term != nil {
				assert.True(t, sig.at.Before(term.at), "rank %d had the signal before its SIGTERM", rank)
				t.Logf("lead time, worker: rank %d (preempted %s) signalled at %s, SIGTERM at %s: %s", rank, container,
					sig.at.Format(time.RFC3339Nano), term.at.Format(time.RFC3339Nano), term.at.Sub(sig.at).Round(time.Millisecond))
			}
			t.Logf("rank %d: the AM's warning to the worker's signal handler: %s; checkpoint at step %d %s after the signal",
				rank, sig.at.Sub(warnedAt[container]).Round(time.Millisecond), cp.step, cp.at.Sub(sig.at).Round(time.Millisecond))
		}
		res := find(evs, "1", "resumed")
		require.NotNil(t, res, "rank %d resumed in round 1: %v", rank, evs)
		assert.Equal(t, cp.step, res.step, "rank %d resumed from the checkpoint's step", rank)
		done := find(evs, "1", "done")
		require.NotNil(t, done, "rank %d finished round 1: %v", rank, evs)
		assert.Equal(t, cp.step+afterResume, done.step, "rank %d: the step counter went on from the checkpoint", rank)
	}
}

func minTime(evs []contract.Event) time.Time {
	m := evs[0].Time
	for _, e := range evs {
		if e.Time.Before(m) {
			m = e.Time
		}
	}
	return m
}
