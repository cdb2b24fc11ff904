package flink

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/jobfile"
)

// A TaskManager's JVM waits for the JobManager as [flink] wait-for-jobmanager says
// (docs/flink.md#taskmanagers-on-the-jobmanagers-host): with the default only on the JobManager's
// host, until its job is past INITIALIZING as read through the AM ($YARN_AM_FLINK_UI: the JobManager
// answers the AM alone), and never longer than the bound.
func TestWaitForJobManager(t *testing.T) {
	var polls, started atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/flink/jobs/overview" {
			http.NotFound(w, r)
			return
		}
		polls.Add(1)
		if started.Load() == 0 {
			w.Write([]byte(`{"jobs":[{"jid":"j1","name":"j","state":"INITIALIZING"}]}`))
			return
		}
		w.Write([]byte(`{"jobs":[{"jid":"j1","name":"j","state":"RUNNING"}]}`))
	}))
	defer srv.Close()
	jmHost, _, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	t.Setenv(envUI, srv.URL+"/flink/")
	setup := func(mode string) *flinkSetup { return waitSetup(jmHost, mode) }
	for _, tc := range waitCases(jmHost) {
		t.Run(tc.name, func(t *testing.T) {
			polls.Store(0)
			started.Store(0)
			done := make(chan struct{})
			defer close(done)
			go func() { // the JobManager starts its job after a few polls
				for polls.Load() < 3 {
					select {
					case <-done:
						return
					case <-time.After(10 * time.Millisecond):
					}
				}
				started.Store(1)
			}()
			var out strings.Builder
			waitForJobManager(setup(tc.mode), tc.tmHost, time.Minute, &out)
			if !tc.waits {
				assert.Zero(t, polls.Load(), "no poll")
				assert.Empty(t, out.String())
				return
			}
			assert.GreaterOrEqual(t, polls.Load(), int32(4), "it waited for the job to leave INITIALIZING")
			assert.Contains(t, out.String(), "yarn-am flink-taskmanager: started after the JobManager at "+srv.URL+"/flink")
			assert.Contains(t, out.String(), "job j1 is RUNNING")
		})
	}

	// A JobManager that never starts its job holds the TaskManager only up to the bound.
	polls.Store(0)
	started.Store(0)
	var out strings.Builder
	begin := time.Now()
	waitForJobManager(setup(waitSameHost), jmHost, 300*time.Millisecond, &out)
	assert.Less(t, time.Since(begin), 10*time.Second)
	assert.Contains(t, out.String(), "without the JobManager at "+srv.URL+"/flink")
	assert.Contains(t, out.String(), "job j1 is INITIALIZING")
}

func TestSameHost(t *testing.T) {
	ctx := context.Background()
	assert.True(t, sameHost(ctx, "node-a", "NODE-A"))
	assert.True(t, sameHost(ctx, "localhost", "127.0.0.1"), "an address in common")
	assert.True(t, sameHost(ctx, "127.0.0.2", "127.0.0.3"), "loopback addresses are this machine")
	assert.False(t, sameHost(ctx, "127.0.0.1", "192.0.2.1"))
	assert.False(t, sameHost(ctx, "", ""))
	assert.False(t, sameHost(ctx, "node-a.invalid", "node-b.invalid"))
}

// A provided home's conf/ is first read in the container: its own REST TLS that the AM could not use
// (no trust store) fails the JobManager and every TaskManager there, with the key, instead of an AM
// waiting for an outcome it cannot read.
func TestFlinkSetupRefusesRESTTLSFromTheHome(t *testing.T) {
	dir := inProvidedHome(t, "1.20.5", "security:\n  ssl:\n    rest:\n      enabled: true\n")
	_, err := loadFlinkSetup()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `security.ssl.rest.enabled = true needs security.ssl.rest.truststore`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "flink/conf/config.yaml"), []byte("security.ssl.rest.enabled: false\n"), 0o644))
	_, err = loadFlinkSetup()
	require.NoError(t, err)
}

// waitSetup is a TaskManager's setup of an application job whose JobManager runs on jmHost, waiting
// as mode says.
func waitSetup(jmHost, mode string) *flinkSetup {
	spec := &flinkSpec{Jar: "job.jar", WaitForJobManager: mode}
	return &flinkSetup{job: &jobfile.Job{Framework: &jobfile.FrameworkPart{Name: frameworkName, Spec: spec}}, spec: spec, host: jmHost}
}

// waitCase is a TaskManager on tmHost with [flink] wait-for-jobmanager = mode, and whether it waits.
type waitCase struct {
	name, mode, tmHost string
	waits              bool
}

// waitCases are the wait-for-jobmanager modes on the JobManager's host (jmHost) and another one.
func waitCases(jmHost string) []waitCase {
	return []waitCase{
		{"default, the JobManager's host", waitSameHost, jmHost, true},
		{"default, another host", waitSameHost, "node-b.invalid", false},
		{"always, another host", waitAlways, "node-b.invalid", true},
		{"never, the JobManager's host", waitNever, jmHost, false},
	}
}

// inProvidedHome makes the working directory a TaskExecutor's with a provided Flink home of version
// whose conf/config.yaml is config (the job file names it by its HDFS path, as a container sees it
// after localisation), for loadFlinkSetup; it returns that directory.
func inProvidedHome(t *testing.T, version, config string) string {
	t.Helper()
	dir := t.TempDir()
	for f, body := range map[string]string{
		"job.toml": "[flink]\nprovided = \"hdfs://nn:8020/flink.tar\"\njar = \"job.jar\"\n",
		"flink/lib/flink-dist-" + version + ".jar": "",
		"flink/bin/bash-java-utils.jar":            "",
		"flink/plugins/.keep":                      "",
		"flink/conf/config.yaml":                   config,
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644))
	}
	t.Chdir(dir)
	return dir
}
