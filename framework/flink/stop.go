package flink

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework/flink/dist"
)

// KeySavepointsDir is Flink's default savepoint directory, which a stop without --savepoint uses.
const KeySavepointsDir = "state.savepoints.dir"

// savepointPoll is how often a stop asks whether its savepoint has completed.
const savepointPoll = 500 * time.Millisecond

// stopper stops an application cluster's job with a savepoint, as flink stop does
// (docs/flink.md#stopping-with-a-savepoint): the job ends FINISHED, its JobManager (the driver) exits
// 0 and the application SUCCEEDS, with the savepoint in its diagnostics.
type stopper struct {
	rest *dist.REST
	emit func(contract.Event)
	// configured is state.savepoints.dir as the processes have it ("" = unset).
	configured string
}

// stop is framework.AM.OnStop.
func (s *stopper) stop(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		dir = s.configured
	}
	if dir == "" {
		return "", fmt.Errorf("no savepoint directory: give one with yarn-am stop --savepoint DIR (a directory the JobManager can write, e.g. file:///tmp/savepoints), or set %s in [flink.config]", KeySavepointsDir)
	}
	jobs, err := s.rest.Jobs(ctx)
	if err != nil {
		return "", fmt.Errorf("asking the JobManager for its job: %w", err)
	}
	var live []dist.Job
	var states []string
	for _, j := range jobs {
		states = append(states, j.ID+" "+j.State)
		if !dist.Terminal(j.State) {
			live = append(live, j)
		}
	}
	if len(live) != 1 {
		return "", fmt.Errorf("the JobManager has no running job to stop (its jobs: %s); the application ends on its own, or use yarn-am kill", orNone(states))
	}
	job := live[0]
	s.emit(contract.Event{Type: EventJob, Message: fmt.Sprintf("%s: stopping with a savepoint in %s (yarn-am stop)", jobName(job), dir)})
	trigger, err := s.rest.StopWithSavepoint(ctx, job.ID, dir)
	if err == nil {
		var path string
		if path, err = s.rest.WaitSavepoint(ctx, job.ID, trigger, savepointPoll); err == nil {
			s.emit(contract.Event{Type: EventJob, Message: fmt.Sprintf("%s stopped with a savepoint at %s; it ends FINISHED", jobName(job), path)})
			return path, nil
		}
	}
	s.emit(contract.Event{Type: EventJob, Severity: contract.SeverityWarning, Message: fmt.Sprintf("%s: the stop with a savepoint in %s failed: %v", jobName(job), dir, err)})
	return "", err
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
