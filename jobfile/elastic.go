package jobfile

import (
	"strings"
	"time"
)

// DefaultElasticInterval is taskexecutor.elastic-interval's default: an elastic gang grows at most
// this often (docs/running.md#elastic-gangs).
const DefaultElasticInterval = 60 * time.Second

// elastic reads taskexecutor.min-instances and taskexecutor.elastic-interval
// (docs/job-file.md#the-job-file): the smallest gang round that may run (default: instances, a rigid
// gang) and how long a round runs before extra allocations grow it. Both need gang = true, but
// min-instances also goes with a framework table that takes it (fwMin, TableInfo.MinInstances).
func (r reader) elastic(teT map[string]any, te *TaskExecutorSpec, fwMin string) {
	te.MinInstances = te.Instances
	te.ElasticInterval = DefaultElasticInterval
	if v, ok := teT["min-instances"]; ok {
		n, isInt := v.(int64)
		te.MinInstancesSet = true
		switch {
		case !te.Gang && fwMin == "":
			r.add("taskexecutor.min-instances = %s is set but taskexecutor.gang is not true: an elastic gang is a gang; set gang = true, or remove min-instances", show(v))
		case !isInt || n < 1 || n > int64(te.Instances):
			what := ""
			if !isInt {
				what = ", not " + typeName(v)
			}
			if !te.Gang {
				what += " (" + fwMin + ")"
			}
			r.add("taskexecutor.min-instances = %s: want an integer from 1 to taskexecutor.instances = %d%s", show(v), te.Instances, what)
		default:
			te.MinInstances = int(n)
		}
	}
	s, ok := r.str(teT, "elastic-interval", "taskexecutor.elastic-interval")
	if !ok {
		return
	}
	shown := s
	if len(shown) > 40 {
		shown = shown[:40] + "..."
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	switch {
	case !te.Gang:
		r.add("taskexecutor.elastic-interval = %q is set but taskexecutor.gang is not true: set gang = true and min-instances, or remove elastic-interval", shown)
	case err != nil:
		r.add("taskexecutor.elastic-interval = %q: not a duration; use a number with a unit, e.g. \"60s\" (the default) or \"5m\"", shown)
	case d <= 0:
		r.add("taskexecutor.elastic-interval = %q: must be positive, e.g. \"60s\"", shown)
	default:
		te.ElasticInterval = d
	}
}
