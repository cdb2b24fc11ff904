package flink

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/internal/text"
)

// This file is the record the AM keeps of a Flink job across its attempts
// (docs/flink.md#when-the-applicationmaster-is-lost): its layout, read and written within
// framework.MaxState. recover.go keeps it current, restorefrom.go picks a start from it.

// recoveryVersion is the layout of recovery; a state of another layout is not used.
const recoveryVersion = 1

// maxRestores is how many attempts' starts the state remembers (status shows them).
const maxRestores = 5

// recovery is what the AM keeps of a Flink job across its attempts.
type recovery struct {
	Version int `json:"v"`
	// The latest completed checkpoint an attempt saw: its job, id and path (Flink's external_path).
	JobID      string `json:"job,omitempty"`
	Checkpoint int64  `json:"checkpoint,omitempty"`
	Path       string `json:"path,omitempty"`
	Attempt    int    `json:"attempt,omitempty"` // the attempt that saw it
	// CheckpointAt is when it completed (Flink's latest ack, Unix ms); 0: not recorded.
	CheckpointAt int64 `json:"checkpoint_at,omitempty"`
	// Savepoints are those the AM took (savepoints.go): on its schedule, which deletes the oldest
	// beyond savepoints-kept, and on demand; oldest first.
	Savepoints []keptSavepoint `json:"savepoints,omitempty"`
	// Restores are the later attempts' starts, oldest first, at most maxRestores.
	Restores []restore `json:"restores,omitempty"`
}

// restore is how one attempt started the job: from Checkpoint (or a savepoint) at Path, or from
// nothing (Path "").
type restore struct {
	Attempt    int    `json:"attempt"`
	Checkpoint int64  `json:"checkpoint,omitempty"`
	Path       string `json:"path,omitempty"`
	Savepoint  bool   `json:"savepoint,omitempty"`
}

// keptSavepoint is a savepoint the AM took: where, of which job, when it completed (Unix ms, the
// AM's clock), and whether the schedule took it (only those are ever deleted).
type keptSavepoint struct {
	Path      string `json:"path"`
	JobID     string `json:"job,omitempty"`
	At        int64  `json:"at"`
	Scheduled bool   `json:"scheduled,omitempty"`
}

// loadRecovery reads the kept state; nil, nil when there is none (or of another layout).
func loadRecovery(ctx context.Context, store framework.StateStore) (*recovery, error) {
	data, err := store.Load(ctx)
	if err != nil || data == nil {
		return nil, err
	}
	if len(data) > framework.MaxState {
		return nil, fmt.Errorf("the kept Flink state is %d bytes; at most %d are read", len(data), framework.MaxState)
	}
	var r recovery
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("the kept Flink state is not readable: %w", err)
	}
	if r.Version != recoveryVersion {
		return nil, nil
	}
	return &r, nil
}

// encode marshals r within framework.MaxState (a path of Flink's is far shorter; a longer one is
// not kept).
func (r recovery) encode() ([]byte, error) {
	r.Version = recoveryVersion
	data, err := json.Marshal(r)
	if err == nil && len(data) > framework.MaxState {
		err = fmt.Errorf("the Flink state to keep is %d bytes (checkpoint path %s); at most %d", len(data), text.Quote(r.Path), framework.MaxState)
	}
	return data, err
}
