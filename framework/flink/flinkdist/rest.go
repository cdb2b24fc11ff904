package flinkdist

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// REST reads a JobManager's REST API (docs/flink.md#the-rest-api), for the AM's status and
// diagnostics. The zero HTTP uses a client with a 10 s timeout.
type REST struct {
	URL  string // http://host:port
	HTTP *http.Client
	// Settle bounds WaitJob's wait, for a job /jobs/overview shows FAILED, until the job's own answers
	// show it too (settledRootCause); 0 is DefaultSettle.
	Settle time.Duration
}

// DefaultSettle is REST.Settle's default: ten times the life of the JobManager's cached view of a job
// on Flink's defaults (web.refresh-interval, 3 s).
const DefaultSettle = 30 * time.Second

const maxRESTBody = 8 << 20

// Job is one entry of /jobs/overview.
type Job struct {
	ID    string `json:"jid"`
	Name  string `json:"name"`
	State string `json:"state"` // CREATED, RUNNING, FINISHED, FAILED, CANCELED, ...
	Start int64  `json:"start-time"`
	End   int64  `json:"end-time"`
}

// TaskManager is one entry of /taskmanagers.
type TaskManager struct {
	ID        string `json:"id"`
	Path      string `json:"path"`
	Slots     int    `json:"slotsNumber"`
	FreeSlots int    `json:"freeSlots"`
}

// RootCause is why a job failed, from /jobs/<id>/exceptions: the newest entry of the exception
// history, else the (deprecated) root-exception.
type RootCause struct {
	Exception   string // the exception's class, e.g. java.lang.IllegalStateException
	Message     string // its message (first line)
	Cause       string // the innermost "Caused by:" line of the stack trace, or the first line
	Stacktrace  string
	TaskName    string // the failing task, when a task failed
	TaskManager string // its TaskManager's id, when known
	Time        time.Time
}

// String is the root cause in one line: the innermost cause, and where.
func (r *RootCause) String() string {
	s := r.Cause
	if r.TaskName != "" {
		s += " (in " + r.TaskName
		if r.TaskManager != "" {
			s += " on TaskManager " + r.TaskManager
		}
		s += ")"
	}
	return s
}

func (c *REST) get(ctx context.Context, path string, v any) error {
	return c.call(ctx, http.MethodGet, path, nil, v)
}

// call sends a request with body (JSON, nil = none) and decodes the answer into v.
func (c *REST) call(ctx context.Context, method, path string, body, v any) error {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	u := strings.TrimRight(c.URL, "/") + path
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("flink rest: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("flink rest: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("flink rest: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxRESTBody+1))
	if err != nil {
		return fmt.Errorf("flink rest: %s %s: %w", method, u, err)
	}
	if len(answer) > maxRESTBody {
		return fmt.Errorf("flink rest: %s %s: the answer is larger than %d bytes", method, u, maxRESTBody)
	}
	if resp.StatusCode/100 != 2 {
		return &StatusError{Code: resp.StatusCode, msg: fmt.Sprintf("flink rest: %s %s: %s: %s", method, u, resp.Status, tail(restError(answer), 500))}
	}
	if v == nil { // an answer the caller does not read ({} for a PUT)
		return nil
	}
	if err := json.Unmarshal(answer, v); err != nil {
		return fmt.Errorf("flink rest: %s %s: %w", method, u, err)
	}
	return nil
}

// StatusError is a JobManager's answer other than 2xx: its HTTP status code and, in the text, the
// first of Flink's errors (an endpoint the version lacks is a 404: Applications).
type StatusError struct {
	Code int
	msg  string
}

func (e *StatusError) Error() string { return e.msg }

// Jobs lists the cluster's jobs (/jobs/overview).
func (c *REST) Jobs(ctx context.Context) ([]Job, error) {
	var doc struct {
		Jobs []Job `json:"jobs"`
	}
	if err := c.get(ctx, "/jobs/overview", &doc); err != nil {
		return nil, err
	}
	return doc.Jobs, nil
}

// TaskManagers lists the registered TaskManagers (/taskmanagers).
func (c *REST) TaskManagers(ctx context.Context) ([]TaskManager, error) {
	var doc struct {
		TaskManagers []TaskManager `json:"taskmanagers"`
	}
	if err := c.get(ctx, "/taskmanagers", &doc); err != nil {
		return nil, err
	}
	return doc.TaskManagers, nil
}

// jobIDPattern is Flink's JobID in hex (32 characters).
var jobIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// RootCause returns why job failed (/jobs/<id>/exceptions); nil when the job has no exception.
func (c *REST) RootCause(ctx context.Context, jobID string) (*RootCause, error) {
	if !jobIDPattern.MatchString(jobID) {
		return nil, fmt.Errorf("flink rest: job id %s: want 32 hex digits", shown(jobID))
	}
	var doc struct {
		RootException string `json:"root-exception"`
		Timestamp     int64  `json:"timestamp"`
		History       struct {
			Entries []struct {
				Name        string `json:"exceptionName"`
				Stacktrace  string `json:"stacktrace"`
				Timestamp   int64  `json:"timestamp"`
				TaskName    string `json:"taskName"`
				TaskManager string `json:"taskManagerId"`
			} `json:"entries"`
		} `json:"exceptionHistory"`
	}
	if err := c.get(ctx, "/jobs/"+url.PathEscape(jobID)+"/exceptions", &doc); err != nil {
		return nil, err
	}
	var r RootCause
	if es := doc.History.Entries; len(es) > 0 {
		e := es[0] // the newest first
		r = RootCause{Exception: e.Name, Stacktrace: e.Stacktrace, TaskName: e.TaskName, TaskManager: e.TaskManager,
			Time: time.UnixMilli(e.Timestamp)}
	} else if doc.RootException != "" {
		r = RootCause{Stacktrace: doc.RootException, Time: time.UnixMilli(doc.Timestamp)}
	} else {
		return nil, nil
	}
	first, _, _ := strings.Cut(r.Stacktrace, "\n")
	first = strings.TrimSpace(first)
	cls, msg, _ := strings.Cut(first, ": ")
	if r.Exception == "" {
		r.Exception = cls
	}
	r.Message = strings.TrimSpace(msg)
	r.Cause = InnermostCause(r.Stacktrace)
	return &r, nil
}

// InnermostCause returns the last "Caused by: " line of a Java stack trace without the prefix, or
// its first line when it has none.
func InnermostCause(stacktrace string) string {
	cause := ""
	for i, line := range strings.Split(stacktrace, "\n") {
		line = strings.TrimSpace(line)
		if i == 0 {
			cause = line
		}
		if rest, ok := strings.CutPrefix(line, "Caused by: "); ok {
			cause = rest
		}
	}
	return cause
}

// Terminal reports whether a job state is globally terminal (the job will not run again).
func Terminal(state string) bool {
	return state == "FINISHED" || state == "FAILED" || state == "CANCELED"
}

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
				if cp, err := c.Checkpoints(ctx, j.ID); err == nil && cp.Latest.Savepoint != nil && cp.Latest.Savepoint.Type == SyncSavepoint {
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
		settle = DefaultSettle
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

// KeyRESTSSL is Flink's switch for TLS on the REST endpoint.
const KeyRESTSSL = "security.ssl.rest.enabled"
