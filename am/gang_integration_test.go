//go:build integration

package am_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// Gang mode on the mini cluster: all ranks at once, a rendezvous for every rank, and a round that
// restarts when a rank dies.

// liveAMStatus reads the running AM's own status document.
func liveAMStatus(t *testing.T, id string) *contract.Status {
	t.Helper()
	rm, err := e2e.RMClient()
	require.NoError(t, err)
	defer rm.Close()
	appID, err := yarnrpc.ParseApplicationID(id)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := rm.GetApplicationReport(ctx, appID)
	if err != nil || client.AMURL(r) == "" {
		return nil
	}
	st, _, err := client.FetchAMStatus(ctx, client.AMURL(r))
	if err != nil {
		return nil
	}
	return st
}

// stdoutLines returns every TaskExecutor's stdout lines matching re, by container.
func stdoutLines(id string, re *regexp.Regexp) map[string][]string {
	out := map[string][]string{}
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "*", "stdout"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			for _, l := range strings.Split(string(data), "\n") {
				if re.MatchString(l) {
					c := filepath.Base(filepath.Dir(f))
					out[c] = append(out[c], l)
				}
			}
		}
	}
	return out
}

var rankLine = regexp.MustCompile(`^worker: rank (\d+) of (\d+) local (\d+) round (\d+) master (\S+)$`)

// TestGangFourRanksMeetAtRankZero: 4 ranks x 1 GPU over the 2 NodeManagers (3 GiB each: at most two
// fit a node); rank 0 listens on MASTER_ADDR:MASTER_PORT and checks that ranks 1..3 each connect
// exactly once.
func TestGangFourRanksMeetAtRankZero(t *testing.T) {
	e2e.Env(t)
	id := e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "gang4", instances: 4, gpus: 1, command: "./worker --rendezvous",
		memory: "3g", teExtra: "gang = true\ngang-timeout = \"3m\""}))
	d := e2e.WaitFor(t, id, 4*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	require.Equal(t, "SUCCEEDED", d.Report.FinalStatus, d.Report.Diagnostics)

	lines := stdoutLines(id, rankLine)
	ranks, nodes, masters := map[string]int{}, map[string]bool{}, map[string]bool{}
	for c, ls := range lines {
		require.Len(t, ls, 1, "one rank line in %s", c)
		m := rankLine.FindStringSubmatch(ls[0])
		ranks[m[1]]++
		assert.Equal(t, "4", m[2], "WORLD_SIZE")
		assert.Equal(t, "0", m[4], "the first round")
		masters[m[5]] = true
	}
	assert.Equal(t, map[string]int{"0": 1, "1": 1, "2": 1, "3": 1}, ranks, "ranks 0..3 exactly once")
	assert.Len(t, masters, 1, "every rank was given the same MASTER_ADDR:MASTER_PORT: %v", masters)
	for _, w := range workerLines(t, id) {
		nodes[w.logDir] = true
	}
	assert.Len(t, nodes, 2, "the gang spans both NodeManagers")
	seen := stdoutLines(id, regexp.MustCompile(`^worker: rank 0 saw ranks 1,2,3 exactly once$`))
	assert.Len(t, seen, 1, "rank 0 saw every other rank once")
}

// TestGangRestartsWhenARankDies: a gang of 2 whose ranks meet and then sleep; one rank's worker is
// SIGKILLed; the other stops, a new round of 2 starts, meets again and the job succeeds.
func TestGangRestartsWhenARankDies(t *testing.T) {
	e2e.Env(t)
	id := e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "gang2", instances: 2, gpus: 1, command: "./worker --rendezvous --sleep 25s",
		maxFailures: 1, teExtra: "gang = true"}))
	var victim string
	require.Eventually(t, func() bool {
		st := liveAMStatus(t, id)
		if st == nil || st.Counts.Running != 2 {
			return false
		}
		for _, c := range st.Containers {
			if c.Rank == nil {
				return false
			}
			if c.Rank.Rank == 1 {
				victim = c.ID
			}
		}
		return victim != "" && len(stdoutLines(id, regexp.MustCompile(`^worker: rank 0 saw ranks 1 exactly once$`))) == 1
	}, 3*time.Minute, time.Second, "round 0 formed and met")
	pids := e2e.ProcsOfContainer(victim, "worker", "")
	require.Len(t, pids, 1, "the worker of rank 1 (%s)", victim)
	require.NoError(t, syscall.Kill(pids[0], syscall.SIGKILL))

	d := e2e.WaitFor(t, id, 4*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	require.Equal(t, "SUCCEEDED", d.Report.FinalStatus, d.Report.Diagnostics)
	rounds := map[string]int{}
	for _, ls := range stdoutLines(id, rankLine) {
		rounds[rankLine.FindStringSubmatch(ls[0])[4]]++
	}
	assert.Equal(t, map[string]int{"0": 2, "1": 2}, rounds, "two rounds of two ranks")
	assert.Len(t, taskExecutorContainers(t, id), 4, "each round started its 2 containers once")
}
