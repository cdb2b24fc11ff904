//go:build integration

package flink_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract/amtls"
	flink "github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// flinkRelayLine is the test job's relay mode's line (docs/flink.md#the-test-job).
var flinkRelayLine = regexp.MustCompile(`YARN_AM_FLINK_RELAY subtask=(\d+) records=(\d+) seconds=([0-9.]+) container=(\S+)`)

// flinkBlobLine is the JobManager's log line of its blob server's port.
var flinkBlobLine = regexp.MustCompile(`Started BLOB server at \S+:(\d+) `)

// relayJob is Flink line v's relay job at parallelism 2 on two TaskManagers of one slot, with [flink]
// internal-tls set to internalTLS.
func relayJob(t *testing.T, v flinkVersion, internalTLS bool) string {
	t.Helper()
	p := flinkJobOf(t, v, fmt.Sprintf("flink-internal-tls-%v", internalTLS), 2, 1, []string{"relay"}, `"parallelism.default" = 2`)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	data = []byte(strings.Replace(string(data), "[flink]\n", fmt.Sprintf("[flink]\ninternal-tls = %v\n", internalTLS), 1))
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// getJSON reads a JSON answer of the JobManager's REST API through the AM's proxy (ui).
func getJSON(ctx context.Context, ui, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(ui, "/")+"/"+path, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %.200s", path, resp.Status, body)
	}
	return json.Unmarshal(body, v)
}

// jobManagerConfig is the running JobManager's effective configuration (/jobmanager/config), which
// the AM's proxy serves its owner alone (with the secret over HTTPS).
func jobManagerConfig(t *testing.T, id string) map[string]string {
	t.Helper()
	var kv []struct{ Key, Value string }
	code, body := ownerOf(t, id).get(t, "flink/jobmanager/config")
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, json.Unmarshal([]byte(body), &kv))
	out := map[string]string{}
	for _, e := range kv {
		out[e.Key] = e.Value
	}
	return out
}

// waitRelayRunning waits until the job is RUNNING (through the AM's proxy) and returns the proxy's
// URL and how long after start that was seen.
func waitRelayRunning(t *testing.T, id string, start time.Time) (string, time.Duration) {
	t.Helper()
	var ui string
	var running time.Duration
	e2e.WaitFor(t, id, 4*time.Minute, "the relay job RUNNING", func(d e2e.StatusDoc) bool {
		if e2e.IsEnded(d.Report.State) {
			t.Fatalf("the application ended: %s\n%s", d.Report.Diagnostics, e2e.ContainerLogs(id))
		}
		if ui == "" {
			ui = flinkUI(t, id)
		}
		if ui == "" {
			return false
		}
		rest := &flink.REST{URL: ui, HTTP: &http.Client{Timeout: 10 * time.Second}}
		for {
			jobs, err := rest.Jobs(context.Background())
			if err == nil && len(jobs) == 1 && jobs[0].State == "RUNNING" {
				running = time.Since(start)
				return true
			}
			if err != nil || time.Since(start) > 4*time.Minute || (len(jobs) == 1 && jobs[0].State != "CREATED" && jobs[0].State != "INITIALIZING") {
				return false
			}
			time.Sleep(200 * time.Millisecond) // polling the job's state at a finer grain than status
		}
	})
	return ui, running
}

// relayRate waits until both map subtasks, in two different containers, have received records for
// at least window seconds after a warm-up of warm seconds, and returns the records per second both
// received together over their last window.
func relayRate(t *testing.T, id string, warm, window float64) float64 {
	t.Helper()
	type point struct{ records, seconds float64 }
	var rate float64
	require.Eventually(t, func() bool {
		first, last, containers := map[string]point{}, map[string]point{}, map[string]string{}
		for _, m := range tmLines(id, flinkRelayLine) {
			r, _ := strconv.ParseFloat(m[2], 64)
			s, _ := strconv.ParseFloat(m[3], 64)
			containers[m[1]] = m[4]
			if s >= warm {
				if _, ok := first[m[1]]; !ok {
					first[m[1]] = point{r, s}
				}
				last[m[1]] = point{r, s}
			}
		}
		if len(containers) != 2 || containers["0"] == containers["1"] || len(last) != 2 {
			return false
		}
		rate = 0
		for sub, l := range last {
			f := first[sub]
			if l.seconds-f.seconds < window {
				return false
			}
			rate += (l.records - f.records) / (l.seconds - f.seconds)
		}
		return true
	}, 4*time.Minute, time.Second, "both relay subtasks in two TaskManagers receiving records:\n%s", e2e.ContainerLogs(id))
	return rate
}

// refused checks that addr does not take a stranger's connection: a TLS handshake without a client
// certificate, and one with a certificate of another authority, fail for want of this application's
// certificate (the alert names the certificate: the port speaks TLS and asks for one); a plain TCP
// client's bytes get nothing but, at most, a TLS alert.
func refused(t *testing.T, what, addr string) {
	t.Helper()
	otherCA, otherKey, err := amtls.NewAuthority("stranger")
	require.NoError(t, err)
	stranger, err := amtls.PeerCertificate(otherCA, otherKey, "stranger")
	require.NoError(t, err)
	for name, certs := range map[string][]tls.Certificate{"no certificate": nil, "another authority's certificate": {stranger}} {
		d := &net.Dialer{Timeout: 20 * time.Second}
		// TLS 1.2, Flink's security.ssl.protocol: the server checks the client's certificate within
		// the handshake, so the refusal is the handshake's.
		c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true, Certificates: certs, // #nosec: the test is the stranger
			MaxVersion: tls.VersionTLS12})
		if err == nil {
			c.Close()
		}
		if assert.Error(t, err, "%s %s: a TLS client with %s completed the handshake", what, addr, name) {
			assert.Contains(t, err.Error(), "certificate", "%s %s: a TLS client with %s was refused for another reason than its certificate", what, addr, name)
		}
	}
	c, err := net.DialTimeout("tcp", addr, 20*time.Second)
	require.NoError(t, err, "%s %s: the port is not listening (the test would prove nothing)", what, addr)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	_, _ = c.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	buf := make([]byte, 64)
	n, err := io.ReadAtLeast(c, buf, 1)
	// Nothing (a close, a reset, or silence until the deadline) or a TLS alert record.
	if n > 0 {
		assert.Equal(t, byte(0x15), buf[0], "%s %s: a plain client got %q (%v), not a TLS alert", what, addr, buf[:n], err)
	}
}

// TestFlinkInternalTLS (docs/flink.md#who-can-reach-the-jobmanager, docs/security.md), on Flink 1.20.5
// and 2.3.0 (whose Netty would check a host name in the certificate, which names none): with
// [flink] internal-tls on (the default), a job whose records cross between two TaskManagers runs
// (they registered with the JobManager and exchange data under mutual TLS: Flink calls the
// addresses pekko.ssl.tcp), and a stranger gets no connection to the JobManager's RPC port nor to a
// TaskManager's RPC and data ports, with no certificate or one of another authority; the REST port
// refuses the certificate a TaskExecutor holds (restRefusesTaskExecutorsCertificate); and once the
// application is killed nothing of it is left in the node's /tmp (nothingOfTheJobInTmp).
func TestFlinkInternalTLS(t *testing.T) {
	e2e.Env(t)
	eachFlinkAtOnce(t, testFlinkInternalTLS)
}

func testFlinkInternalTLS(t *testing.T, v flinkVersion) {
	tmpBefore := tmpNames(t)
	id := e2e.SubmitDetached(t, relayJob(t, v, true))
	ui, _ := waitRelayRunning(t, id, time.Now())
	rate := relayRate(t, id, 2, 4)
	t.Logf("relay: %.0f records/s over both subtasks", rate)
	assert.Greater(t, rate, 0.0)

	conf := jobManagerConfig(t, id)
	assert.Equal(t, "true", conf["security.ssl.internal.enabled"], "the JobManager's configuration")
	assert.Equal(t, "PKCS12", conf["security.ssl.internal.keystore-type"])
	host, port := conf["jobmanager.rpc.address"], conf["jobmanager.rpc.port"]
	require.NotEmpty(t, host, "jobmanager.rpc.address in %v", conf)
	require.NotEmpty(t, port, "jobmanager.rpc.port")
	refused(t, "the JobManager's RPC port", net.JoinHostPort(host, port))
	// The blob server binds a free port (blob.server.port 0) and names it in the JobManager's log.
	var blob string
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "*", "jobmanager.log"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			if m := flinkBlobLine.FindSubmatch(data); m != nil {
				blob = string(m[1])
			}
		}
	}
	require.NotEmpty(t, blob, "the blob server's port in jobmanager.log:\n%s", e2e.ContainerLogs(id))
	refused(t, "the JobManager's blob server", net.JoinHostPort(host, blob))

	var tms struct {
		TaskManagers []struct {
			Path     string `json:"path"`
			DataPort int    `json:"dataPort"`
		} `json:"taskmanagers"`
	}
	require.NoError(t, getJSON(context.Background(), ui, "taskmanagers", &tms))
	require.Len(t, tms.TaskManagers, 2)
	tm := tms.TaskManagers[0]
	u, err := url.Parse(tm.Path)
	require.NoError(t, err, "a TaskManager's path %q", tm.Path)
	assert.Equal(t, "pekko.ssl.tcp", u.Scheme, "the TaskManager's RPC address")
	refused(t, "a TaskManager's RPC port", u.Host)
	refused(t, "a TaskManager's data port", net.JoinHostPort(u.Hostname(), strconv.Itoa(tm.DataPort)))

	restRefusesTaskExecutorsCertificate(t, id)
	nothingOfTheJobInTmp(t, id, tmpBefore)
}
