package flinkdist

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
	op, err := c.waitOperation(ctx, jobID, "checkpoint", trigger, poll)
	if err != nil {
		return 0, err
	}
	if op.CheckpointID == nil {
		return 0, fmt.Errorf("flink: the checkpoint completed without an id")
	}
	return *op.CheckpointID, nil
}

// operation is what a completed checkpoint or savepoint operation answers.
type operation struct {
	Location     string        `json:"location"`      // a savepoint's
	CheckpointID *int64        `json:"checkpointId"`  // a checkpoint's
	FailureCause *failureCause `json:"failureCause"`  // a checkpoint's name for it
	FailCause    *failureCause `json:"failure-cause"` // a savepoint's
}

// waitOperation polls GET /jobs/<id>/<kind>s/<trigger> every poll until the operation completes:
// its answer, or an error with Flink's innermost cause when it failed. It gives up when ctx ends.
func (c *REST) waitOperation(ctx context.Context, jobID, kind, trigger string, poll time.Duration) (*operation, error) {
	if err := checkJobID(jobID); err != nil {
		return nil, err
	}
	path := "/jobs/" + url.PathEscape(jobID) + "/" + kind + "s/" + url.PathEscape(trigger)
	t := time.NewTicker(poll)
	defer t.Stop()
	last := "no answer yet"
	for {
		var doc struct {
			Status struct {
				ID string `json:"id"` // IN_PROGRESS, COMPLETED
			} `json:"status"`
			Operation operation `json:"operation"`
		}
		err := c.get(ctx, path, &doc)
		switch {
		case err != nil:
			last = err.Error()
		case doc.Status.ID != "COMPLETED":
			last = "the " + kind + " is " + doc.Status.ID
		case doc.Operation.FailureCause != nil:
			return nil, fmt.Errorf("flink: the %s failed: %s", kind, doc.Operation.FailureCause)
		case doc.Operation.FailCause != nil:
			return nil, fmt.Errorf("flink: the %s failed: %s", kind, doc.Operation.FailCause)
		default:
			return &doc.Operation, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("flink: the %s did not complete (%s): %w", kind, last, ctx.Err())
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
	cause := innermostCause(f.StackTrace)
	if cause == "" {
		cause = f.Class
	}
	return tail(cause, 2000)
}
