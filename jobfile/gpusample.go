package jobfile

import (
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// gpuSampleInterval reads taskexecutor.gpu-sample-interval (docs/job-file.md#the-job-file): how often
// each launcher samples its container's GPUs; "off" (0 here) samples nothing.
func (r reader) gpuSampleInterval(teT map[string]any) time.Duration {
	return r.offDuration(teT, "gpu-sample-interval", contract.DefaultGPUSampleInterval, contract.MinGPUSampleInterval, `"10s" (the default) or "1m"`)
}

// idleGPUWarning reads taskexecutor.idle-gpu-warning: how long a running container's GPU may stay
// under contract.IdleGPUPercent before the AM emits an idle-gpu event; "off" (0 here) warns never.
func (r reader) idleGPUWarning(teT map[string]any) time.Duration {
	return r.offDuration(teT, "idle-gpu-warning", contract.DefaultIdleGPUWarning, time.Second, `"10m" (the default) or "30m"`)
}

// offDuration reads a duration key of [taskexecutor] that also takes contract.GPUSampleOff (returned
// as 0); def when absent or wrong (the error is recorded).
func (r reader) offDuration(teT map[string]any, k string, def, least time.Duration, examples string) time.Duration {
	full := "taskexecutor." + k
	s, ok := r.str(teT, k, full)
	if !ok {
		return def
	}
	shown := s
	if len(shown) > 40 {
		shown = shown[:40] + "..."
	}
	v := strings.TrimSpace(s)
	if strings.EqualFold(v, contract.GPUSampleOff) {
		return 0
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		r.add("%s = %q: not a duration; use a number with a unit, e.g. %s, or %q", full, shown, examples, contract.GPUSampleOff)
	case d < least:
		r.add("%s = %q: must be at least %s, or %q", full, shown, least, contract.GPUSampleOff)
	default:
		return d
	}
	return def
}
