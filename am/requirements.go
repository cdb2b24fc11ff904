package am

import (
	"fmt"
)

// This file is the declared requirement as the driver API changes it (PUT /api/v1/requirements): the
// body, its validation, and the phase of TaskExecutors being stopped by a scale-down.

// Stopping is the phase of a TaskExecutor the AM is stopping because the requirement went down; it
// no longer counts as active, and completes with -105 (killed by the AM, not a failure).
const Stopping Phase = "STOPPING"

// RequirementsUpdate is the body of PUT /api/v1/requirements: the new number of TaskExecutors of the
// job's profile. Scaling down cancels pending asks first, then stops the newest TaskExecutors.
type RequirementsUpdate struct {
	Instances *int `json:"instances"`
}

// MaxInstances bounds a requirement (a typo like 10000000 should not flood the RM).
const MaxInstances = 100000

// Validate says what is wrong with u, naming the field and what would be valid.
func (u RequirementsUpdate) Validate() error {
	if u.Instances == nil {
		return fmt.Errorf(`the body needs "instances": the number of TaskExecutors wanted, e.g. {"instances": 2}`)
	}
	if *u.Instances < 0 || *u.Instances > MaxInstances {
		return fmt.Errorf(`"instances": %d: want 0..%d`, *u.Instances, MaxInstances)
	}
	return nil
}

// ScaleDown picks the TaskExecutors to stop so that at most target stay active (launching or
// running): the newest first (containers are in the order the AM accepted them), since the oldest
// have done the most work and hold warm state. Containers already stopping or completed are not
// active. It returns nil when nothing has to stop.
func ScaleDown(containers []Container, target int) []Container {
	active := 0
	for _, c := range containers {
		if c.Phase == Launching || c.Phase == Running {
			active++
		}
	}
	excess := active - max(target, 0)
	var stop []Container
	for i := len(containers) - 1; i >= 0 && excess > 0; i-- {
		if c := containers[i]; c.Phase == Launching || c.Phase == Running {
			stop = append(stop, c)
			excess--
		}
	}
	return stop
}
