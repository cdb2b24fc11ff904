package contract

import "time"

// Detail is one thing a job's framework says of its own work, as a name and a value (a Flink job's
// "State" and "RUNNING"): status, follow and the web page print them as text.
type Detail struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// FrameworkStatus is the job's framework's own view of its work in GET /api/v1/status (a Flink job's
// id, state, parallelism and last checkpoint; docs/running.md#http-api): what the AM read last,
// at most every FrameworkDetailsInterval.
type FrameworkStatus struct {
	// Title names what the details are of ("Flink job").
	Title   string   `json:"title"`
	Details []Detail `json:"details,omitempty"`
	// Series are values of the framework's work over time (a Flink job's parallelism per vertex,
	// docs/flink.md#autoscaling), at most MaxSeries of at most MaxSeriesPoints each.
	Series []FrameworkSeries `json:"series,omitempty"`
	// At is when the framework answered last; Error why its last read failed (the details are then
	// the last ones read, as of At).
	At    time.Time `json:"at,omitzero"`
	Error string    `json:"error,omitempty"`
}

// FrameworkSeries is one value of a framework's work over time, its points oldest first: the page
// draws it as a table.
type FrameworkSeries struct {
	Name   string        `json:"name"`
	Points []SeriesPoint `json:"points"`
}

// SeriesPoint is a FrameworkSeries' value at a time, and what it was (Note: "decided", "applied",
// "running", bounded as a detail's name).
type SeriesPoint struct {
	At    time.Time `json:"at"`
	Value int64     `json:"value"`
	Note  string    `json:"note,omitempty"`
}

// Bounds of a framework's details: the AM cuts what a framework hands it to them.
const (
	// MaxSeries and MaxSeriesPoints bound a framework's series (the newest points kept); a series'
	// name is bounded as a detail's value.
	MaxSeries          = 16
	MaxSeriesPoints    = 100
	MaxDetails         = 16
	MaxDetailNameBytes = 40
	MaxDetailBytes     = 400
	// FrameworkDetailsInterval is how often the AM asks the framework for its details (and so how
	// soon a framework's events follow what they tell of).
	FrameworkDetailsInterval = 3 * time.Second
)

// StopRequest is the body of POST /api/v1/stop, the secret-only HTTPS endpoint that stops the
// application through its framework, answered with a StopResult (yarn-am stop,
// docs/running.md#http-api).
type StopRequest struct {
	// StateDir is where the framework keeps the work's state before it stops ("" = the framework's
	// configured place, if any). Its JSON name is that of yarn-am stop's flag, --savepoint, after
	// the one framework that answers a stop today (Flink).
	StateDir string `json:"savepoint,omitempty"`
	// Timeout bounds the stop, as a Go duration ("5m"); "" = DefaultStopTimeout, at most MaxStopTimeout.
	Timeout string `json:"timeout,omitempty"`
}

// StopResult is the answer of POST /api/v1/stop: what the framework kept (a Flink job's savepoint
// path) and what it calls it.
type StopResult struct {
	Result string `json:"result"`
	// What names Result ("Savepoint"); yarn-am stop prints "<What>: <Result>" ("State" when empty).
	What string `json:"what,omitempty"`
}

// KeepStateRequest is the body of POST /api/v1/savepoint, the secret-only HTTPS endpoint that keeps
// the work's state without stopping it, answered with a KeepStateResult (yarn-am savepoint,
// docs/running.md#http-api). Its bounds are a stop's.
type KeepStateRequest struct {
	// Dir is where the framework writes the state ("" = the framework's configured place, if any).
	Dir string `json:"dir,omitempty"`
	// Timeout bounds the request, as a Go duration ("5m"); "" = DefaultStopTimeout, at most
	// MaxStopTimeout.
	Timeout string `json:"timeout,omitempty"`
}

// KeepStateResult is the answer of POST /api/v1/savepoint: where the framework wrote the state (a
// Flink job's savepoint path) and what it calls it.
type KeepStateResult struct {
	Path string `json:"path"`
	// What names Path ("Savepoint"); yarn-am savepoint prints "<What>: <Path>" ("State" when empty).
	What string `json:"what,omitempty"`
}

// Bounds of a stop.
const (
	DefaultStopTimeout = 5 * time.Minute
	MaxStopTimeout     = 30 * time.Minute
)

// FrameworkPublishedPath is where the AM serves what the job's framework published for its
// TaskExecutors (framework.AMStart.Publish): GET with "Authorization: Bearer <secret>" over HTTPS
// answers 200 and a JSON object of names to values (those published so far, maybe none), at most
// MaxPublishedBytes.
const FrameworkPublishedPath = "/api/v1/framework/published"

// MaxPublishedBytes bounds the published values' JSON: a few addresses.
const MaxPublishedBytes = 16 << 10
