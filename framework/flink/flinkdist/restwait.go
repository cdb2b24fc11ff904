package flinkdist

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Outcome is how an application cluster's job ended, or, on Flink 2.3 and later, its application
// when that ended with no job ended (a main() that threw before it submitted one).
type Outcome struct {
	Job Job
	// Application is the application that ended without a job that ended (Job is then zero).
	Application *Application
	RootCause   *RootCause // FAILED only; nil when the JobManager recorded no exception
	// Savepoint is where a job that a stop with a savepoint ended (FINISHED, its latest savepoint a
	// synchronous one) left its state; "" otherwise.
	Savepoint string
}

// State is the terminal state of the job, else of the application (FINISHED, FAILED, CANCELED).
func (o *Outcome) State() string {
	if o.Job.ID == "" && o.Application != nil {
		return o.Application.Status
	}
	return o.Job.State
}

// String names what ended and how: "Flink job NAME (ID) STATE", or "Flink application NAME (ID)
// STATE" for an application that ended with no job ended.
func (o *Outcome) String() string {
	if o.Job.ID == "" && o.Application != nil {
		return fmt.Sprintf("Flink application %s (%s) %s", o.Application.Name, o.Application.ID, o.Application.Status)
	}
	return fmt.Sprintf("Flink job %s (%s) %s", o.Job.Name, o.Job.ID, o.Job.State)
}

// WaitJob polls the cluster's jobs every poll until one reaches a terminal state and returns it with,
// for a FAILED job, its root cause: what the AM reports as the application's outcome and diagnostics
// (docs/flink.md#the-rest-api). Where the JobManager serves Flink 2.3's applications, an application
// that ended while none of its jobs did (a main() that threw) is the outcome, with the application's
// root cause (restapplication.go). An application cluster must run with
// execution.shutdown-on-application-finish false for the answer to stay readable. It gives up when
// ctx ends or exited (the JobManager process's end) is closed first.
func (c *REST) WaitJob(ctx context.Context, poll time.Duration, exited <-chan struct{}) (*Outcome, error) {
	t := time.NewTicker(poll)
	defer t.Stop()
	var last error
	var apps applicationWatch
	ran := "" // a job seen RUNNING
	for {
		// The applications first: an application ends after its jobs, so a job that ended is in the
		// job list read next and is the outcome, with its own root cause.
		app, appErr := apps.ended(ctx, c)
		jobs, err := c.Jobs(ctx)
		last = errors.Join(err, appErr)
		for _, j := range jobs {
			if j.State == "RUNNING" {
				ran = j.ID
			}
			if !Terminal(j.State) {
				continue
			}
			o := &Outcome{Job: j}
			if j.State == "FINISHED" {
				// Best effort: the job's outcome stands without it.
				if cp, err := c.Checkpoints(ctx, j.ID); err == nil && cp.Latest.Savepoint != nil && cp.Latest.Savepoint.Type == syncSavepoint {
					o.Savepoint = cp.Latest.Savepoint.ExternalPath
				}
			}
			if j.State == "FAILED" {
				if o.RootCause, err = c.settledRootCause(ctx, j.ID, poll, exited); err != nil {
					return o, err
				}
			}
			return o, nil
		}
		if app != nil && err == nil {
			o := &Outcome{Application: app}
			if app.Status == "FAILED" {
				if o.RootCause, err = c.ApplicationRootCause(ctx, app.ID); err != nil {
					return o, err
				}
			}
			return o, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("flink rest: no job ended (last error: %v): %w", last, ctx.Err())
		case <-exited:
			if ran != "" {
				return nil, fmt.Errorf("flink rest: the JobManager exited while its job %s ran (last error: %v): %w", ran, last, ErrLostWhileRunning)
			}
			return nil, fmt.Errorf("flink rest: the JobManager exited before its job ended (last error: %v)", last)
		case <-t.C:
		}
	}
}

// ErrLostWhileRunning is WaitJob's error when the JobManager exited after its job had been seen
// RUNNING and before the job ended: the JobManager was lost (killed, crashed), not a start that
// failed, which would fail the same way again.
var ErrLostWhileRunning = errors.New("the JobManager was lost while its job ran")

// settledRootCause is RootCause of a job /jobs/overview showed FAILED, read once /jobs/<id> shows it
// ended too. Flink answers /jobs/overview from the job's live state but /jobs/<id> and
// /jobs/<id>/exceptions from one cache of its execution graph, kept web.refresh-interval (3 s by
// default) after anyone's read of either: a graph cached while the job still ran (the AM's status
// reads /jobs/<id> every 3 s) has no exception, and the driver would fall back on the JobManager's log,
// whose last trace on Flink 2.3 is its stop's cancellation (docs/flink.md#the-rest-api). Past Settle, or
// when /jobs/<id> keeps failing, or once exited (the JobManager's end) is closed, it reads the
// exceptions all the same.
func (c *REST) settledRootCause(ctx context.Context, jobID string, poll time.Duration, exited <-chan struct{}) (*RootCause, error) {
	settle := c.Settle
	if settle <= 0 {
		settle = defaultSettle
	}
	deadline := time.Now().Add(settle)
	for {
		d, err := c.JobDetail(ctx, jobID)
		if err == nil && Terminal(d.State) || !time.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("flink rest: job %s FAILED, and its own answer still says %s: %w", jobID, jobState(d, err), ctx.Err())
		case <-exited:
			return c.RootCause(ctx, jobID)
		case <-time.After(poll):
		}
	}
	return c.RootCause(ctx, jobID)
}

// jobState is what a read of /jobs/<id> said, for an error.
func jobState(d *JobDetail, err error) string {
	if err != nil {
		return err.Error()
	}
	return d.State
}

// WaitStarted polls the JobManager every poll until it has started: its REST API answers and, for
// an application cluster, its job is past INITIALIZING (the JobMaster runs: CREATED, RUNNING or
// later). It returns what it saw last, for the log; the error is ctx's, with the last answer or
// failure. A colocated TaskManager waits for it before its JVM starts
// (docs/flink.md#taskmanagers-on-the-jobmanagers-host).
func (c *REST) WaitStarted(ctx context.Context, poll time.Duration, application bool) (string, error) {
	t := time.NewTicker(poll)
	defer t.Stop()
	last := "no answer yet"
	for {
		jobs, err := c.Jobs(ctx)
		switch {
		case err != nil:
			if ctx.Err() == nil { // not the wait's own end cutting a request short
				last = err.Error()
			}
		case !application:
			return "its REST API answers", nil
		default:
			last = "its REST API answers, no job yet"
			for _, j := range jobs {
				if j.State != "INITIALIZING" {
					return fmt.Sprintf("job %s is %s", j.ID, j.State), nil
				}
				last = fmt.Sprintf("job %s is INITIALIZING", j.ID)
			}
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("the JobManager has not started (%s): %w", last, ctx.Err())
		case <-t.C:
		}
	}
}
