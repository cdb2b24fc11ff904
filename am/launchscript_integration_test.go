//go:build integration

package am_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// TestE2ECommandReachesTheWorkerUnexpanded: a real NodeManager expands {{VAR}}, <CPS> and <LOG_DIR>
// in launch commands; a job's command must reach the worker's bash exactly as written, and a
// {{(cmd)}} in it must not run in the launch script.
func TestE2ECommandReachesTheWorkerUnexpanded(t *testing.T) {
	e2e.Env(t)
	marker := filepath.Join(t.TempDir(), "ran-in-the-launch-script")
	words := []string{"{{PWD}}", "a<CPS>b", "<LOG_DIR>/x", "}}{{", "{{(touch " + marker + ")}}"}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + w + "'"
	}
	command := "printf 'word=%s\\n' " + strings.Join(quoted, " ")
	id := e2e.SubmitDetached(t, writeJob(t, jobSpec{name: "e2e-unexpanded", instances: 1, gpus: 1, command: command, maxFailures: 1}))
	d := e2e.WaitFor(t, id, 3*time.Minute, "the end", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	require.Equal(t, "SUCCEEDED", d.Report.FinalStatus, "%+v", d.Report)

	var got []string
	for _, dir := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(dir, id, "*", "stdout"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			for _, line := range strings.Split(string(data), "\n") {
				if w, ok := strings.CutPrefix(line, "word="); ok {
					got = append(got, w)
				}
			}
		}
	}
	assert.Equal(t, words, got, "the worker's words, as written in the job file")
	_, err := os.Stat(marker)
	assert.True(t, os.IsNotExist(err), "{{(cmd)}} in a command ran in the launch script")
}
