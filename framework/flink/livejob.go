package flink

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// This file is what a stop and a savepoint share (docs/flink.md#stopping-with-a-savepoint): the
// JobManager's one live job, and a savepoint asked again while Flink refuses it for tasks that
// are not all running yet.

// savepointPoll is how often a stop asks whether its savepoint has completed.
const savepointPoll = 500 * time.Millisecond

// untilAllRunning calls try (a savepoint, with a stop or without) until it succeeds or fails for
// another reason than Flink's refusal while some of the job's tasks are not running yet: a job that
// has just started (or restarted) is RUNNING before all its tasks are, and a moment later Flink takes
// the savepoint. It asks again every second; when ctx ends first, the error is a *stillStarting.
func untilAllRunning(ctx context.Context, try func() (string, error)) (string, error) {
	for {
		res, err := try()
		if err == nil || !strings.Contains(err.Error(), notAllRunning) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return "", &stillStarting{err}
		case <-time.After(time.Second):
		}
	}
}

// stillStarting is untilAllRunning's error when its time ran out while Flink still refused.
type stillStarting struct{ err error }

func (e *stillStarting) Error() string {
	return e.err.Error() + " (the job's tasks are not all running yet; try again in a moment)"
}

func (e *stillStarting) Unwrap() error { return e.err }

// notAllRunning is Flink's reason for refusing a savepoint while some of the job's tasks are not
// running yet (CheckpointFailureReason.NOT_ALL_REQUIRED_TASKS_RUNNING).
const notAllRunning = "Not all required tasks are currently running"

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// liveJob is the JobManager's one job that has not ended; without one, the error says it has no
// running job what (to stop), then hint.
func liveJob(ctx context.Context, rest *flinkdist.REST, what, hint string) (flinkdist.Job, error) {
	jobs, err := rest.Jobs(ctx)
	if err != nil {
		return flinkdist.Job{}, fmt.Errorf("asking the JobManager for its job: %w", err)
	}
	var live []flinkdist.Job
	var states []string
	for _, j := range jobs {
		states = append(states, j.ID+" "+j.State)
		if !flinkdist.Terminal(j.State) {
			live = append(live, j)
		}
	}
	if len(live) != 1 {
		return flinkdist.Job{}, fmt.Errorf("the JobManager has no running job %s (its jobs: %s)%s", what, orNone(states), hint)
	}
	return live[0], nil
}
