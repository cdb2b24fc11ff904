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

// MinIdleGPURelease is the shortest taskexecutor.idle-gpu-release: an idle spell of a few samples
// only says nothing of a worker that is loading its data.
const MinIdleGPURelease = 10 * time.Second

// idleGPURelease reads taskexecutor.idle-gpu-release (docs/gpus.md#idle-gpus-given-back): how long
// every GPU of a running container may stay idle before the AM warns and releases it; off (0) by
// default. Idleness is read from the samples, so it needs sampling, at least two samples' worth.
func (r reader) idleGPURelease(teT map[string]any, interval time.Duration) time.Duration {
	d := r.offDuration(teT, "idle-gpu-release", 0, MinIdleGPURelease, `"30m" or "1h"`)
	switch {
	case d == 0:
	case interval == 0:
		r.add("taskexecutor.idle-gpu-release = %q needs GPU samples, but taskexecutor.gpu-sample-interval is %q: set a sample interval, or remove idle-gpu-release", d, contract.GPUSampleOff)
		return 0
	case d < 2*interval:
		r.add("taskexecutor.idle-gpu-release = %q: must be at least twice taskexecutor.gpu-sample-interval = %q (%s)", d, interval, 2*interval)
		return 0
	}
	return d
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
