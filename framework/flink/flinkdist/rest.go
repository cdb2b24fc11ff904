package flinkdist

import (
	"bytes"
	"context"
	"encoding/json"
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
	// show it too (settledRootCause); 0 is defaultSettle.
	Settle time.Duration
}

// defaultSettle is REST.Settle's default: ten times the life of the JobManager's cached view of a job
// on Flink's defaults (web.refresh-interval, 3 s).
const defaultSettle = 30 * time.Second

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
	r.Cause = innermostCause(r.Stacktrace)
	return &r, nil
}

// innermostCause returns the last "Caused by: " line of a Java stack trace without the prefix, or
// its first line when it has none.
func innermostCause(stacktrace string) string {
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

// KeyRESTSSL is Flink's switch for TLS on the REST endpoint.
const KeyRESTSSL = "security.ssl.rest.enabled"

func checkJobID(jobID string) error {
	if !jobIDPattern.MatchString(jobID) {
		return fmt.Errorf("flink rest: job id %s: want 32 hex digits", shown(jobID))
	}
	return nil
}

// restError is the first of Flink's {"errors": [...]} in an error answer, else the answer.
func restError(body []byte) string {
	var e struct {
		Errors []string `json:"errors"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Errors) > 0 {
		first, _, _ := strings.Cut(strings.TrimSpace(e.Errors[0]), "\n")
		return first
	}
	return string(body)
}
