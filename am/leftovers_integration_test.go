//go:build integration

package am_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// TestE2EHadoopKillLeavesNothingBehind: Hadoop's own kill (forceKillApplication, what `yarn
// application -kill` sends) of a job with attempts left leaves its staging directory behind, since the
// AM cannot tell that SIGTERM from a preemption; the next submit of the same user removes it and says so.
func TestE2EHadoopKillLeavesNothingBehind(t *testing.T) {
	e2e.Env(t)
	id := e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "e2e-yarn-kill", instances: 1, gpus: 1, command: "./worker --sleep 1h", maxFailures: 1, maxAttempts: 2}))
	d := e2e.WaitFor(t, id, 3*time.Minute, "RUNNING", func(d e2e.StatusDoc) bool { return d.Report.State == "RUNNING" })

	rm, err := e2e.RMClient()
	require.NoError(t, err)
	defer rm.Close()
	appID, err := yarnrpc.ParseApplicationID(id)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err = rm.KillApplication(ctx, appID, "killed the way yarn application -kill does")
	require.NoError(t, err)
	e2e.WaitFor(t, id, 2*time.Minute, "KILLED", func(d e2e.StatusDoc) bool { return d.Report.State == "KILLED" })

	conf, err := yarnrpc.LoadConfigFromEnv()
	require.NoError(t, err)
	fsys, err := client.DialHDFS(conf, d.Report.User)
	require.NoError(t, err)
	defer fsys.Close()
	dir := client.StagingDir(d.Report.User, id)
	_, err = fsys.Stat(dir)
	require.NoError(t, err, "precondition: the kill of an AM with attempts left keeps %s", dir)

	r := e2e.YarnAM(t, 2*time.Minute, "submit", "--detach", writeJob(t, jobSpec{name: "e2e-after-yarn-kill", instances: 1, gpus: 1, command: "./worker", maxFailures: 1}))
	require.Equal(t, 0, r.Code, "the next submit:\n%s", r)
	t.Cleanup(func() { e2e.KillQuietly(e2e.SubmittedID(r.Stdout)) })
	assert.Contains(t, r.Stdout, "removed the leftover staging directory "+dir+" of "+id+" (KILLED)", r.String())
	_, err = fsys.Stat(dir)
	assert.True(t, errors.Is(err, os.ErrNotExist), "%s is gone after the next submit (stat: %v)", dir, err)
}
