package flink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// stopper stops an application cluster's job with a savepoint, as flink stop does
// (docs/flink.md#stopping-with-a-savepoint): the job ends FINISHED, its JobManager (the driver) exits
// 0 and the application SUCCEEDS, with the savepoint in its diagnostics.
type stopper struct {
	rest *flinkdist.REST
	emit func(contract.Event)
	// configured is state.savepoints.dir as the processes have it ("" = unset).
	configured string
	// note is where the savepoint's path is left for the driver's outcome (stoppedNote; "" = not).
	note string
}

// stoppedNote is where, in the AM container's working directory, the AM leaves the path of the
// savepoint a stop wrote, for the JobManager's driver beside it to name in the application's
// diagnostics: Flink's checkpoint statistics of a job that a stop ended do not list that savepoint
// (read on the mini cluster with Flink 1.20.5: latest.savepoint stays null).
const stoppedNote = ".yarn-am-flink-stopped-with-savepoint"

// stoppedWith returns the savepoint a stop left in dir's note ("" = none).
func stoppedWith(dir string) string {
	f, err := os.Open(filepath.Join(dir, stoppedNote))
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	return strings.TrimSpace(string(b))
}

// stop is framework.AM.OnStop: Flink's answer to a stop is a stop with a savepoint in r.Dir.
func (s *stopper) stop(ctx context.Context, r framework.StateRequest) (framework.Kept, error) {
	path, err := s.stopWithSavepoint(ctx, r.Dir)
	if err != nil {
		return framework.Kept{}, err
	}
	return framework.Kept{What: keptName, Where: path}, nil
}

// keptName is what Flink calls the state a stop or yarn-am savepoint keeps (framework.Kept.What).
const keptName = "Savepoint"

// stopWithSavepoint stops the job with a savepoint in dir ("" = state.savepoints.dir) and returns
// the savepoint's path.
func (s *stopper) stopWithSavepoint(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		dir = s.configured
	}
	if dir == "" {
		return "", fmt.Errorf("no savepoint directory: give one with yarn-am stop --savepoint DIR (a directory the JobManager can write, e.g. file:///tmp/savepoints), or set %s in [flink.config]", keySavepointsDir)
	}
	job, err := liveJob(ctx, s.rest, "to stop", "; the application ends on its own, or use yarn-am kill")
	if err != nil {
		return "", err
	}
	s.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s: stopping with a savepoint in %s (yarn-am stop)", jobName(job), dir)})
	path, err := untilAllRunning(ctx, func() (string, error) {
		trigger, err := s.rest.StopWithSavepoint(ctx, job.ID, dir)
		if err != nil {
			return "", err
		}
		return s.rest.WaitSavepoint(ctx, job.ID, trigger, savepointPoll)
	})
	var starting *stillStarting
	switch {
	case errors.As(err, &starting):
		return "", err
	case err != nil:
		s.emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf("%s: the stop with a savepoint in %s failed: %v", jobName(job), dir, err)})
		return "", err
	}
	s.emit(contract.Event{Type: eventJob, Message: fmt.Sprintf("%s stopped with a savepoint at %s; it ends FINISHED", jobName(job), path)})
	if s.note != "" {
		_ = os.WriteFile(s.note, []byte(path), 0o600)
	}
	return path, nil
}
