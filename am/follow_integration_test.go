//go:build integration

package am_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// TestE2EFollowReattachesUntilTheEnd: after `submit --detach`, `yarn-am follow` shows the application's
// progress and the AM's events until it ends, and exits as an attached submit would (0 on SUCCEEDED,
// 1 otherwise); an id the RM does not know exits 5 at once.
func TestE2EFollowReattachesUntilTheEnd(t *testing.T) {
	e2e.Env(t)
	ok := e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "e2e-follow-ok", instances: 2, gpus: 1, command: "./worker --sleep 6s", maxFailures: 1}))
	r := e2e.YarnAM(t, 5*time.Minute, "follow", ok)
	require.Equal(t, 0, r.Code, "follow of a succeeding job:\n%s", r)
	assert.Contains(t, r.Stdout, "following "+ok, r.String())
	assert.Contains(t, r.Stdout, "final status SUCCEEDED", r.String())
	assert.Regexp(t, `containers: requested \d+, allocated \d+, running \d+, completed \d+, failed \d+`, r.Stdout, "the AM's progress is shown")
	assert.Contains(t, r.Stdout, "launched: TaskExecutor", "the AM's events (from its history) are shown:\n%s", r)

	bad := e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "e2e-follow-fail", instances: 1, gpus: 1, command: "./worker --exit 3", maxFailures: 1}))
	r = e2e.YarnAM(t, 5*time.Minute, "follow", bad)
	require.Equal(t, 1, r.Code, "follow of a failing job exits 1:\n%s", r)
	assert.Contains(t, r.Stderr, "FAILED", r.String())

	r = e2e.YarnAM(t, time.Minute, "follow", "application_1_9999")
	require.Equal(t, 5, r.Code, "follow of an unknown application:\n%s", r)
	assert.Contains(t, r.Stderr, "does not know application_1_9999", r.String())
}
