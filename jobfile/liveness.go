package jobfile

import (
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// livenessTimeout reads taskexecutor.liveness-timeout (docs/job-file.md#the-job-file): how long a
// running TaskExecutor's launcher may be silent before the AM asks its NodeManager whether it is
// lost. At least contract.MinLivenessTimeout (three liveness intervals), so that a failed liveness
// message and a late one are never a loss.
func (r reader) livenessTimeout(teT map[string]any) time.Duration {
	s, ok := r.str(teT, "liveness-timeout", "taskexecutor.liveness-timeout")
	if !ok {
		return contract.DefaultLivenessTimeout
	}
	shown := s
	if len(shown) > 40 {
		shown = shown[:40] + "..."
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	switch {
	case err != nil:
		r.add("taskexecutor.liveness-timeout = %q: not a duration; use a number with a unit, e.g. %q (the default) or \"2m\"", shown, contract.DefaultLivenessTimeout.String())
	case d < contract.MinLivenessTimeout:
		r.add("taskexecutor.liveness-timeout = %q: must be at least %s (three of the launchers' liveness intervals of %s)", shown, contract.MinLivenessTimeout, contract.LivenessInterval)
	default:
		return d
	}
	return contract.DefaultLivenessTimeout
}
