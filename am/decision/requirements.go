package decision

import (
	"github.com/yarn-am/yarn-am/contract"
)

// This file is the declared requirement as the driver API changes it (PUT /api/v1/requirements): the
// body, its validation, and the phase of TaskExecutors being stopped by a scale-down.

// scaleDown picks the TaskExecutors to stop so that at most target stay active (launching or
// running): those in first (a framework's idle workers, that run nothing), then the newest
// (containers are in the order the AM accepted them), since the oldest have done the most work and
// hold warm state. Containers already stopping or completed are not active. It returns nil when
// nothing has to stop.
func scaleDown(containers []Container, target int, first map[string]bool) []Container {
	active := func(c Container) bool { return c.Phase == contract.Launching || c.Phase == contract.Running }
	n := 0
	for _, c := range containers {
		if active(c) {
			n++
		}
	}
	excess := n - max(target, 0)
	var stop []Container
	for pass := 0; pass < 2; pass++ {
		for i := len(containers) - 1; i >= 0 && excess > 0; i-- {
			c := containers[i]
			if active(c) && first[c.ID] == (pass == 0) {
				stop = append(stop, c)
				excess--
			}
		}
	}
	return stop
}
