package flinkdist

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
)

// This file reads what the AM's autoscaler measures of a running job through the JobManager's REST
// API (docs/flink.md#autoscaling): the job graph's edges (/jobs/<id>/plan) and each vertex's metrics
// aggregated over its subtasks (/jobs/<id>/vertices/<vid>/subtasks/metrics), on Flink 1.20 and 2.x
// alike.

// PlanNode is one vertex of /jobs/<id>/plan: its parallelism and the vertices it reads from.
type PlanNode struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Parallelism int    `json:"parallelism"`
	Inputs      []struct {
		ID string `json:"id"`
	} `json:"inputs"`
}

// JobPlan returns the vertices of /jobs/<id>/plan.
func (c *REST) JobPlan(ctx context.Context, jobID string) ([]PlanNode, error) {
	if err := checkJobID(jobID); err != nil {
		return nil, err
	}
	var doc struct {
		Plan struct {
			Nodes []PlanNode `json:"nodes"`
		} `json:"plan"`
	}
	if err := c.get(ctx, "/jobs/"+url.PathEscape(jobID)+"/plan", &doc); err != nil {
		return nil, err
	}
	return doc.Plan.Nodes, nil
}

// MetricValue is one aggregate of a metric: a number, NaN when the JobManager has none (Flink
// writes a missing or unmeasurable value as "NaN", a string, or leaves the aggregate out).
type MetricValue float64

// UnmarshalJSON reads a number, a numeric string or "NaN"/"Infinity" (Jackson's texts of them).
func (m *MetricValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*m = MetricValue(math.NaN())
		return nil
	}
	var f float64
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "NaN", "Infinity", "-Infinity":
			*m = MetricValue(math.NaN())
			return nil
		}
		if _, err := fmt.Sscan(s, &f); err != nil {
			return fmt.Errorf("metric value %s: not a number", shown(s))
		}
		*m = MetricValue(f)
		return nil
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*m = MetricValue(f)
	return nil
}

// Aggregate is one metric of a vertex over its subtasks: the sum, the average and the largest.
type Aggregate struct {
	ID  string      `json:"id"`
	Sum MetricValue `json:"sum"`
	Avg MetricValue `json:"avg"`
	Max MetricValue `json:"max"`
}

// maxMetricNames bounds one question: the names go in the query string.
const maxMetricNames = 40

// VertexMetricNames lists the metrics a vertex's subtasks report (GET
// /jobs/<id>/vertices/<vid>/subtasks/metrics without get): the task's and, prefixed with their
// operator's name, each operator's.
func (c *REST) VertexMetricNames(ctx context.Context, jobID, vertexID string) ([]string, error) {
	if err := checkJobID(jobID); err != nil {
		return nil, err
	}
	if !jobIDPattern.MatchString(vertexID) {
		return nil, fmt.Errorf("flink rest: vertex id %s: want 32 hex digits", shown(vertexID))
	}
	var doc []struct {
		ID string `json:"id"`
	}
	if err := c.get(ctx, "/jobs/"+url.PathEscape(jobID)+"/vertices/"+url.PathEscape(vertexID)+"/subtasks/metrics", &doc); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(doc))
	for _, d := range doc {
		out = append(out, d.ID)
	}
	return out, nil
}

// VertexMetrics returns the named metrics of a vertex aggregated over its subtasks (sum, avg, max),
// by name; a metric the vertex does not report is absent.
func (c *REST) VertexMetrics(ctx context.Context, jobID, vertexID string, names []string) (map[string]Aggregate, error) {
	if err := checkJobID(jobID); err != nil {
		return nil, err
	}
	if !jobIDPattern.MatchString(vertexID) {
		return nil, fmt.Errorf("flink rest: vertex id %s: want 32 hex digits", shown(vertexID))
	}
	if len(names) == 0 || len(names) > maxMetricNames {
		return nil, fmt.Errorf("flink rest: %d metric names: ask for 1 to %d at once", len(names), maxMetricNames)
	}
	q := url.Values{"get": {strings.Join(names, ",")}, "agg": {"sum,avg,max"}}
	var doc []Aggregate
	if err := c.get(ctx, "/jobs/"+url.PathEscape(jobID)+"/vertices/"+url.PathEscape(vertexID)+"/subtasks/metrics?"+q.Encode(), &doc); err != nil {
		return nil, err
	}
	out := make(map[string]Aggregate, len(doc))
	for _, a := range doc {
		out[a.ID] = a
	}
	return out, nil
}

// VertexTaskManagers lists the ids of the TaskManagers that run a vertex's subtasks (GET
// /jobs/<id>/vertices/<vid>/taskmanagers; with yarn-am, their YARN container ids).
func (c *REST) VertexTaskManagers(ctx context.Context, jobID, vertexID string) ([]string, error) {
	if err := checkJobID(jobID); err != nil {
		return nil, err
	}
	if !jobIDPattern.MatchString(vertexID) {
		return nil, fmt.Errorf("flink rest: vertex id %s: want 32 hex digits", shown(vertexID))
	}
	var doc struct {
		TaskManagers []struct {
			ID string `json:"taskmanager-id"`
		} `json:"taskmanagers"`
	}
	if err := c.get(ctx, "/jobs/"+url.PathEscape(jobID)+"/vertices/"+url.PathEscape(vertexID)+"/taskmanagers", &doc); err != nil {
		return nil, err
	}
	var out []string
	for _, tm := range doc.TaskManagers {
		if tm.ID != "" {
			out = append(out, tm.ID)
		}
	}
	return out, nil
}
