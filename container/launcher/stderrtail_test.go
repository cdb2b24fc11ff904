package launcher

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkerStderrTailExcludesTheLaunchersLogLines: the launcher's log lines and the worker's stderr
// share the container's stderr; the report after a failed worker carries only the worker's lines.
func TestWorkerStderrTailExcludesTheLaunchersLogLines(t *testing.T) {
	f := newLaunchFixture(t)
	var shared lockedBuffer // as in a container: one stderr file for both
	f.l.Stderr = &shared
	logger := logrus.New()
	logger.SetOutput(&shared)
	f.l.Log = logger
	code := f.l.Run(context.Background(), []string{"sh", "-c", "echo starting; echo oops >&2; exit 3"})
	assert.Equal(t, 3, code, "the worker's exit code is the container's")
	all := shared.String()
	assert.Contains(t, all, "oops\n", "every byte of the worker's stderr still reaches the container's stderr")
	assert.Contains(t, all, "worker exited", "the launcher's own log lines are there too")
	require.Len(t, f.reporter.reports, 2, "the infos before the worker, its stderr after it")
	last := f.reporter.reports[1]
	assert.Equal(t, "oops", last.WorkerStderr, "only the worker's own lines, none of the launcher's")
	assert.Equal(t, 3, last.ExitCode)
	assert.Nil(t, last.Infos)
}

// lockedBuffer is a buffer two writers share, as the container's stderr file is shared by the
// launcher's log and the copy of the worker's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestWorkerStderrTailIsBounded(t *testing.T) {
	f := newLaunchFixture(t)
	script := `i=0; while [ $i -lt 500 ]; do echo "line $i of a long traceback ........................................" >&2; i=$((i+1)); done; exit 1`
	require.Equal(t, 1, f.l.Run(context.Background(), []string{"sh", "-c", script}))
	require.Len(t, f.reporter.reports, 2)
	tail := f.reporter.reports[1].WorkerStderr
	assert.LessOrEqual(t, len(tail), 4<<10)
	lines := strings.Split(tail, "\n")
	assert.Len(t, lines, 20)
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "line 499 "), lines[len(lines)-1])
}

// A worker that succeeds or exits silently still has its exit reported (the AM's gpu-shared check
// needs it), without stderr lines: those of a successful worker are no error of it.
func TestWorkerThatSucceedsOrIsSilentReportsItsExitWithoutStderr(t *testing.T) {
	f := newLaunchFixture(t)
	require.Equal(t, 0, f.l.Run(context.Background(), []string{"sh", "-c", "echo fine >&2"}))
	require.Equal(t, 4, f.l.Run(context.Background(), []string{"sh", "-c", "exit 4"}))
	require.Len(t, f.reporter.reports, 4, "an infos report and an exit report per run")
	assert.Equal(t, Report{ContainerID: f.l.ContainerID, Exited: true, ExitCode: 0}, f.reporter.reports[1])
	assert.Equal(t, Report{ContainerID: f.l.ContainerID, Exited: true, ExitCode: 4}, f.reporter.reports[3])
}

// TestWorkerChildHoldingStderrDoesNotHangTheLauncher: a background process the worker leaves holding
// its stderr open must not keep the launcher (and the container) running.
func TestWorkerChildHoldingStderrDoesNotHangTheLauncher(t *testing.T) {
	f := newLaunchFixture(t)
	done := make(chan int, 1)
	go func() {
		done <- f.l.Run(context.Background(), []string{"sh", "-c", "sleep 60 & echo oops >&2; exit 3"})
	}()
	select {
	case code := <-done:
		assert.Equal(t, 3, code)
	case <-time.After(30 * time.Second):
		t.Fatal("the launcher waited for the worker's child that holds its stderr")
	}
	require.Len(t, f.reporter.reports, 2)
	assert.Equal(t, "oops", f.reporter.reports[1].WorkerStderr, fmt.Sprint(f.reporter.reports))
}
