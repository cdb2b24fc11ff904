package flinkdist

import (
	"context"
	"fmt"
	"net/url"
	"time"
)

// This file reads one job's details and stops it with a savepoint through the JobManager's REST API
// (docs/flink.md#status-and-events, docs/flink.md#stopping-with-a-savepoint).

// JobDetail is what /jobs/<id> says of a job: its state and the parallelism of its vertices.
type JobDetail struct {
	ID       string   `json:"jid"`
	Name     string   `json:"name"`
	State    string   `json:"state"`
	Vertices []Vertex `json:"vertices"`
}

// Vertex is one vertex of /jobs/<id>: its parallelism and, where the JobManager says it, its slot
// sharing group (the vertices of one group share a slot per subtask).
type Vertex struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Parallelism      int    `json:"parallelism"`
	MaxParallelism   int    `json:"maxParallelism"`
	SlotSharingGroup string `json:"slotSharingGroupId,omitempty"`
}

// Parallelism is the job's: the largest of its vertices' (0 when it has none yet).
func (d *JobDetail) Parallelism() int {
	p := 0
	for _, v := range d.Vertices {
		p = max(p, v.Parallelism)
	}
	return p
}

// Checkpoint is one checkpoint or savepoint in /jobs/<id>/checkpoints.
type Checkpoint struct {
	ID           int64  `json:"id"`
	IsSavepoint  bool   `json:"is_savepoint"`
	Type         string `json:"checkpoint_type"` // CHECKPOINT, SAVEPOINT, SYNC_SAVEPOINT (a stop-with-savepoint's), ...
	AckTimestamp int64  `json:"latest_ack_timestamp"`
	ExternalPath string `json:"external_path"`
}

// syncSavepoint is the checkpoint_type of a stop-with-savepoint's savepoint (Flink's
// RestAPICheckpointType): the job stopped right after it.
const syncSavepoint = "SYNC_SAVEPOINT"

// Completed is when the checkpoint completed (its last acknowledgement).
func (c *Checkpoint) Completed() time.Time { return time.UnixMilli(c.AckTimestamp) }

// Restored is the checkpoint or savepoint a job started from.
type Restored struct {
	ID           int64  `json:"id"`
	IsSavepoint  bool   `json:"is_savepoint"`
	ExternalPath string `json:"external_path"`
	Timestamp    int64  `json:"restore_timestamp"`
}

// Checkpoints is /jobs/<id>/checkpoints: the counts and the latest of each kind (nil = none).
type Checkpoints struct {
	Counts struct {
		Completed int `json:"completed"`
		Failed    int `json:"failed"`
		Restored  int `json:"restored"`
	} `json:"counts"`
	Latest struct {
		Completed *Checkpoint `json:"completed"`
		Savepoint *Checkpoint `json:"savepoint"`
		Restored  *Restored   `json:"restored"`
	} `json:"latest"`
}

// JobDetail returns /jobs/<id>.
func (c *REST) JobDetail(ctx context.Context, jobID string) (*JobDetail, error) {
	if err := checkJobID(jobID); err != nil {
		return nil, err
	}
	var d JobDetail
	if err := c.get(ctx, "/jobs/"+url.PathEscape(jobID), &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Checkpoints returns /jobs/<id>/checkpoints.
func (c *REST) Checkpoints(ctx context.Context, jobID string) (*Checkpoints, error) {
	if err := checkJobID(jobID); err != nil {
		return nil, err
	}
	var cp Checkpoints
	if err := c.get(ctx, "/jobs/"+url.PathEscape(jobID)+"/checkpoints", &cp); err != nil {
		return nil, err
	}
	return &cp, nil
}

// StopWithSavepoint asks the JobManager to stop job with a savepoint in dir ("" = its
// state.savepoints.dir), as flink stop does: POST /jobs/<id>/stop without draining, so the job
// ends FINISHED and can resume from the savepoint. It returns the operation's trigger id.
func (c *REST) StopWithSavepoint(ctx context.Context, jobID, dir string) (string, error) {
	body := struct {
		Target string `json:"targetDirectory,omitempty"`
		Drain  bool   `json:"drain"`
	}{Target: dir}
	return c.trigger(ctx, jobID, "/stop", body)
}

// Savepoint takes a savepoint of job in dir ("" = its state.savepoints.dir) without stopping it, as
// flink savepoint does (TriggerSavepoint, then WaitSavepoint polling every poll), and returns its
// location. It gives up when ctx ends.
func (c *REST) Savepoint(ctx context.Context, jobID, dir string, poll time.Duration) (string, error) {
	trigger, err := c.TriggerSavepoint(ctx, jobID, dir)
	if err != nil {
		return "", err
	}
	return c.WaitSavepoint(ctx, jobID, trigger, poll)
}

// WaitSavepoint polls the savepoint operation trigger of job every poll
// (GET /jobs/<id>/savepoints/<trigger>) until it completes, and returns the savepoint's location;
// a failed operation is an error with its innermost cause. It gives up when ctx ends.
func (c *REST) WaitSavepoint(ctx context.Context, jobID, trigger string, poll time.Duration) (string, error) {
	op, err := c.waitOperation(ctx, jobID, "savepoint", trigger, poll)
	if err != nil {
		return "", err
	}
	if op.Location == "" {
		return "", fmt.Errorf("flink: the savepoint completed without a location")
	}
	return op.Location, nil
}
