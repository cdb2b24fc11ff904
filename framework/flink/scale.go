package flink

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// scalePolicy says whether a change of the number of TaskManagers is safe for the job
// (docs/flink.md#scaling-failures-logs): Flink's adaptive scheduler in reactive mode follows the
// TaskManagers both ways; a session cluster takes more TaskManagers, while fewer would stop tasks of
// its running jobs; an application whose parallelism is fixed when it starts can use neither, and
// fewer TaskManagers fail it. A refusal says what would work.
func scalePolicy(reactive, session bool) func(ctx context.Context, from, to int) error {
	return func(_ context.Context, from, to int) error {
		switch {
		case reactive:
			return nil
		case session && to > from:
			return nil
		case session:
			return fmt.Errorf("flink: a session cluster's TaskManagers run the tasks of its jobs: %d → %d would stop the tasks on the TaskManagers taken away; stop or rescale those jobs first, or run the job with \"scheduler-mode\" = \"reactive\" in [flink.config] (docs/flink.md#reactive-scaling)", from, to)
		case to > from:
			return fmt.Errorf("flink: the job's parallelism is fixed when it starts (scheduler-mode is not reactive): %d → %d TaskManagers would add slots no task uses; set \"scheduler-mode\" = \"reactive\" in [flink.config] to have the job follow yarn-am scale (docs/flink.md#reactive-scaling)", from, to)
		default:
			return fmt.Errorf("flink: the job's parallelism is fixed when it starts (scheduler-mode is not reactive): %d → %d TaskManagers would fail the job (its tasks on the TaskManagers taken away); set \"scheduler-mode\" = \"reactive\" in [flink.config] to have the job follow yarn-am scale (docs/flink.md#reactive-scaling)", from, to)
		}
	}
}

// isReactive reads scheduler-mode from the configuration the processes will have.
func isReactive(spec *flinkSpec) bool {
	v, _ := amConfig(spec).Get("scheduler-mode")
	return strings.EqualFold(strings.TrimSpace(v), "reactive")
}

// amConfig is the configuration the processes will have, as the AM reads it: the localised home's
// (in the AM container's working directory), the job file's Flink keys, then -D.
func amConfig(spec *flinkSpec) *flinkdist.Config {
	conf := flinkdist.NewConfig()
	if dir, err := os.Getwd(); err == nil {
		if h, err := flinkdist.OpenHome(filepath.Join(dir, homeAlias)); err == nil {
			if c, _, err := h.Config(); err == nil {
				conf = c
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Config)) {
		conf.Set(k, spec.Config[k])
	}
	_ = conf.ApplyDefines(spec.Defines)
	return conf
}
