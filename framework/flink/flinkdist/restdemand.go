package flinkdist

import (
	"context"
	"fmt"
	"net/url"
)

// This file is what a job needs of TaskManager slots, as the JobManager's REST API says it
// (docs/flink.md#taskmanagers-on-demand): the adaptive scheduler's per-vertex parallelism bounds,
// which it reads and sets, and which TaskManagers hold no task.

// Bounds is the parallelism the adaptive scheduler may run a vertex at: it runs it at up to
// Upper with the slots it has, and waits while it has fewer than Lower.
type Bounds struct {
	Lower int `json:"lowerBound"`
	Upper int `json:"upperBound"`
}

// vertexRequirements is one vertex's entry in /jobs/<id>/resource-requirements.
type vertexRequirements struct {
	Parallelism Bounds `json:"parallelism"`
}

// ResourceRequirements returns the job's parallelism bounds by vertex id (GET
// /jobs/<id>/resource-requirements; the adaptive scheduler's, an error with the default one).
func (c *REST) ResourceRequirements(ctx context.Context, jobID string) (map[string]Bounds, error) {
	if err := checkJobID(jobID); err != nil {
		return nil, err
	}
	var doc map[string]vertexRequirements
	if err := c.get(ctx, "/jobs/"+url.PathEscape(jobID)+"/resource-requirements", &doc); err != nil {
		return nil, err
	}
	out := make(map[string]Bounds, len(doc))
	for id, v := range doc {
		out[id] = v.Parallelism
	}
	return out, nil
}

// SetResourceRequirements sets the job's parallelism bounds (PUT /jobs/<id>/resource-requirements):
// the adaptive scheduler rescales the job to them with the slots it has. Every vertex of the job is
// to be named.
func (c *REST) SetResourceRequirements(ctx context.Context, jobID string, bounds map[string]Bounds) error {
	if err := checkJobID(jobID); err != nil {
		return err
	}
	body := make(map[string]vertexRequirements, len(bounds))
	for id, b := range bounds {
		if b.Lower < 1 || b.Upper < b.Lower {
			return fmt.Errorf("flink rest: vertex %s: parallelism %d..%d: want 1 <= lower bound <= upper bound", shown(id), b.Lower, b.Upper)
		}
		body[id] = vertexRequirements{Parallelism: b}
	}
	return c.call(ctx, "PUT", "/jobs/"+url.PathEscape(jobID)+"/resource-requirements", body, nil)
}
