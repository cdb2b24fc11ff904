package dist

import (
	"context"
	"fmt"
	"net/url"
	"time"
)

// This file asks the JobManager's REST API for a checkpoint or a savepoint of a job that goes on
// running, and waits for it (docs/flink.md#preemption). Both are Flink's asynchronous operations: the
// POST answers a trigger id ({"request-id": ...}), and GET on the trigger answers
// {"status": {"id": "IN_PROGRESS"|"COMPLETED"}, "operation": ...} until it is done.

// TriggerCheckpoint asks for a checkpoint of job now (POST /jobs/<id>/checkpoints, Flink 1.19+), of
// the type the job's configuration gives (an empty body: checkpointType CONFIGURED), and returns the
// operation's trigger id.
func (c *REST) TriggerCheckpoint(ctx context.Context, jobID string) (string, error) {
	return c.trigger(ctx, jobID, "/checkpoints", struct{}{})
}

// TriggerSavepoint asks for a savepoint of job in dir ("" = its state.savepoints.dir) without
// stopping it (POST /jobs/<id>/savepoints, cancel-job false) and returns the operation's trigger id;
// WaitSavepoint waits for it.
func (c *REST) TriggerSavepoint(ctx context.Context, jobID, dir string) (string, error) {
	body := struct {
		Target string `json:"target-directory,omitempty"`
		Cancel bool   `json:"cancel-job"`
	}{Target: dir}
	return c.trigger(ctx, jobID, "/savepoints", body)
}

func (c *REST) trigger(ctx context.Context, jobID, what string, body any) (string, error) {
	if err := checkJobID(jobID); err != nil {
		return "", err
	}
	var out struct {
		RequestID string `json:"request-id"`
	}
	path := "/jobs/" + url.PathEscape(jobID) + what
	if err := c.call(ctx, "POST", path, body, &out); err != nil {
		return "", err
	}
	if out.RequestID == "" {
		return "", fmt.Errorf("flink rest: POST %s: the answer names no request-id", path)
	}
	return out.RequestID, nil
}

// WaitCheckpoint polls the checkpoint operation trigger of job every poll
// (GET /jobs/<id>/checkpoints/<trigger>) until it completes, and returns the checkpoint's id; a
// failed checkpoint is an error with Flink's innermost cause. It gives up when ctx ends.
func (c *REST) WaitCheckpoint(ctx context.Context, jobID, trigger string, poll time.Duration) (int64, error) {
	if err := checkJobID(jobID); err != nil {
		return 0, err
	}
	path := "/jobs/" + url.PathEscape(jobID) + "/checkpoints/" + url.PathEscape(trigger)
	t := time.NewTicker(poll)
	defer t.Stop()
	last := "no answer yet"
	for {
		var doc struct {
			Status struct {
				ID string `json:"id"`
			} `json:"status"`
			Operation struct {
				CheckpointID *int64        `json:"checkpointId"`
				FailureCause *failureCause `json:"failureCause"` // the checkpoint's field name; a savepoint's is failure-cause
			} `json:"operation"`
		}
		err := c.get(ctx, path, &doc)
		switch {
		case err != nil:
			last = err.Error()
		case doc.Status.ID != "COMPLETED":
			last = "the checkpoint is " + doc.Status.ID
		case doc.Operation.FailureCause != nil:
			return 0, fmt.Errorf("flink: the checkpoint failed: %s", doc.Operation.FailureCause)
		case doc.Operation.CheckpointID == nil:
			return 0, fmt.Errorf("flink: the checkpoint completed without an id")
		default:
			return *doc.Operation.CheckpointID, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("flink: the checkpoint did not complete (%s): %w", last, ctx.Err())
		case <-t.C:
		}
	}
}

// failureCause is Flink's serialized throwable in an operation's answer.
type failureCause struct {
	Class      string `json:"class"`
	StackTrace string `json:"stack-trace"`
}

// String is the innermost cause, else the class, bounded.
func (f *failureCause) String() string {
	cause := InnermostCause(f.StackTrace)
	if cause == "" {
		cause = f.Class
	}
	return tail(cause, 2000)
}
