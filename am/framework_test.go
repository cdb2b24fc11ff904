package am

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/driverclient"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// probe is a framework that exists only in this test (docs/design.md#adding-a-framework): a [probe]
// table with one key, a driver that writes what the framework gave it and waits to be released, and
// TaskExecutors that run the framework's own command with its own environment. Registering it is all
// it takes for the job file, the AM and the status to know it: no other package names it.
type probe struct {
	framework.Base
	scaled    chan [2]int   // OnScale's calls
	preempted chan []string // OnPreemption's calls
	started   chan framework.AMStart
}

type probeSpec struct{ Greeting string }

func (probe) Name() string { return "probe" }

func (probe) Table() jobfile.TableInfo {
	return jobfile.TableInfo{Reader: probeReader{}, Command: "./probe-worker --serve", Workers: "probe workers"}
}

type probeReader struct{}

func (probeReader) ReadTable(t *jobfile.Table, j *jobfile.Job) any {
	t.OnlyKeys([]string{"greeting"})
	g, _ := t.String("greeting")
	if g == "" {
		t.Problem("probe.greeting: give a greeting")
	}
	j.TaskExecutor.Env["PROBE_TABLE_READ"] = "1"
	return &probeSpec{Greeting: g}
}

func (probe) Driver(*jobfile.Job) (string, string) {
	return `printf '%s' "$PROBE_GREETING" > greeting.txt; while [ ! -e release ]; do sleep 0.05; done`, "the probe's driver is its own"
}

func (p probe) StartAM(_ context.Context, j *jobfile.Job, s framework.AMStart) (*framework.AM, error) {
	spec := j.Framework.Spec.(*probeSpec)
	p.started <- s
	return &framework.AM{
		DriverEnv: map[string]string{"PROBE_GREETING": spec.Greeting + " from attempt " + fmt.Sprint(s.Attempt)},
		WorkerEnv: map[string]string{"PROBE_ROLE": "worker"},
		Links:     []contract.Link{{Name: "Probe UI", URL: "http://" + s.Host + ":1/probe/", Note: "the probe's own page"}},
		OnScale: func(_ context.Context, from, to int) error {
			p.scaled <- [2]int{from, to}
			if to > 3 {
				return fmt.Errorf("probe: at most 3 workers, not %d", to)
			}
			if to < from {
				return &framework.Deferred{Message: "probe: its idle workers go later"}
			}
			return nil
		},
		OnPreemption: func(_ context.Context, ids []string, _ string) { p.preempted <- ids },
	}, nil
}

// A framework that exists only in this test runs end to end through the AM process (RunProcess)
// against the fake cluster: its table is read with the job file, its driver runs in the AM container
// with the framework's environment, its TaskExecutors get its command and environment, the status
// shows its link, and the driver's exit ends the application.
func TestTestOnlyFrameworkRunsThroughTheAM(t *testing.T) {
	p := probe{scaled: make(chan [2]int, 4), preempted: make(chan []string, 4), started: make(chan framework.AMStart, 1)}
	framework.Register(p)
	c := fakecluster.New(t)
	c.Mu.Lock()
	c.KeepRunning = true
	c.Mu.Unlock()

	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("job.toml", []byte(`
name = "probe-job"
[probe]
greeting = "hello"
[taskexecutor]
instances = 2
`), 0o644))
	f, err := jobfile.Read("job.toml")
	require.NoError(t, err)
	job, err := f.StagedJob()
	require.NoError(t, err)
	require.NotNil(t, job.Framework)
	fw := framework.Of(job)
	require.Equal(t, "probe", fw.Name())
	assert.Equal(t, "./probe-worker --serve", job.TaskExecutor.Command, "the framework's command")
	driver, _ := fw.Driver(job)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := startFrameworkAM(t, ctx, c, dir, f, driver, "probe-secret")

	// The driver ran with the framework's environment.
	greeting := waitForFile(t, ctx, filepath.Join(dir, "greeting.txt"), done)
	assert.Equal(t, "hello from attempt 1", greeting)

	// Both TaskExecutors were started with the framework's command and environment.
	require.Eventually(t, func() bool { c.Mu.Lock(); defer c.Mu.Unlock(); return len(c.Contexts) == 2 }, 30*time.Second, 20*time.Millisecond)
	c.Mu.Lock()
	for _, clc := range c.Contexts {
		env := map[string]string{}
		for _, kv := range clc.GetEnvironment() {
			env[kv.GetKey()] = kv.GetValue()
		}
		assert.Equal(t, "worker", env["PROBE_ROLE"], "the framework's worker environment")
		assert.Equal(t, "1", env["PROBE_TABLE_READ"], "what the table reader set")
		assert.Equal(t, "probe", env[contract.EnvFramework], "the launcher learns the framework")
		assert.Contains(t, strings.Join(clc.GetCommand(), " "), "probe-worker --serve")
	}
	tracking := c.RegisterReq.GetTrackingUrl()
	c.Mu.Unlock()

	// The status, anonymous, shows the framework's link.
	resp, err := (&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{}}}).Get(strings.TrimSuffix(tracking, "/") + "/api/v1/status")
	require.NoError(t, err)
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	var st contract.Status
	require.NoError(t, json.Unmarshal(body, &st), string(body))
	require.Len(t, st.Links, 1)
	assert.Equal(t, contract.Link{Name: "Probe UI", URL: "http://127.0.0.1:1/probe/", Note: "the probe's own page"}, st.Links[0])

	// A scale goes through the framework first: refused with its words, or done after it agreed.
	dc, err := driverclient.New(st.SecureAPI, "probe-secret")
	require.NoError(t, err)
	ca, err := os.ReadFile(filepath.Join(dir, contract.CACertFile))
	require.NoError(t, err)
	require.NoError(t, dc.Trust(ca))
	_, err = dc.SetRequirements(ctx, 5)
	require.ErrorContains(t, err, "probe: at most 3 workers, not 5")
	assert.Equal(t, [2]int{2, 5}, <-p.scaled)
	req, err := dc.SetRequirements(ctx, 3)
	require.NoError(t, err)
	assert.Equal(t, 3, req.Instances)
	assert.Equal(t, [2]int{2, 3}, <-p.scaled)
	require.Eventually(t, func() bool { c.Mu.Lock(); defer c.Mu.Unlock(); return len(c.Started) == 3 }, 30*time.Second, 20*time.Millisecond)

	// A scale the framework defers keeps the count and answers with its note; the framework then
	// scales itself (AMStart.Scale), naming the container to stop first: the oldest here, not the
	// newest the AM would pick.
	req, err = dc.SetRequirements(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, 3, req.Instances, "deferred: the count stays")
	assert.Equal(t, "probe: its idle workers go later", req.Note)
	assert.Equal(t, [2]int{3, 2}, <-p.scaled)
	s := <-p.started
	assert.Equal(t, 3, s.Instances())
	c.Mu.Lock()
	oldest := c.Started[0]
	c.Mu.Unlock()
	require.NoError(t, s.Scale(2, []string{oldest}, "probe demand"))
	assert.Equal(t, 2, s.Instances())
	require.Eventually(t, func() bool { c.Mu.Lock(); defer c.Mu.Unlock(); return len(c.Stopped) == 1 }, 30*time.Second, 20*time.Millisecond)
	c.Mu.Lock()
	assert.Equal(t, []string{oldest}, c.Stopped, "the container the framework named")
	c.Mu.Unlock()

	// A preemption warning reaches the framework with the containers named.
	c.Mu.Lock()
	victim := c.Started[1] // [0] was stopped above
	c.Preempt = []string{victim}
	c.Mu.Unlock()
	select {
	case ids := <-p.preempted:
		assert.Equal(t, []string{victim}, ids)
	case <-ctx.Done():
		t.Fatal("the framework was not told of the preemption warning")
	}

	// The driver's exit ends the application with its outcome.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "release"), nil, 0o644))
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the AM did not end after its driver exited")
	}
	require.NoError(t, r.err)
	assert.Equal(t, 0, r.code)
	c.Mu.Lock()
	defer c.Mu.Unlock()
	require.NotNil(t, c.FinishReq)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, c.FinishReq.GetFinalApplicationStatus())
}

// startFrameworkAM runs the AM process (RunProcess) of the job file f with driver in dir against the
// fake cluster, as YARN starts it in its container: the manifest of what submit staged, the site
// files naming the fake RM, the token file with the AM-RM token and the application secret, the
// container's id. The AM's end is sent on the channel returned.
func startFrameworkAM(t *testing.T, ctx context.Context, c *fakecluster.Cluster, dir string, f *jobfile.File, driver, secret string) chan result {
	t.Helper()
	// What submit staged and YARN put in the AM container: the manifest of the staged files, the
	// site files, the token file, the container's id.
	var manifest []contract.LocalResource
	for _, name := range []string{contract.StagedBinary, contract.StagedJob} {
		manifest = append(manifest, contract.LocalResource{Alias: name, URL: "hdfs://127.0.0.1:9000/user/alice/.yarn-am/app/" + name,
			Size: 9, Timestamp: 1, Type: "FILE", Visibility: "APPLICATION"})
	}
	data, err := json.Marshal(manifest)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(contract.StagedManifest, data, 0o644))
	conf := filepath.Join(dir, "conf")
	require.NoError(t, os.Mkdir(conf, 0o755))
	site := fmt.Sprintf(`<configuration><property><name>yarn.resourcemanager.scheduler.address</name><value>%s</value></property>
<property><name>yarn.resourcemanager.address</name><value>%s</value></property></configuration>`, c.Scheduler.Addr(), c.ClientPort(t).Addr())
	require.NoError(t, os.WriteFile(filepath.Join(conf, "yarn-site.xml"), []byte(site), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(conf, "core-site.xml"), []byte("<configuration/>"), 0o644))
	creds := yarnrpc.NewCredentials()
	creds.Tokens[string(fakecluster.AMRMID)] = fakecluster.AMToken()
	creds.Secrets[contract.SecretAlias] = []byte(secret)
	require.NoError(t, creds.WriteFile(filepath.Join(dir, "container_tokens")))
	t.Setenv("HADOOP_CONF_DIR", conf)
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", filepath.Join(dir, "container_tokens"))
	t.Setenv("HADOOP_USER_NAME", "alice")
	t.Setenv("NM_HOST", "127.0.0.1")
	t.Setenv("CONTAINER_ID", yarnrpc.FormatContainerID(&hadooppb.ContainerIdProto{AppAttemptId: c.Att, Id: proto.Int64(1)}))
	t.Setenv(contract.EnvStagingDir, "")

	done := make(chan result, 1)
	go func() {
		code, err := RunProcess(ctx, ProcessOptions{Job: f, Driver: driver, HeartbeatFast: 20 * time.Millisecond, HeartbeatSlow: 50 * time.Millisecond})
		done <- result{code, err}
	}()
	return done
}

// result is how RunProcess ended.
type result struct {
	code int
	err  error
}

func (r result) String() string { return fmt.Sprintf("exit %d, %v", r.code, r.err) }

// waitForFile waits for the file the driver writes, or fails when the AM ends first.
func waitForFile[T any](t *testing.T, ctx context.Context, p string, done chan T) string {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			return string(b)
		}
		select {
		case r := <-done:
			t.Fatalf("the AM ended before its driver wrote %s: %v", p, r)
		case <-ctx.Done():
			t.Fatalf("the driver did not write %s", p)
		case <-tick.C:
		}
	}
}
