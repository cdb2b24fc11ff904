package flinkdist

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// This file reads Flink 2.x's application layer (FLIP-549, FLIP-560; docs/flink.md#the-rest-api): from
// Flink 2.3 on an application cluster runs an *application* (the user's main()) that submits jobs,
// and a main() that throws before it submits one fails the application alone: /jobs/overview stays
// empty, the JobManager keeps running, and only /applications/overview says FAILED, with the error
// in /applications/<id>/exceptions. A JobManager without these endpoints (Flink 1.x) answers 404,
// and the driver watches its job alone, as before.

// Application is one entry of /applications/overview (Flink's ApplicationDetails).
type Application struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"` // CREATED, RUNNING, FAILING, FAILED, CANCELING, CANCELED, FINISHED
	Start  int64  `json:"start-time"`
	End    int64  `json:"end-time"` // -1 while it runs
	// Jobs counts the application's jobs by state, e.g. {"RUNNING": 1}.
	Jobs map[string]int `json:"jobs"`
}

// applicationIDPattern is Flink's ApplicationID in hex (32 characters, like a JobID).
var applicationIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// errNoApplications is what Applications returns from a JobManager that has no application
// endpoints (Flink before 2.3 answers 404).
var errNoApplications = errors.New("flink rest: the JobManager has no application endpoints (/applications/overview is 404: Flink before 2.3)")

// Applications lists the cluster's applications (/applications/overview); errNoApplications from a
// JobManager that has none.
func (c *REST) Applications(ctx context.Context) ([]Application, error) {
	var doc struct {
		Applications []Application `json:"applications"`
	}
	if err := c.get(ctx, "/applications/overview", &doc); err != nil {
		var se *StatusError
		if errors.As(err, &se) && se.Code == http.StatusNotFound {
			return nil, errNoApplications
		}
		return nil, err
	}
	return doc.Applications, nil
}

// ApplicationRootCause returns why application failed (/applications/<id>/exceptions): the newest
// entry of its exception history, the innermost cause of its stack trace (for a main() that threw,
// the user's own exception under Flink's ApplicationExecutionException and
// ProgramInvocationException); nil when it recorded none.
func (c *REST) ApplicationRootCause(ctx context.Context, applicationID string) (*RootCause, error) {
	if !applicationIDPattern.MatchString(applicationID) {
		return nil, errors.New("flink rest: application id " + shown(applicationID) + ": want 32 hex digits")
	}
	var doc struct {
		History struct {
			Entries []struct {
				Name       string `json:"exceptionName"`
				Stacktrace string `json:"stacktrace"`
				Timestamp  int64  `json:"timestamp"`
				JobID      string `json:"jobId"`
			} `json:"entries"`
		} `json:"exceptionHistory"`
	}
	if err := c.get(ctx, "/applications/"+url.PathEscape(applicationID)+"/exceptions", &doc); err != nil {
		return nil, err
	}
	es := doc.History.Entries
	if len(es) == 0 {
		return nil, nil
	}
	e := es[0] // the newest first, as in a job's history
	r := &RootCause{Exception: e.Name, Stacktrace: e.Stacktrace, Time: time.UnixMilli(e.Timestamp)}
	first, _, _ := strings.Cut(e.Stacktrace, "\n")
	_, msg, _ := strings.Cut(strings.TrimSpace(first), ": ")
	r.Message = strings.TrimSpace(msg)
	r.Cause = innermostCause(e.Stacktrace)
	return r, nil
}

// applicationWatch remembers, across WaitJob's polls, whether the JobManager serves applications:
// the first 404 ends the asking (one probe per JobManager, docs/flink.md#the-rest-api).
type applicationWatch struct {
	absent bool
}

// ended returns the cluster's first application in a terminal state (nil when none, or when the
// JobManager has no application endpoints). Other errors are returned for the caller's "last error".
func (w *applicationWatch) ended(ctx context.Context, c *REST) (*Application, error) {
	if w.absent {
		return nil, nil
	}
	apps, err := c.Applications(ctx)
	if errors.Is(err, errNoApplications) {
		w.absent = true
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for i := range apps {
		if Terminal(apps[i].Status) {
			return &apps[i], nil
		}
	}
	return nil, nil
}
