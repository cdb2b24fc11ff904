// The Flink row's waterfall (testdata/bench/README.md#the-waterfall): for every run of either tool, the
// moments its start passes through, read from the tools' own logs and from the cluster's, all on this
// machine's clock and given as seconds from submit; then per tool the median of each moment over the
// pairs, drawn as one bar row per phase and tool (waterfallSVG) beside a table of the medians.
//
// Where each moment comes from (the same source for both tools wherever both have the moment):
//
//   - the ResourceManager's log (the mini cluster's log): the application accepted (RMAppImpl NEW to
//     NEW_SAVING: submitApplication reached the RM), the AM registered (RMAppAttemptImpl LAUNCHED to
//     RUNNING), the AM container and the N-th TaskManager container allocated (RMContainerImpl NEW
//     to ALLOCATED);
//   - the NodeManagers' log lines in the same file: the AM container and the N-th TaskManager
//     container SCHEDULED to RUNNING;
//   - /proc, sampled while the run lasts: the start of the AM's process (yarn-am's `yarn-am am`;
//     Flink's JobManager JVM, which is its AM) and of the JobManager's JVM (the java process whose
//     command names a cluster entry point);
//   - the JobManager's jobmanager.log in the AM container's log directory: its first line, the RPC
//     actor system bound ("Actor system started at"), the REST endpoint bound ("Rest endpoint
//     listening at"), Flink's own request for TaskManagers ("Requesting new worker"), the N-th
//     TaskManager registered ("Registering TaskManager with ResourceID"), the job submitted ("Received
//     JobGraph submission");
//   - yarn-am's AM log (am.stderr): the TaskManagers requested ("am: requesting TaskExecutor
//     containers") and the JobManager's RPC address published ("the framework published a value",
//     flink.jobmanager.rpc);
//   - each TaskManager container's taskmanager.log: its first line (the N-th over the containers);
//   - the JobManager's REST API (flink.go): the job RUNNING and all subtasks RUNNING.
package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// milestone is one moment of a run's start.
type milestone int

const (
	msRMAccepted milestone = iota
	msAMAllocated
	msAMStarted
	msAMProcess
	msAMRegistered
	msTMRequested
	msJMJVM
	msJMFirstLog
	msRPCBound
	msRESTBound
	msPortsLearnt
	msTMAllocated
	msTMStarted
	msTMJVM
	msTMRegistered
	msJobSubmitted
	msJobRunning
	msAllRunning
	numMilestones
)

// milestoneNames are the CSV's columns (seconds from submit), in milestone order.
var milestoneNames = [numMilestones]string{
	"rm_accepted_s", "am_allocated_s", "am_container_running_s", "am_process_started_s", "am_registered_s",
	"tms_requested_s", "jm_jvm_started_s", "jm_first_log_s", "jm_rpc_bound_s", "jm_rest_bound_s",
	"ports_learnt_s", "tms_allocated_s", "tms_container_running_s", "tms_jvm_first_log_s", "tms_registered_s",
	"job_submitted_s", "job_running_s", "all_subtasks_running_s",
}

// submitMoment stands for the client's start (0 s) as the start of a phase.
const submitMoment milestone = -1

// phase is one bar of the waterfall: from one moment to another.
type phase struct {
	name     string
	from, to milestone
}

// phases are the waterfall's rows, top to bottom. A tool without one of the two moments (Flink has no
// separate AM process to learn the JobManager's ports) has no bar in that row. The AM publishes the
// RPC address as soon as the JVM bound it, before the REST port answers: its row starts at RPC bound.
var phases = []phase{
	{"client and staging (until the RM has the application)", submitMoment, msRMAccepted},
	{"AM container allocated", msRMAccepted, msAMAllocated},
	{"AM container started (NM)", msAMAllocated, msAMStarted},
	{"AM process started", msAMStarted, msAMProcess},
	{"AM registered with the RM", msAMProcess, msAMRegistered},
	{"TaskManager containers requested", msAMRegistered, msTMRequested},
	{"JobManager JVM started", msAMStarted, msJMJVM},
	{"JobManager's first log line", msJMJVM, msJMFirstLog},
	{"JobManager RPC bound", msJMFirstLog, msRPCBound},
	{"JobManager REST bound", msRPCBound, msRESTBound},
	{"RPC address published by the AM", msRPCBound, msPortsLearnt},
	{"TaskManager containers allocated (last)", msTMRequested, msTMAllocated},
	{"TaskManager containers started (last)", msTMAllocated, msTMStarted},
	{"TaskManager JVMs up (last first log line)", msTMStarted, msTMJVM},
	{"TaskManagers registered (last)", msTMJVM, msTMRegistered},
	{"job submitted", msJMFirstLog, msJobSubmitted},
	{"job RUNNING", msJobSubmitted, msJobRunning},
	{"all subtasks RUNNING", msJobRunning, msAllRunning},
}

// moments are one run's milestones in seconds from submit; -1 where unknown.
type moments [numMilestones]float64

func unknownMoments() moments {
	var m moments
	for i := range m {
		m[i] = -1
	}
	return m
}

// String lists the moments seen, by their CSV names less "_s".
func (m moments) String() string {
	var b []string
	for i, v := range m {
		if v >= 0 {
			b = append(b, strings.TrimSuffix(milestoneNames[i], "_s")+" "+strconv.FormatFloat(v, 'f', 2, 64))
		}
	}
	return strings.Join(b, ", ")
}

// at is a milestone's value, submitMoment being 0.
func (m moments) at(ms milestone) float64 {
	if ms == submitMoment {
		return 0
	}
	return m[ms]
}

// setFirst records t as ms unless an earlier time is recorded (t before submit is dropped: a line of
// an earlier run).
func (m *moments) setFirst(ms milestone, t, submit time.Time) {
	s := t.Sub(submit).Seconds()
	if t.IsZero() || s < -0.001 {
		return
	}
	if m[ms] < 0 || s < m[ms] {
		m[ms] = s
	}
}

// rmMoments reads the ResourceManager's and NodeManagers' lines of app from the mini cluster's log
// (from offset): accepted, the AM's registration, and per container allocation and start; the
// TaskManagers' are the n-th of them (all of them must be seen, else unknown).
func rmMoments(r io.Reader, app string, n int, submit time.Time, m *moments) error {
	attempt := "appattempt_" + strings.TrimPrefix(app, "application_") + "_000001 "
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	var lines []string
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.Contains(l, "RMAppImpl") && strings.Contains(l, app+" State change from NEW to NEW_SAVING"):
			if t, ok := log4jTime(l); ok {
				m.setFirst(msRMAccepted, t, submit)
			}
		case strings.Contains(l, "RMAppAttemptImpl") && strings.Contains(l, attempt) && strings.Contains(l, "from LAUNCHED to RUNNING"):
			if t, ok := log4jTime(l); ok {
				m.setFirst(msAMRegistered, t, submit)
			}
		case strings.Contains(l, "ransitioned from"):
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	ev, err := containerEventsFrom(strings.NewReader(strings.Join(lines, "\n")), app)
	if err != nil {
		return err
	}
	var allocs, starts []time.Time
	for id, e := range ev {
		if strings.HasSuffix(id, "_000001") {
			m.setFirst(msAMAllocated, e.allocated, submit)
			m.setFirst(msAMStarted, e.running, submit)
			continue
		}
		if !e.allocated.IsZero() {
			allocs = append(allocs, e.allocated)
		}
		if !e.running.IsZero() {
			starts = append(starts, e.running)
		}
	}
	m.setFirst(msTMAllocated, nth(allocs, n), submit)
	m.setFirst(msTMStarted, nth(starts, n), submit)
	return nil
}

// nth is the n-th earliest of ts (1-based), zero when there are fewer.
func nth(ts []time.Time, n int) time.Time {
	if n < 1 || len(ts) < n {
		return time.Time{}
	}
	s := append([]time.Time(nil), ts...)
	sort.Slice(s, func(i, j int) bool { return s[i].Before(s[j]) })
	return s[n-1]
}

// log4jTime is the time at the start of a log4j line (Hadoop's and Flink's: "2006-01-02 15:04:05,000",
// this machine's zone).
func log4jTime(l string) (time.Time, bool) {
	m := logTimeRE.FindStringSubmatch(l)
	if m == nil {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05,000", m[1], time.Local)
	return t, err == nil
}

// jmLogMoments reads a jobmanager.log (either tool's): its first line, RPC and REST bound, Flink's
// own first request for TaskManagers (wantRequests), the n-th TaskManager registered, the job
// submitted.
func jmLogMoments(r io.Reader, n int, wantRequests bool, submit time.Time, m *moments) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	first := true
	var regs []time.Time
	seen := map[string]bool{}
	for sc.Scan() {
		l := sc.Text()
		t, ok := log4jTime(l)
		if !ok {
			continue
		}
		if first {
			m.setFirst(msJMFirstLog, t, submit)
			first = false
		}
		switch {
		case strings.Contains(l, "Actor system started at") && !strings.Contains(l, "flink-metrics@"):
			m.setFirst(msRPCBound, t, submit)
		case strings.Contains(l, "Rest endpoint listening at"):
			m.setFirst(msRESTBound, t, submit)
		case wantRequests && strings.Contains(l, "Requesting new worker"):
			m.setFirst(msTMRequested, t, submit)
		case strings.Contains(l, "Registering TaskManager with ResourceID "):
			// yarn-am's line has "<id> (<address>", Flink's "<id>(<host:port>".
			id := strings.FieldsFunc(l[strings.Index(l, "ResourceID ")+len("ResourceID "):], func(r rune) bool { return r == ' ' || r == '(' })
			if len(id) > 0 && !seen[id[0]] { // a TaskManager registers again after a lost connection
				seen[id[0]] = true
				regs = append(regs, t)
			}
		case strings.Contains(l, "Received JobGraph submission"):
			m.setFirst(msJobSubmitted, t, submit)
		}
	}
	m.setFirst(msTMRegistered, nth(regs, n), submit)
	return sc.Err()
}

// amLogTimeRE is logrus's time field in yarn-am's AM log (RFC 3339, with or without a fraction).
var amLogTimeRE = regexp.MustCompile(`^time="([^"]+)"`)

// amLogMoments reads yarn-am's AM log (am.stderr): the TaskManagers first requested and the
// JobManager's RPC address published to the AM (the ports learnt).
func amLogMoments(r io.Reader, submit time.Time, m *moments) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		l := sc.Text()
		tm := amLogTimeRE.FindStringSubmatch(l)
		if tm == nil {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, tm[1])
		if err != nil {
			continue
		}
		switch {
		case strings.Contains(l, `msg="am: requesting TaskExecutor containers"`):
			m.setFirst(msTMRequested, t, submit)
		case strings.Contains(l, `msg="yarn-am am: the framework published a value for its TaskExecutors"`) &&
			strings.Contains(l, "name=flink.jobmanager.rpc "):
			m.setFirst(msPortsLearnt, t, submit)
		}
	}
	return sc.Err()
}

// firstLogLine is the time of the first log4j line of a file, zero when there is none.
func firstLogLine(r io.Reader) time.Time {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for i := 0; i < 50 && sc.Scan(); i++ {
		if t, ok := log4jTime(sc.Text()); ok {
			return t
		}
	}
	return time.Time{}
}

// logMoments reads the moments of app's logs in the NodeManagers' log directories (dirs): the AM
// container's jobmanager.log and, for yarn-am, am.stderr; every other container's taskmanager.log.
func logMoments(dirs []string, app, tool string, n int, submit time.Time, m *moments) error {
	var tmFirst []time.Time
	for _, d := range dirs {
		ctrs, _ := filepath.Glob(filepath.Join(d, app, "container_*"))
		for _, c := range ctrs {
			if strings.HasSuffix(c, "_000001") {
				if err := withFile(filepath.Join(c, "jobmanager.log"), func(f io.Reader) error {
					return jmLogMoments(f, n, tool == toolFlinkNative, submit, m)
				}); err != nil {
					return err
				}
				if tool == toolFlinkYarnAM {
					if err := withFile(filepath.Join(c, "am.stderr"), func(f io.Reader) error { return amLogMoments(f, submit, m) }); err != nil {
						return err
					}
				}
				continue
			}
			withFile(filepath.Join(c, "taskmanager.log"), func(f io.Reader) error {
				if t := firstLogLine(f); !t.IsZero() {
					tmFirst = append(tmFirst, t)
				}
				return nil
			})
		}
	}
	m.setFirst(msTMJVM, nth(tmFirst, n), submit)
	return nil
}

// withFile calls read with the file at path, bounded to 64 MiB; a missing file is no error.
func withFile(path string, read func(io.Reader) error) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return read(io.LimitReader(f, 64<<20))
}

// procStart is when process pid started, on this machine's clock: its start in clock ticks after
// boot (/proc/<pid>/stat field 22) from the boot time that /proc/uptime gives to 10 ms.
func procStart(pid int) (time.Time, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return time.Time{}, false
	}
	up, err := os.ReadFile("/proc/uptime")
	now := time.Now()
	if err != nil {
		return time.Time{}, false
	}
	return procStartFrom(string(stat), string(up), now)
}

// procStartFrom is procStart's arithmetic: a /proc/<pid>/stat line, /proc/uptime read at now.
func procStartFrom(stat, uptime string, now time.Time) (time.Time, bool) {
	i := strings.LastIndexByte(stat, ')') // the command may hold spaces and parentheses
	if i < 0 {
		return time.Time{}, false
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3 (state)
	u := strings.Fields(uptime)
	if len(f) < 20 || len(u) < 1 {
		return time.Time{}, false
	}
	ticks, err1 := strconv.ParseInt(f[19], 10, 64)
	upS, err2 := strconv.ParseFloat(u[0], 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, false
	}
	boot := now.Add(-time.Duration(upS * float64(time.Second)))
	return boot.Add(time.Duration(ticks) * (time.Second / 100)), true // USER_HZ is 100 on Linux
}

// isJobManagerJVM says whether a java command line (NUL-separated) runs a Flink cluster entry point:
// yarn-am's Standalone*ClusterEntryPoint or Flink's YarnApplicationClusterEntryPoint, not the
// BashJavaUtils JVM that computes memory flags first.
func isJobManagerJVM(cmdline string) bool {
	for _, a := range strings.Split(cmdline, "\x00") {
		if strings.HasPrefix(a, "org.apache.flink.") && strings.HasSuffix(strings.ToLower(a), "clusterentrypoint") {
			return true
		}
	}
	return false
}

// waterfallMedians are the medians of each milestone over tool's successful runs.
func waterfallMedians(runs []flinkRun, tool string) moments {
	var out moments
	for ms := range out {
		out[ms] = flinkMed(runs, tool, func(r flinkRun) float64 { return r.Moments[ms] })
	}
	return out
}

// writeWaterfallCSV writes waterfall.csv: a row per run with every milestone, then each tool's medians.
func writeWaterfallCSV(path string, runs []flinkRun) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(append([]string{"tool", "pair", "app", "final_status"}, milestoneNames[:]...))
	row := func(tool, pair, app, final string, m moments) {
		r := []string{tool, pair, app, final}
		for _, v := range m {
			r = append(r, ff(v))
		}
		w.Write(r)
	}
	for _, r := range runs {
		row(r.Tool, strconv.Itoa(r.Pair), r.App, r.Final, r.Moments)
	}
	for _, tool := range []string{toolFlinkYarnAM, toolFlinkNative} {
		row("median-"+tool, "", "", "", waterfallMedians(runs, tool))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// waterfallTable is the markdown table of the phases' medians: when each ends (seconds from submit)
// and how long it takes, for both tools.
func waterfallTable(y, k moments) string {
	var b strings.Builder
	b.WriteString("| phase | yarn-am: ends at (s) | takes (s) | Flink: ends at (s) | takes (s) |\n| --- | ---: | ---: | ---: | ---: |\n")
	span := func(m moments, p phase) (string, string) {
		from, to := m.at(p.from), m.at(p.to)
		if to < 0 {
			return "-", "-"
		}
		if from < 0 {
			return num(to), "-"
		}
		return num(to), num(to - from)
	}
	for _, p := range phases {
		ye, yd := span(y, p)
		ke, kd := span(k, p)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", p.name, ye, yd, ke, kd)
	}
	return b.String()
}

// waterfallSVG draws the waterfall: per phase a row with yarn-am's bar above Flink's, each from the
// median of the phase's start to the median of its end (seconds from submit on the x axis), the end
// written after the bar. A self-contained SVG 1.1 document, no script, no external reference.
func waterfallSVG(w io.Writer, title string, y, k moments) error {
	const (
		labelW, plotW   = 330.0, 560.0
		rowH, barH, top = 30.0, 10.0, 54.0
		colY, colK      = "#1f77b4", "#ff7f0e"
	)
	end := 1.0
	for _, m := range []moments{y, k} {
		for _, v := range m {
			end = math.Max(end, v)
		}
	}
	step := 1.0
	for end/step > 12 {
		step *= 2
	}
	end = math.Ceil(end/step) * step
	x := func(s float64) float64 { return labelW + s/end*plotW }
	height := top + rowH*float64(len(phases)) + 40
	width := labelW + plotW + 70
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", xmlText(title))
	fmt.Fprintf(&b, `<rect x="%.0f" y="28" width="12" height="10" fill="%s"/><text x="%.0f" y="37">yarn-am [flink]</text>`+"\n", labelW, colY, labelW+16)
	fmt.Fprintf(&b, `<rect x="%.0f" y="28" width="12" height="10" fill="%s"/><text x="%.0f" y="37">Flink yarn-application</text>`+"\n", labelW+140, colK, labelW+156)
	bottom := top + rowH*float64(len(phases))
	for s := 0.0; s <= end+1e-9; s += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/>`+"\n", x(s), top-4, x(s), bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x(s), bottom+16, strconv.FormatFloat(s, 'f', -1, 64))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">seconds from submit (median over the pairs)</text>`+"\n", labelW+plotW/2, bottom+34)
	for i, p := range phases {
		ry := top + rowH*float64(i)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", labelW-8, ry+rowH/2+4, xmlText(p.name))
		for j, tool := range []struct {
			m     moments
			color string
		}{{y, colY}, {k, colK}} {
			from, to := tool.m.at(p.from), tool.m.at(p.to)
			if to < 0 {
				continue
			}
			from = math.Max(0, math.Min(from, to)) // an unknown start, or one past the end: from 0 / a mark
			if tool.m.at(p.from) < 0 {
				from = to
			}
			by := ry + 4 + float64(j)*(barH+2)
			wbar := math.Max(x(to)-x(from), 1.5)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="%s"/>`, x(from), by, wbar, barH, tool.color)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10">%s</text>`+"\n", x(from)+wbar+3, by+barH-1, strconv.FormatFloat(to, 'f', 2, 64))
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// xmlText escapes text for an SVG text node.
func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// writeWaterfall writes waterfall.csv and waterfall.svg into the output directory and returns the
// phase table for the summary.
func writeWaterfall(cfg config, fc *flinkConfig, runs []flinkRun) (string, error) {
	if err := writeWaterfallCSV(filepath.Join(cfg.out, "waterfall.csv"), runs); err != nil {
		return "", err
	}
	y, k := waterfallMedians(runs, toolFlinkYarnAM), waterfallMedians(runs, toolFlinkNative)
	title := fmt.Sprintf("Flink %s, test job gpu %d: yarn-am [flink] against Flink yarn-application, medians of %d pair(s), load %s",
		fc.version, fc.tm, fc.pairs, flinkLoad(runs))
	f, err := os.Create(filepath.Join(cfg.out, "waterfall.svg"))
	if err != nil {
		return "", err
	}
	if err := waterfallSVG(f, title, y, k); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return "\nThe waterfall (medians; waterfall.csv, waterfall.svg):\n\n" + waterfallTable(y, k), nil
}
