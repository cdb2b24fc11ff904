//go:build integration

package am_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// TestStopOfAJobWithoutAGracefulStopIsRefused: a plain job's framework has no graceful stop; stop
// refuses it, names yarn-am kill, and the application runs on.
func TestStopOfAJobWithoutAGracefulStopIsRefused(t *testing.T) {
	e2e.Env(t)
	job := filepath.Join(t.TempDir(), "sleep.toml")
	require.NoError(t, os.WriteFile(job, []byte("name = \"stop-refused\"\n\n[taskexecutor]\ninstances = 1\nmemory = 256\ncommand = \"sleep 300\"\n"), 0o644))
	id := e2e.SubmitDetached(t, job)
	e2e.WaitFor(t, id, 2*time.Minute, "running", func(d e2e.StatusDoc) bool {
		return e2e.IsEnded(d.Report.State) || d.AM != nil && d.AM.Counts.Running == 1
	})
	r := e2e.YarnAM(t, time.Minute, "stop", id)
	assert.Equal(t, 1, r.Code, "stop of a plain job:\n%s", r)
	assert.Contains(t, r.Stderr, "use yarn-am kill")
	assert.Equal(t, "RUNNING", e2e.Status(t, id).Report.State)
}
