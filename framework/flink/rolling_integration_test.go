//go:build integration && rolling

package flink_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// The rolling-logs suite (make test-rolling-logs, docs/flink.md#logs-that-roll): its own mini
// cluster with rolling log aggregation every 5 s (LOG_ROLL_SEC=5), which no other test needs.

// rollingLogSize and rollingLogFiles are the test job's [flink] log-max-size and log-max-files.
const (
	rollingLogSize  = 64 << 10
	rollingLogFiles = 3
)

var (
	flinkLogBase   = regexp.MustCompile(`^((?:jobmanager|taskmanager)\.(?:log|out|err))(?:\.([0-9]+))?$`)
	logEventStart  = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} `)
	rolledAggPart  = regexp.MustCompile(`==> (container_\S+) on \S+: (jobmanager\.log\.[0-9]+) \(([0-9]+) bytes, rolled, aggregated\) <==\n(.*)`)
	rolledAggNoted = regexp.MustCompile(`yarn-am logs: application_\S+ is running: [0-9]+ log file\(s\) marked "rolled, aggregated" are parts its NodeManagers uploaded`)
)

// appLogDirs are the application's container log directories on the mini cluster's NodeManagers.
func appLogDirs(id string) []string {
	var out []string
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		cs, _ := filepath.Glob(filepath.Join(d, id, "container_*"))
		out = append(out, cs...)
	}
	return out
}

// rollSnapshot is what the application's log directories held at one moment.
type rollSnapshot struct {
	total     int64          // every file of the application's log directories
	flink     int64          // the Flink processes' log, stdout and stderr files and their parts
	maxPart   int            // the highest part number of jobmanager.log seen
	problems  []string       // a log kept in more files than the count, or a file past the size
	filesOf   map[string]int // container/base -> files
	tmPrints  bool           // a taskmanager.out holds the counter job's prints
	jmLogSeen bool
}

func snapshotLogs(t *testing.T, id string) rollSnapshot {
	t.Helper()
	s := rollSnapshot{filesOf: map[string]int{}}
	for _, dir := range appLogDirs(id) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			s.total += info.Size()
			m := flinkLogBase.FindStringSubmatch(e.Name())
			if m == nil {
				continue
			}
			s.flink += info.Size()
			s.filesOf[filepath.Base(dir)+"/"+m[1]]++
			if m[1] == "jobmanager.log" {
				s.jmLogSeen = true
				if n, _ := strconv.Atoi(m[2]); n > s.maxPart {
					s.maxPart = n
				}
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				continue // rolled and deleted in between
			}
			limit := len(data)
			if strings.HasSuffix(m[1], ".log") {
				// log4j rolls once the file exceeds the size: at most the size before its last event.
				if starts := logEventStart.FindAllIndex(data, -1); len(starts) > 0 {
					limit = starts[len(starts)-1][0]
				}
			}
			if limit > rollingLogSize {
				s.problems = append(s.problems, e.Name()+" in "+filepath.Base(dir)+": "+strconv.Itoa(len(data))+" bytes, "+strconv.Itoa(limit)+" before its last event")
			}
			if m[1] == "taskmanager.out" && bytes.Contains(data, []byte("YARN_AM_FLINK_COUNTER")) {
				s.tmPrints = true
			}
		}
	}
	for k, n := range s.filesOf {
		if n > rollingLogFiles {
			s.problems = append(s.problems, k+": "+strconv.Itoa(n)+" files")
		}
	}
	return s
}

// TestFlinkLogsRollAndAreAggregatedWhileTheJobRuns: a counter job checkpointing every 200 ms (the
// JobManager logs each checkpoint) with log-max-size = "64 KiB" and log-max-files = 3 runs on a
// cluster that aggregates rolled logs every 5 s. check says nothing about rolling aggregation (it is
// on); while the job runs, every look at the NodeManagers' log directories finds each log, stdout
// and stderr file in at most 3 files, each at most 64 KiB (a log4j file: before its last event),
// though the JobManager's log rolls more often than that (a part numbered above 3); the job's prints
// are in taskmanager.out; and yarn-am logs of the running application returns a rolled part of
// jobmanager.log from HDFS, marked so, whose content is log lines. The log4j configuration is one
// text for both Flink lines (TestLog4jRollsWithTheHomesLog4j runs it through each one's log4j), so
// this runs on 1.20.5.
func TestFlinkLogsRollAndAreAggregatedWhileTheJobRuns(t *testing.T) {
	e2e.Env(t)
	t.Run(flinkHomeVersion(t, flink1), func(t *testing.T) {
		job := flinkJobOf(t, flink1, "flink-rolling", 1, 1, []string{"counter"}, `"execution.checkpointing.interval" = "200ms"`)
		body, err := os.ReadFile(job)
		require.NoError(t, err)
		withKeys := regexp.MustCompile(`(?m)^(home = .*)$`).ReplaceAllString(string(body),
			"$1\nlog-max-size = \"64 KiB\"\nlog-max-files = "+strconv.Itoa(rollingLogFiles))
		require.NoError(t, os.WriteFile(job, []byte(withKeys), 0o644))

		r := e2e.YarnAM(t, 2*time.Minute, "check", job)
		require.Equal(t, 0, r.Code, "check:\n%s", r)
		assert.NotContains(t, r.Stderr, "rolling log aggregation is off", "this cluster aggregates rolled logs")
		assert.NotContains(t, r.Stderr, "log aggregation is off")

		start := time.Now()
		id := e2e.SubmitDetached(t, job)
		t.Cleanup(func() { e2e.KillQuietly(id) })
		var (
			last      rollSnapshot
			maxTotal  int64
			maxFlink  int64
			problems  []string
			rolled    []string
			logsSaid  string
			sawRolled time.Duration
		)
		deadline := time.Now().Add(5 * time.Minute)
		for {
			last = snapshotLogs(t, id)
			maxTotal, maxFlink = max(maxTotal, last.total), max(maxFlink, last.flink)
			problems = append(problems, last.problems...)
			if rolled == nil {
				lr := e2e.YarnAM(t, time.Minute, "logs", id, "--am")
				if m := rolledAggPart.FindStringSubmatch(lr.Stdout); m != nil && rolledAggNoted.MatchString(lr.Stderr) {
					rolled, logsSaid, sawRolled = m, lr.Stderr, time.Since(start)
				}
			}
			if rolled != nil && last.maxPart > rollingLogFiles && last.tmPrints {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 5 minutes: rolled part from yarn-am logs %v, highest jobmanager.log part %d, prints in taskmanager.out %v; files %v\n%s",
					rolled != nil, last.maxPart, last.tmPrints, last.filesOf, e2e.ContainerLogs(id))
			}
			time.Sleep(2 * time.Second) // the job's logging is what is awaited; no signal tells a roll
		}
		assert.Empty(t, problems, "every look at the log directories found each log within its count and size")
		assert.True(t, logEventStart.MatchString(rolled[4]), "the aggregated part %s holds log lines: %q", rolled[2], rolled[4])
		t.Logf("rolled part %s of %s (%s bytes) from yarn-am logs %.0f s after submit; %s", rolled[2], rolled[1], rolled[3], sawRolled.Seconds(), strings.TrimSpace(logsSaid))
		t.Logf("the application's NodeManager log directories: at most %d bytes in all, %d of them the Flink processes' logs (bound %d); jobmanager.log rolled to part %d",
			maxTotal, maxFlink, 2*3*rollingLogFiles*(rollingLogSize+8<<10), last.maxPart)
		// Two containers (the AM's and one TaskManager's), three logs each, the count of files each,
		// each at most the size and a log event.
		assert.LessOrEqual(t, maxFlink, int64(2*3*rollingLogFiles*(rollingLogSize+8<<10)))
	})
}
