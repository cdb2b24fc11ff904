package flink

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// This file holds the package's shared names: what every part of a [flink] job names (the
// framework's name, its event type, a job's name in a message) and the helpers several files use.
// It sits below them all and names nothing of theirs (TestDocNamesEveryFile lists the files).

// frameworkName is the framework's name and its job-file table's.
const frameworkName = "flink"

// flinkFramework runs a [flink] job: its JobManager as the AM's driver, its TaskExecutors as TaskManagers
// (docs/flink.md#integration-design).
type flinkFramework struct{ framework.Base }

// eventJob is the type of the events a Flink job's AM adds: the job's state changed, a checkpoint
// completed (at most one event per checkpointEventEvery), it was rescaled, a savepoint was written,
// it was restored, it was stopped (docs/running.md#events).
const eventJob contract.EventType = "flink-job"

// current is the job to show: the newest that has not ended, else the newest.
func current(jobs []flinkdist.Job) flinkdist.Job {
	jobs = slices.Clone(jobs)
	slices.SortStableFunc(jobs, func(a, b flinkdist.Job) int {
		if ta, tb := flinkdist.Terminal(a.State), flinkdist.Terminal(b.State); ta != tb {
			if ta {
				return 1
			}
			return -1
		}
		return cmp.Compare(b.Start, a.Start)
	})
	return jobs[0]
}

func jobName(j flinkdist.Job) string { return "Flink job " + j.Name + " (" + j.ID + ")" }

func severity(state string) string {
	switch state {
	case "FAILED":
		return contract.SeverityError
	case "CANCELED", "FAILING", "RESTARTING":
		return contract.SeverityWarning
	}
	return contract.SeverityInfo
}

// flinkSetup is what both Flink processes read in their container: the staged job, the localised
// home, the layered configuration (docs/flink.md#configuration) and the JobManager's RPC address.
type flinkSetup struct {
	job           *jobfile.Job
	spec          *flinkSpec // the job's [flink] table
	home          *flinkdist.Home
	conf          *flinkdist.Config
	jobKeys       *flinkdist.Config // the job's own Flink keys: [flink.config], then -D
	dir           string            // the container's working directory
	host, rpcPort string            // $YARN_AM_FLINK_JOBMANAGER (a TaskManager), $YARN_AM_FLINK_HOST and no port (the JobManager)
	javaHome      string            // the localised JDK of [flink] java-home; "" for the container's own java
	failf         func(format string, a ...any) int
}

// flinkUnits are the units of a Flink duration (TimeUtils), each with its names.
var flinkUnits = []struct {
	names []string
	unit  time.Duration
}{
	{[]string{"d", "day", "days"}, 24 * time.Hour},
	{[]string{"h", "hour", "hours"}, time.Hour},
	{[]string{"min", "m", "minute", "minutes"}, time.Minute},
	{[]string{"s", "sec", "secs", "second", "seconds"}, time.Second},
	{[]string{"ms", "milli", "millis", "millisecond", "milliseconds"}, time.Millisecond},
	{[]string{"us", "µs", "micro", "micros", "microsecond", "microseconds"}, time.Microsecond},
	{[]string{"ns", "nano", "nanos", "nanosecond", "nanoseconds"}, time.Nanosecond},
}

// flinkDuration parses a Flink duration: a non-negative integer and a unit, milliseconds without one.
func flinkDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if i == 0 || err != nil {
		return 0, fmt.Errorf("not a number with a unit")
	}
	unit := strings.ToLower(strings.TrimSpace(s[i:]))
	if unit == "" {
		return time.Duration(n) * time.Millisecond, nil
	}
	for _, u := range flinkUnits {
		if slices.Contains(u.names, unit) {
			if n > int64(1<<62)/int64(u.unit) {
				return 0, fmt.Errorf("too large")
			}
			return time.Duration(n) * u.unit, nil
		}
	}
	return 0, fmt.Errorf("unknown unit %q", bounded(unit))
}

// expandTilde expands a leading ~/ (or a lone ~) against the user's home directory, as a shell would:
// home = "~/flink" in a job file means the user's, not a directory named ~ beside the job file.
func expandTilde(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return p
	}
	return filepath.Join(h, p[1:])
}

// bounded cuts a value shown in a message as the job file does.
func bounded(s string) string { return jobfile.Bounded(s) }

// keySavepointsDir is Flink's default savepoint directory, which a stop without --savepoint uses.
const keySavepointsDir = "state.savepoints.dir"

// keySavepointInterval is the [flink] key of the savepoint schedule (savepoints.go), here because
// restorefrom.go names it too when it starts a job from a scheduled savepoint.
const keySavepointInterval = "savepoint-interval"

// pollEvery calls poll every interval, each call within timeout, until ctx ends. After each call it
// hands setFailed why it failed, or "" when it did not (or ctx ended), so that the details say why a
// reading is missing and are never silently stale.
func pollEvery(ctx context.Context, interval, timeout time.Duration, poll func(context.Context) error, setFailed func(string)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		c, cancel := context.WithTimeout(ctx, timeout)
		err := poll(c)
		cancel()
		why := ""
		if err != nil && ctx.Err() == nil {
			why = err.Error()
		}
		setFailed(why)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
