//go:build integration

package am_test

import (
	"fmt"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// An elastic gang on the mini cluster (docs/running.md#elastic-gangs): it forms at its minimum while
// another application holds the capacity, grows when that ends, and shrinks when a rank dies.

// gangWatch polls the running AM's status and keeps every gang event it saw (the status carries the
// latest 20 only).
type gangWatch struct {
	t      *testing.T
	id     string
	seen   map[uint64]bool
	events []contract.Event
	last   *contract.Status
}

// until polls until cond holds for the AM's status (with the gang events so far), failing after
// timeout.
func (w *gangWatch) until(timeout time.Duration, what string, cond func(st *contract.Status) bool) *contract.Status {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if st := liveAMStatus(w.t, w.id); st != nil {
			w.last = st
			for _, e := range st.Events {
				if !w.seen[e.ID] && (e.Type == contract.EventGangFormed || e.Type == contract.EventGangRestarted) {
					w.seen[e.ID] = true
					w.events = append(w.events, e)
				}
			}
			if st.Gang != nil && cond(st) {
				return st
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: %s not reached within %s; gang %+v; gang events %v", w.id, what, timeout, w.last.Gang, w.messages())
		}
		time.Sleep(time.Second)
	}
}

func (w *gangWatch) messages() []string {
	var out []string
	for _, e := range w.events {
		out = append(out, string(e.Type)+": "+e.Message)
	}
	return out
}

// TestGangElasticFormsGrowsAndShrinks: a blocker holds 3 of each NodeManager's 4 GPUs, so only 2 of a
// gang of 3 one-GPU ranks (min-instances = 2) fit: at the gang timeout the round forms with 2
// (WORLD_SIZE 2). The blocker is killed: the third is allocated, held, and after the elastic interval
// the gang restarts at 3. Rank 1's worker is SIGKILLed: the gang restarts at once with the 2
// survivors' size, and that round's ranks succeed.
func TestGangElasticFormsGrowsAndShrinks(t *testing.T) {
	e2e.Env(t)
	blocker := e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "elastic-blocker", instances: 2, gpus: 3, command: "./worker --sleep 10m"}))
	e2e.WaitFor(t, blocker, 3*time.Minute, "the blocker's 2 containers running", func(d e2e.StatusDoc) bool {
		return d.AM != nil && d.AM.Counts.Running == 2
	})

	// Rounds 0 and 1 sleep long enough for the test to act on them; later ones end soon.
	command := "case $YARN_AM_ROUND in 0|1) s=90s;; *) s=3s;; esac; exec ./worker --rendezvous --sleep $s"
	id := e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "elastic", instances: 3, gpus: 1, command: command, maxFailures: 2,
		teExtra: "gang = true\nmin-instances = 2\ngang-timeout = \"20s\"\nelastic-interval = \"10s\""}))
	w := &gangWatch{t: t, id: id, seen: map[uint64]bool{}}

	st := w.until(3*time.Minute, "round 0 formed", func(st *contract.Status) bool { return st.Gang.Formed })
	assert.Equal(t, contract.GangStatus{Round: 0, Formed: true, Size: 2, MinInstances: 2, MaxInstances: 3}, *st.Gang,
		"only 2 fit beside the blocker: the round formed at the minimum")
	require.Eventually(t, func() bool { return len(roundRanks(id)[0]) == 2 }, time.Minute, time.Second, "round 0's 2 ranks started")

	r := e2e.YarnAM(t, time.Minute, "kill", blocker)
	require.Equal(t, 0, r.Code, "kill the blocker:\n%s", r)
	st = w.until(3*time.Minute, "round 1 formed at 3", func(st *contract.Status) bool { return st.Gang.Round == 1 && st.Gang.Formed })
	assert.Equal(t, 3, st.Gang.Size)
	require.Eventually(t, func() bool { return len(roundRanks(id)[1]) == 3 }, time.Minute, time.Second, "round 1's 3 ranks started")

	var victim string
	st = w.until(time.Minute, "round 1's ranks", func(st *contract.Status) bool {
		for _, c := range st.Containers {
			if c.Rank != nil && c.Rank.Round == 1 && c.Rank.Rank == 1 && c.State == contract.Running {
				victim = c.ID
			}
		}
		return victim != ""
	})
	pids := e2e.ProcsOfContainer(victim, "worker", "")
	require.Len(t, pids, 1, "the worker of rank 1 (%s)", victim)
	require.NoError(t, syscall.Kill(pids[0], syscall.SIGKILL))
	w.until(time.Minute, "round 2", func(st *contract.Status) bool { return st.Gang.Round == 2 })

	d := e2e.WaitFor(t, id, 4*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	require.Equal(t, "SUCCEEDED", d.Report.FinalStatus, d.Report.Diagnostics)

	msgs := w.messages()
	require.GreaterOrEqual(t, len(msgs), 4, "%v", msgs)
	assert.Regexp(t, `^gang-formed: gang round 0 formed: 2 TaskExecutors .*\(an elastic gang of 2 to 3: WORLD_SIZE 2\)$`, msgs[0])
	assert.Regexp(t, `^gang-restarted: gang restarts as round 1 at 3 TaskExecutors \(grows\): 1 more TaskExecutor\(s\) were allocated while the round ran with 2`, msgs[1])
	assert.Regexp(t, `^gang-formed: gang round 1 formed: 3 TaskExecutors`, msgs[2])
	assert.Regexp(t, `^gang-restarted: gang restarts as round 2 at 2 TaskExecutors \(shrinks\): container_\S+ on \S+ exited with code 137 \(killed by signal 9\)`, msgs[3], "%v", msgs)

	// Every round's ranks are 0..n-1 exactly once, each with WORLD_SIZE n: 2, then 3, then the
	// shrunk round's (2, or 3 when the cluster granted all three at once).
	ranks := roundRanks(id)
	for round, rs := range ranks {
		want := make([]string, len(rs))
		for i := range rs {
			want[i] = fmt.Sprintf("%d of %d", i, len(rs))
		}
		assert.Equal(t, want, rs, "round %d: ranks 0..n-1 exactly once with WORLD_SIZE n", round)
	}
	assert.Len(t, ranks[0], 2)
	assert.Len(t, ranks[1], 3)
	assert.GreaterOrEqual(t, len(ranks[2]), 2)
	assert.Len(t, ranks, 3, "rounds 0, 1 and 2 (round 2's ranks end before a growth): %v", ranks)
}

// roundRanks reads the rank lines of an application's workers: round → "rank of WORLD_SIZE", sorted.
func roundRanks(id string) map[int][]string {
	out := map[int][]string{}
	for _, ls := range stdoutLines(id, rankLine) {
		for _, l := range ls {
			m := rankLine.FindStringSubmatch(l)
			round, _ := strconv.Atoi(m[4]) // the pattern's digits
			out[round] = append(out[round], m[1]+" of "+m[2])
		}
	}
	for _, rs := range out {
		slices.Sort(rs)
	}
	return out
}

// TestGangElasticCheckNeedsItsMinimumOnly: the mini cluster's 8 GPUs can never hold a gang of 10
// one-GPU TaskExecutors at once; check refuses it, but accepts it as an elastic gang of 2 to 10 and
// refuses one of 9 to 10 naming min-instances.
func TestGangElasticCheckNeedsItsMinimumOnly(t *testing.T) {
	e2e.Env(t)
	for min, want := range map[string]string{
		"":                    "taskexecutor.gang = true with taskexecutor.instances = 10",
		"min-instances = 9\n": "taskexecutor.gang = true with taskexecutor.min-instances = 9",
		"min-instances = 2\n": "",
	} {
		job := writeJob(t, jobSpec{name: "elastic-check", instances: 10, gpus: 1, command: "./worker", teExtra: "gang = true\n" + min})
		r := e2e.YarnAM(t, time.Minute, "check", job)
		if want == "" {
			assert.Equal(t, 0, r.Code, "an elastic gang of 2 to 10 fits:\n%s", r)
			continue
		}
		assert.Equal(t, 5, r.Code, "exit 5: does not fit (docs/running.md#exit-codes)\n%s", r)
		assert.Contains(t, r.Stderr, want, r.String())
	}
}
