package main

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fixtures in testdata/ are cut from one real `make bench BENCH=flink` run on the mini cluster
// (lines kept whole up to 300 characters): application 0001 was yarn-am's, 0002 Flink's
// yarn-application.
const (
	fixtureYarnAM = "application_1795974975544_0001"
	fixtureFlink  = "application_1795974975544_0002"
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.ParseInLocation("2006-01-02 15:04:05.000", s, time.Local)
	require.NoError(t, err)
	return v
}

func fixture(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func approx(t *testing.T, want, got float64, what string) {
	t.Helper()
	assert.InDelta(t, want, got, 0.0005, what)
}

func TestRMMomentsOfBothTools(t *testing.T) {
	submit := at(t, "2026-11-29 17:56:30.000")
	m := unknownMoments()
	require.NoError(t, rmMoments(fixture(t, "minicluster.log"), fixtureYarnAM, 4, submit, &m))
	approx(t, 2.431, m[msRMAccepted], "RMAppImpl NEW to NEW_SAVING")
	approx(t, 2.878, m[msAMAllocated], "AM container NEW to ALLOCATED")
	approx(t, 6.702, m[msAMStarted], "AM container SCHEDULED to RUNNING (NM)")
	approx(t, 7.321, m[msAMRegistered], "attempt LAUNCHED to RUNNING")
	approx(t, 7.631, m[msTMAllocated], "the 4th TaskManager container allocated")
	approx(t, 10.375, m[msTMStarted], "the 4th TaskManager container running")

	// The same file, Flink's application: nothing of yarn-am's leaks in.
	submit = at(t, "2026-11-29 17:57:50.000")
	m = unknownMoments()
	require.NoError(t, rmMoments(fixture(t, "minicluster.log"), fixtureFlink, 4, submit, &m))
	approx(t, 1.644, m[msRMAccepted], "accepted")
	approx(t, 1.858, m[msAMAllocated], "AM allocated")
	approx(t, 3.029, m[msAMStarted], "AM started")
	approx(t, 12.141, m[msAMRegistered], "AM registered")
	approx(t, 17.729, m[msTMAllocated], "4th allocated")
	approx(t, 19.797, m[msTMStarted], "4th started")

	// A fifth TaskManager that never came: unknown, not the 4th's time.
	m = unknownMoments()
	require.NoError(t, rmMoments(fixture(t, "minicluster.log"), fixtureFlink, 5, submit, &m))
	assert.Equal(t, -1.0, m[msTMAllocated])
	assert.Equal(t, -1.0, m[msTMStarted])
	// Lines from before the submit belong to an earlier run.
	m = unknownMoments()
	require.NoError(t, rmMoments(fixture(t, "minicluster.log"), fixtureYarnAM, 4, at(t, "2026-11-29 17:56:35.000"), &m))
	assert.Equal(t, -1.0, m[msRMAccepted])
	approx(t, 2.321, m[msAMRegistered], "registered after the later submit")
}

func TestJobManagerLogMoments(t *testing.T) {
	submit := at(t, "2026-11-29 17:56:30.000")
	m := unknownMoments()
	require.NoError(t, jmLogMoments(fixture(t, "yarn-am-jobmanager.log"), 4, false, submit, &m))
	approx(t, 10.190, m[msJMFirstLog], "first line")
	approx(t, 14.842, m[msRPCBound], "flink@ actor system, not flink-metrics@")
	approx(t, 17.627, m[msRESTBound], "REST endpoint listening")
	approx(t, 19.292, m[msJobSubmitted], "JobGraph received")
	approx(t, 52.292, m[msTMRegistered], "the 4th TaskManager registered")
	assert.Equal(t, -1.0, m[msTMRequested], "yarn-am's JobManager asks YARN for nothing")

	submit = at(t, "2026-11-29 17:57:50.000")
	m = unknownMoments()
	require.NoError(t, jmLogMoments(fixture(t, "flink-jobmanager.log"), 4, true, submit, &m))
	approx(t, 5.025, m[msJMFirstLog], "first line")
	approx(t, 8.797, m[msRPCBound], "RPC")
	approx(t, 10.162, m[msRESTBound], "REST")
	approx(t, 11.614, m[msJobSubmitted], "submitted")
	approx(t, 12.604, m[msTMRequested], "Flink's first request for a worker")
	// Flink logs a TaskManager's registration twice: the 4th distinct one counts.
	approx(t, 43.048, m[msTMRegistered], "the 4th distinct TaskManager registered")
}

func TestAMLogMoments(t *testing.T) {
	submit := at(t, "2026-11-29 17:56:30.000")
	m := unknownMoments()
	require.NoError(t, amLogMoments(fixture(t, "yarn-am-am.stderr"), submit, &m))
	approx(t, 7, m[msTMRequested], "requesting TaskExecutor containers (whole seconds in this older log)")
	approx(t, 19, m[msPortsLearnt], "flink.jobmanager.rpc published")

	// The AM's log since it carries milliseconds.
	ms := `time="2026-11-29T17:56:37.125Z" level=info msg="am: requesting TaskExecutor containers" allocation_request_id=1 containers=4` + "\n" +
		`time="2026-11-29T17:56:48.500Z" level=info msg="yarn-am am: the framework published a value for its TaskExecutors" name=flink.other value="x"` + "\n" +
		`time="2026-11-29T17:56:49.250Z" level=info msg="yarn-am am: the framework published a value for its TaskExecutors" name=flink.jobmanager.rpc value="127.0.0.2:1"` + "\n"
	submitUTC := time.Date(2026, 11, 29, 17, 56, 30, 0, time.UTC)
	m = unknownMoments()
	require.NoError(t, amLogMoments(strings.NewReader(ms), submitUTC, &m))
	approx(t, 7.125, m[msTMRequested], "requested")
	approx(t, 19.250, m[msPortsLearnt], "only the RPC address is the ports learnt")
}

func TestLogMomentsReadTheContainerDirectories(t *testing.T) {
	root := t.TempDir()
	copyTo := func(fix, app, ctr, name string) {
		d := filepath.Join(root, "nm-0", app, "container_"+strings.TrimPrefix(app, "application_")+"_01_"+ctr)
		require.NoError(t, os.MkdirAll(d, 0o755))
		b, err := os.ReadFile(filepath.Join("testdata", fix))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, name), b, 0o644))
	}
	copyTo("yarn-am-jobmanager.log", fixtureYarnAM, "000001", "jobmanager.log")
	copyTo("yarn-am-am.stderr", fixtureYarnAM, "000001", "am.stderr")
	copyTo("taskmanager.log", fixtureYarnAM, "000002", "taskmanager.log")
	submit := at(t, "2026-11-29 17:56:30.000")
	m := unknownMoments()
	require.NoError(t, logMoments([]string{filepath.Join(root, "nm-0"), filepath.Join(root, "nm-1")}, fixtureYarnAM, toolFlinkYarnAM, 1, submit, &m))
	approx(t, 10.190, m[msJMFirstLog], "jobmanager.log read")
	approx(t, 7, m[msTMRequested], "am.stderr read")
	approx(t, 26.211, m[msTMJVM], "the TaskManager's first log line")
	// Two TaskManagers asked for, one log: the last JVM is unknown.
	m = unknownMoments()
	require.NoError(t, logMoments([]string{filepath.Join(root, "nm-0")}, fixtureYarnAM, toolFlinkYarnAM, 2, submit, &m))
	assert.Equal(t, -1.0, m[msTMJVM])
}

func TestProcStartFromStatAndUptime(t *testing.T) {
	// /proc/self/stat and /proc/uptime as read on this machine: started 49663 ticks after boot,
	// 496.63 s up when read.
	stat := "7465 (cat) R 7463 7463 6301 0 -1 4194304 101 0 0 0 0 0 0 0 20 0 1 0 49663 3133440 389 18446744073709551615 94786490785792"
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	got, ok := procStartFrom(stat, "496.63 226.38\n", now)
	require.True(t, ok)
	assert.Equal(t, now.Add(-(496630-496630)*time.Millisecond), got, "started when read")
	// A command with spaces and a parenthesis, started 1.5 s after boot.
	stat = "12 (java (x) y) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 150 1 1"
	got, ok = procStartFrom(stat, "10.00 1.00", now)
	require.True(t, ok)
	assert.Equal(t, now.Add(-8500*time.Millisecond), got)
	_, ok = procStartFrom("garbage", "1.0", now)
	assert.False(t, ok)
	// The live process: a start before now and after boot.
	self, ok := procStart(os.Getpid())
	require.True(t, ok)
	assert.True(t, self.Before(time.Now().Add(time.Second)))
}

func TestIsJobManagerJVM(t *testing.T) {
	nul := func(a ...string) string { return strings.Join(a, "\x00") }
	assert.True(t, isJobManagerJVM(nul("java", "-Xmx1g", "-cp", "x", "org.apache.flink.container.entrypoint.StandaloneApplicationClusterEntryPoint")))
	assert.True(t, isJobManagerJVM(nul("/usr/bin/java", "org.apache.flink.yarn.entrypoint.YarnApplicationClusterEntryPoint")))
	assert.True(t, isJobManagerJVM(nul("java", "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint")))
	assert.False(t, isJobManagerJVM(nul("java", "-cp", "x", "org.apache.flink.runtime.util.bash.BashJavaUtils", "GET_JM_RESOURCE_PARAMS")))
	assert.False(t, isJobManagerJVM(nul("java", "-Dx=org.apache.flink.ClusterEntrypoint.txt.not", "Main")))
}

// sampleMoments are two tools' medians with a phase only one of them has.
func sampleMoments() (moments, moments) {
	y, k := unknownMoments(), unknownMoments()
	for i := range y {
		y[i] = float64(i) * 0.25
		k[i] = float64(i) * 0.5
	}
	k[msPortsLearnt] = -1 // Flink has no AM apart from its JobManager
	y[msAllRunning] = 12.3
	return y, k
}

func TestWaterfallSVG(t *testing.T) {
	y, k := sampleMoments()
	var buf bytes.Buffer
	require.NoError(t, waterfallSVG(&buf, "a <title> & more", y, k))
	// Well-formed XML, an svg root.
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	type rect struct {
		X, Y, W, H float64
		Fill       string
	}
	var bars []rect
	var texts []string
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
		}
		attr := map[string]string{}
		for _, a := range se.Attr {
			attr[a.Name.Local] = a.Value
		}
		switch se.Name.Local {
		case "rect":
			if attr["height"] == "10" && attr["width"] != "12" {
				var r rect
				r.X, _ = strconv.ParseFloat(attr["x"], 64)
				r.Y, _ = strconv.ParseFloat(attr["y"], 64)
				r.W, _ = strconv.ParseFloat(attr["width"], 64)
				r.Fill = attr["fill"]
				bars = append(bars, r)
			}
		case "text":
			var s string
			require.NoError(t, dec.DecodeElement(&s, &se))
			texts = append(texts, s)
		}
	}
	assert.Equal(t, "svg", root)
	assert.Contains(t, texts, "a <title> & more")
	// One bar per phase and tool, less Flink's "RPC address published by the AM".
	assert.Len(t, bars, 2*len(phases)-1)
	for _, p := range phases {
		assert.Contains(t, texts, p.name)
	}
	// The axis ends at 14 (12.3 rounded up to the 2 s step); the last row's yarn-am bar runs from the
	// job's RUNNING (milestone 16 × 0.25 s) to 12.3 s.
	last := bars[len(bars)-2]
	assert.Equal(t, "#1f77b4", last.Fill)
	scale := 560.0 / 14
	assert.InDelta(t, 330+4*scale, last.X, 0.1)
	assert.InDelta(t, (12.3-4)*scale, last.W, 0.1)
	assert.Contains(t, texts, "12.30")
	assert.Contains(t, texts, "14")
}

func TestWaterfallTableAndCSV(t *testing.T) {
	y, k := sampleMoments()
	tab := waterfallTable(y, k)
	lines := strings.Split(strings.TrimSpace(tab), "\n")
	require.Len(t, lines, 2+len(phases))
	assert.Equal(t, "| client and staging (until the RM has the application) | 0.00 | 0.00 | 0.00 | 0.00 |", lines[2])
	assert.Contains(t, tab, "| RPC address published by the AM | 2.50 | 0.50 | - | - |")
	assert.Contains(t, tab, "| all subtasks RUNNING | 12.30 | 8.30 | 8.50 | 0.50 |")

	runs := []flinkRun{
		{Tool: toolFlinkYarnAM, Pair: 1, App: "a1", Final: "SUCCEEDED", Moments: y},
		{Tool: toolFlinkYarnAM, Pair: 2, App: "a3", Final: "SUCCEEDED", Moments: y},
		{Tool: toolFlinkYarnAM, Pair: 3, App: "a5", Final: "FAILED", Moments: k}, // left out of the medians
		{Tool: toolFlinkNative, Pair: 1, App: "a2", Final: "SUCCEEDED", Moments: k},
	}
	runs[1].Moments[msJobRunning] = 100
	path := filepath.Join(t.TempDir(), "waterfall.csv")
	require.NoError(t, writeWaterfallCSV(path, runs))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+len(runs)+2)
	assert.Equal(t, append([]string{"tool", "pair", "app", "final_status"}, milestoneNames[:]...), rows[0])
	med := rows[len(rows)-2]
	assert.Equal(t, "median-yarn-am", med[0])
	col := 4 + int(msJobRunning)
	want := (y[msJobRunning] + 100) / 2 // the median of two: their mean
	got, _ := strconv.ParseFloat(med[col], 64)
	assert.InDelta(t, want, got, 0.001)
	assert.Equal(t, "-1.000", rows[len(rows)-1][4+int(msPortsLearnt)], "Flink's unknown moment")
	assert.False(t, math.IsNaN(got))
}
