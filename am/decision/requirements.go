package decision

import (
	"github.com/yarn-am/yarn-am/contract"
)

// This file is the declared requirement as the driver API changes it (PUT /api/v1/requirements): the
// body, its validation, and the phase of TaskExecutors being stopped by a scale-down.

// scaleDown picks the TaskExecutors to stop so that at most target stay active (launching or
// running): the newest first (containers are in the order the AM accepted them), since the oldest
// have done the most work and hold warm state. Containers already stopping or completed are not
// active. It returns nil when nothing has to stop.
func scaleDown(containers []Container, target int) []Container {
	active := 0
	for _, c := range containers {
		if c.Phase == contract.Launching || c.Phase == contract.Running {
			active++
		}
	}
	excess := active - max(target, 0)
	var stop []Container
	for i := len(containers) - 1; i >= 0 && excess > 0; i-- {
		if c := containers[i]; c.Phase == contract.Launching || c.Phase == contract.Running {
			stop = append(stop, c)
			excess--
		}
	}
	return stop
}
