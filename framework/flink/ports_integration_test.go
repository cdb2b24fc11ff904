//go:build integration

package flink_test

import (
	"fmt"
	"net"
	"net/http"
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

// No port of the JobManager is published before its JVM bound it (docs/flink.md#who-can-reach-the-jobmanager):
// with Flink's default ports (6123, 8081) and ports of the range the AM used to pick from
// (internal/freeport's, above 10000) held by a server that answers anything as a FINISHED Flink job,
// a failing job still FAILS with Flink's root cause and a GPU job SUCCEEDS having run its
// TaskManager, on Flink 1.20.5 and 2.3.0 (both bind port 0 and say what they bound); the addresses the driver published (and the TaskManager was given) are the ones the
// JobManager's own log says it bound.
func TestFlinkPortsSquattedBeforeSubmit(t *testing.T) {
	e2e.Env(t)
	squatted := squatFlinkPorts(t)
	t.Logf("squatted ports: %v", squatted)
	eachFlink(t, func(t *testing.T, v flinkVersion) {
		fail := flinkJobOf(t, v, "flink-ports-fail", 1, 1, []string{"fail"}, "")
		r := e2e.YarnAM(t, 6*time.Minute, "submit", fail)
		require.NotEqual(t, 0, r.Code, "a failing Flink job fails the submit:\n%s", r)
		id := e2e.SubmittedID(r.Stdout)
		d := e2e.Status(t, id)
		assert.Equal(t, "FAILED", d.Report.FinalStatus)
		assert.Contains(t, d.Report.Diagnostics, "java.lang.IllegalStateException: yarn-am-flink-test deliberate failure in subtask 0",
			"Flink's root cause is the application's diagnostics\n%s", e2e.ContainerLogs(id))
		checkBoundPorts(t, id, squatted, 1)

		gpu := flinkJobOf(t, v, "flink-ports-gpu", 1, 1, []string{"gpu", "1"}, "")
		r = e2e.YarnAM(t, 6*time.Minute, "submit", gpu)
		id = e2e.SubmittedID(r.Stdout)
		require.Equal(t, 0, r.Code, "the GPU job succeeds:\n%s\n%s", r, e2e.ContainerLogs(id))
		assert.Equal(t, "SUCCEEDED", e2e.Status(t, id).Report.FinalStatus)
		require.Len(t, tmLines(id, flinkGPULine), 1, "its TaskManager ran the job:\n%s", e2e.ContainerLogs(id))
		checkBoundPorts(t, id, squatted, 1)
	})
}

// squatFlinkPorts binds Flink's default JobManager ports and a handful of the range internal/freeport
// picks from (the AM picked Flink's ports there before the JVMs bound port 0; now only a gang's rendezvous),
// on every address, each answering any request as a finished Flink job; it returns the
// ports it holds. A port some other process holds already is squatted all the same.
func squatFlinkPorts(t *testing.T) map[int]bool {
	t.Helper()
	answer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jobs":[{"id":"00000000000000000000000000000000","status":"FINISHED"}]}`)
	})
	held := map[int]bool{}
	hold := func(port int) {
		ln, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(port)))
		if err != nil {
			return
		}
		srv := &http.Server{Handler: answer, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		held[ln.Addr().(*net.TCPAddr).Port] = true
	}
	hold(6123)
	hold(8081)
	for p := 10000; len(held) < 12 && p < 10200; p += 17 {
		hold(p)
	}
	require.NotEmpty(t, held)
	return held
}

var (
	boundLine    = regexp.MustCompile(`yarn-am flink-jobmanager: the JobManager's JVM bound RPC (\S+) and REST (\S+) \(learnt in ([0-9.]+ s)`)
	restLogLine  = regexp.MustCompile(`Rest endpoint listening at [^:\s]+:(\d+)`)
	tmRPCLine    = regexp.MustCompile(`yarn-am flink-taskmanager: the JobManager's RPC address (\S+) \(published`)
	rpcStartLine = regexp.MustCompile(`Actor system started at pekko\.tcp://flink@[^:\s]+:(\d+)`)
)

// checkBoundPorts: the driver published the ports the JobManager's log says it bound, none of them
// squatted, without touching the JobManager's other ports, and each of the application's tms
// TaskManagers was given that RPC address.
func checkBoundPorts(t *testing.T, id string, squatted map[int]bool, tms int) {
	t.Helper()
	logs := appLogText(id)
	m := boundLine.FindStringSubmatch(logs)
	require.NotNil(t, m, "the driver published the JobManager's ports:\n%s", e2e.ContainerLogs(id))
	_, rpc, _ := net.SplitHostPort(m[1])
	_, rest, _ := net.SplitHostPort(m[2])
	for _, p := range []string{rpc, rest} {
		n, err := strconv.Atoi(p)
		require.NoError(t, err)
		assert.False(t, squatted[n], "port %d is a squatted one", n)
	}
	jmRest := restLogLine.FindStringSubmatch(logs)
	require.NotNil(t, jmRest, "the JobManager's log names its REST port")
	assert.Equal(t, jmRest[1], rest, "the published REST port is the one the JobManager bound")
	if jmRPC := rpcStartLine.FindAllStringSubmatch(logs, -1); len(jmRPC) > 0 {
		var ports []string
		for _, x := range jmRPC {
			ports = append(ports, x[1])
		}
		assert.Contains(t, ports, rpc, "the published RPC port is one the JobManager's actor system bound")
	}
	// The driver asked the REST port alone: a TLS handshake to the blob server is this error in the
	// JobManager's log.
	assert.NotContains(t, logs, "Unknown operation", "the driver sent nothing to the JobManager's other ports")
	given := tmRPCLine.FindAllStringSubmatch(logs, -1)
	require.Len(t, given, tms, "each TaskManager was given the JobManager's address")
	for _, g := range given {
		assert.Equal(t, m[1], g[1], "the TaskManager's JobManager address is the published one")
	}
	t.Logf("measured: the JobManager bound RPC %s and REST %s; the driver learnt them %s after the JVM started", m[1], m[2], m[3])
}

// appLogText is every log file of the application's containers, one after the other.
func appLogText(id string) string {
	var b strings.Builder
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "*", "*"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err == nil {
				b.Write(data)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}
