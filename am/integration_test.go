//go:build integration

package am_test

// The ApplicationMaster on the real mini cluster (make minicluster-up; source .minicluster/env). The
// test stages and submits the AM itself, with yarnrpc.ApplicationClient and colinmarc/hdfs, following
// the client ↔ AM contract, so the AM is proven independently of `yarn-am submit`.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/contract/launchctx"
	"github.com/yarn-am/yarn-am/internal/hdfsfile"
	"github.com/yarn-am/yarn-am/testkit/itest"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

type cluster struct {
	conf  *yarnrpc.Config
	rm    *yarnrpc.ApplicationClient
	fs    *hdfs.Client
	fsURI string
	bin   string
	root  string
}

func miniCluster(t *testing.T) *cluster {
	t.Helper()
	itest.RequireEnv(t, "HADOOP_CONF_DIR", "YARN_AM_HDFS")
	conf, err := yarnrpc.LoadConfigFromEnv()
	require.NoError(t, err)
	rm, err := yarnrpc.NewApplicationClient(conf, yarnrpc.Auth{})
	require.NoError(t, err)
	t.Cleanup(func() { rm.Close() })
	u, err := url.Parse(os.Getenv("YARN_AM_HDFS"))
	require.NoError(t, err)
	fs, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{u.Host}, User: yarnrpc.CurrentUser()})
	require.NoError(t, err)
	t.Cleanup(func() { fs.Close() })
	return &cluster{conf: conf, rm: rm, fs: fs, fsURI: "hdfs://" + u.Host, bin: itest.Binary(t), root: itest.Root()}
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// app is one submitted application.
type app struct {
	id        *hadooppb.ApplicationIdProto
	name      string
	staging   string // path on HDFS
	secret    string
	caCert    []byte // the application's TLS authority (PEM)
	submitted time.Time
}

// put copies a local file to HDFS and returns its manifest entry.
func (c *cluster) put(t *testing.T, local, remote, alias string) contract.LocalResource {
	t.Helper()
	data, err := os.ReadFile(local)
	require.NoError(t, err)
	w, err := c.fs.Create(remote)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, hdfsfile.Close(w))
	fi, err := c.fs.Stat(remote)
	require.NoError(t, err)
	return contract.LocalResource{Alias: alias, URL: c.fsURI + remote, Size: fi.Size(), Timestamp: fi.ModTime().UnixMilli(), Type: "FILE", Visibility: "APPLICATION"}
}

// submit stages the binary, the job, the Hadoop site files and the fake nvidia-smi, and submits the AM.
func (c *cluster) submit(t *testing.T, jobTOML string, amArgs ...string) *app {
	t.Helper()
	jobTOML = strings.ReplaceAll(jobTOML, "/tmp/yarn-am-gpu-coordination", coordinationDir())
	ctx := ctxT(t, time.Minute)
	na, err := c.rm.GetNewApplication(ctx)
	require.NoError(t, err)
	id := na.GetApplicationId()
	appID := yarnrpc.FormatApplicationID(id)
	user := yarnrpc.CurrentUser()
	dir := path.Join("/user", user, ".yarn-am", appID)
	require.NoError(t, c.fs.MkdirAll(dir, 0o700))

	tmp := t.TempDir()
	jobFile := filepath.Join(tmp, "job.toml")
	require.NoError(t, os.WriteFile(jobFile, []byte(jobTOML), 0o644))
	var amRes []contract.LocalResource
	amRes = append(amRes, c.put(t, c.bin, dir+"/yarn-am", "yarn-am"), c.put(t, jobFile, dir+"/job.toml", "job.toml"))
	for _, f := range []string{"core-site.xml", "yarn-site.xml", "hdfs-site.xml"} {
		p := filepath.Join(os.Getenv("HADOOP_CONF_DIR"), f)
		if _, err := os.Stat(p); err == nil {
			amRes = append(amRes, c.put(t, p, dir+"/"+f, f))
		}
	}
	manifest := []contract.LocalResource{c.put(t, filepath.Join(c.root, "testdata/fake-nvidia-smi/nvidia-smi"), dir+"/nvidia-smi", "nvidia-smi")}
	mdata, _ := json.Marshal(manifest)
	mfile := filepath.Join(tmp, "manifest.json")
	require.NoError(t, os.WriteFile(mfile, mdata, 0o644))
	amRes = append(amRes, c.put(t, mfile, dir+"/manifest.json", "manifest.json"))

	lrs, err := launchctx.LocalResources(amRes)
	require.NoError(t, err)
	clc := &hadooppb.ContainerLaunchContextProto{LocalResources: lrs}
	secret := fmt.Sprintf("%064x", time.Now().UnixNano())
	env := map[string]string{"HADOOP_CONF_DIR": "$PWD", contract.EnvStagingDir: c.fsURI + dir, "HADOOP_USER_NAME": user, "YARN_AM_LOG_LEVEL": "info"}
	for k, v := range env {
		clc.Environment = append(clc.Environment, &hadooppb.StringStringMapProto{Key: proto.String(k), Value: proto.String(v)})
	}
	args := []string{"./yarn-am", "am", "--job", "job.toml"}
	for _, a := range amArgs {
		args = append(args, contract.ShellQuote(a))
	}
	cmd := strings.Join(args, " ") + " 1><LOG_DIR>/am.stdout 2><LOG_DIR>/am.stderr"
	clc.Command = []string{strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(cmd)}
	creds := yarnrpc.NewCredentials()
	creds.Secrets[contract.SecretAlias] = []byte(secret)
	caCert, caKey, err := amtls.NewAuthority(appID)
	require.NoError(t, err)
	creds.Secrets[contract.TLSCACertAlias], creds.Secrets[contract.TLSCAKeyAlias] = caCert, caKey
	clc.Tokens = creds.Marshal()

	name := "am-it-" + appID
	sc := &hadooppb.ApplicationSubmissionContextProto{
		ApplicationId: id, ApplicationName: proto.String(name), Queue: proto.String("default"),
		AmContainerSpec: clc, MaxAppAttempts: proto.Int32(1), ApplicationType: proto.String("YARN-AM"),
		ApplicationTags: []string{"yarn-am"},
		Resource:        &hadooppb.ResourceProto{Memory: proto.Int64(256), VirtualCores: proto.Int32(1)},
	}
	submitted := time.Now()
	require.NoError(t, c.rm.SubmitApplication(ctx, sc))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("AM logs of %s:\n%s", appID, c.amLog(appID))
		}
		_, _ = c.rm.KillApplication(context.Background(), id, "test over")
	})
	return &app{id: id, name: name, staging: dir, secret: secret, caCert: caCert, submitted: submitted}
}

// amLog returns the AM's stderr from the NM log dirs.
func (c *cluster) amLog(appID string) string {
	var b strings.Builder
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, appID, "*", "am.stderr"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			b.Write(data)
		}
	}
	return b.String()
}

// workerLogs returns container id → stdout of every TaskExecutor container.
func (c *cluster) workerLogs(appID string) map[string]string {
	out := map[string]string{}
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, appID, "*", "stdout"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			out[filepath.Base(filepath.Dir(f))] = string(data)
		}
	}
	return out
}

func (c *cluster) report(t *testing.T, a *app) *hadooppb.ApplicationReportProto {
	r, err := c.rm.GetApplicationReport(ctxT(t, 30*time.Second), a.id)
	require.NoError(t, err)
	return r
}

// wait polls the RM until the application has ended.
func (c *cluster) wait(t *testing.T, a *app, d time.Duration) *hadooppb.ApplicationReportProto {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		r := c.report(t, a)
		switch r.GetYarnApplicationState() {
		case hadooppb.YarnApplicationStateProto_FINISHED, hadooppb.YarnApplicationStateProto_FAILED, hadooppb.YarnApplicationStateProto_KILLED:
			return r
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s did not end within %v", yarnrpc.FormatApplicationID(a.id), d)
	return nil
}

// amStatus reads the AM's API once it is registered (nil before).
func (c *cluster) amStatus(t *testing.T, a *app) *contract.Status {
	r := c.report(t, a)
	if r.GetRpcPort() <= 0 || r.GetHost() == "" || r.GetHost() == "N/A" {
		return nil
	}
	resp, err := http.Get(fmt.Sprintf("http://%s:%d/api/v1/status", r.GetHost(), r.GetRpcPort()))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var s contract.Status
	if json.NewDecoder(resp.Body).Decode(&s) != nil {
		return nil
	}
	return &s
}

func (c *cluster) stagingGone(t *testing.T, a *app) bool {
	_, err := c.fs.Stat(a.staging)
	return os.IsNotExist(err)
}

const gpuJob = `name = "am-it"
"external-resources" = "gpu"
"external-resource.gpu.amount" = 1
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
"external-resource.gpu.param.discovery-script.args" = "--enable-coordination-mode --coordination-dir /tmp/yarn-am-gpu-coordination"

[taskexecutor]
instances = %d
command = '%s'
memory = 256
max-failures = %d

[taskexecutor.env]
PATH = "$PWD:/usr/local/bin:/usr/bin:/bin"
FAKE_GPU_COUNT = "4"
`

func TestAMRunsFourGPUTaskExecutors(t *testing.T) {
	c := miniCluster(t)
	job := fmt.Sprintf(gpuJob, 4, `echo "worker gpu=$YARN_AM_RESOURCE_GPU cuda=$CUDA_VISIBLE_DEVICES node=$NM_HOST"; sleep 4`, 1)
	a := c.submit(t, job)
	appID := yarnrpc.FormatApplicationID(a.id)

	var allRunning time.Duration
	var seen *contract.Status
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		s := c.amStatus(t, a)
		if s != nil && s.Counts.Running == 4 {
			allRunning = time.Since(a.submitted)
		}
		if s != nil {
			withInfos := 0
			for _, ct := range s.Containers {
				if len(ct.Infos["gpu"]) == 1 {
					withInfos++
				}
			}
			if withInfos == 4 {
				seen = s
			}
		}
		if allRunning > 0 && seen != nil {
			break
		}
		if r := c.report(t, a); r.GetYarnApplicationState() >= hadooppb.YarnApplicationStateProto_FINISHED {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := c.wait(t, a, 3*time.Minute)
	require.Equal(t, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, r.GetFinalApplicationStatus(), "diagnostics: %s", r.GetDiagnostics())
	assert.Contains(t, r.GetDiagnostics(), "all 4 TaskExecutors exited with code 0")
	require.NotZero(t, allRunning, "the AM's status never showed 4 running TaskExecutors")
	require.NotNil(t, seen, "the AM's status never showed a GPU index for all 4 containers")
	t.Logf("submit → 4 TaskExecutors running: %v", allRunning.Round(time.Millisecond))

	// Each TaskExecutor got a distinct GPU on its node; the AM's status shows the same indexes.
	statusIdx := map[string]string{}
	for _, ct := range seen.Containers {
		statusIdx[ct.ID] = ct.Infos["gpu"][0]["index"]
	}
	logs := c.workerLogs(appID)
	re := regexp.MustCompile(`worker gpu=(\d+) cuda=(\d+) node=(\S+)`)
	perNode := map[string][]string{}
	matched := 0
	for cid, out := range logs {
		m := re.FindStringSubmatch(out)
		if m == nil {
			continue
		}
		matched++
		assert.Equal(t, m[1], m[2], "CUDA_VISIBLE_DEVICES matches the reported index in %s", cid)
		assert.Equal(t, statusIdx[cid], m[1], "the AM's status shows the index the worker got (%s)", cid)
		perNode[m[3]] = append(perNode[m[3]], m[1])
	}
	assert.Equal(t, 4, matched, "4 worker logs; got %v", logs)
	for node, idx := range perNode {
		sort.Strings(idx)
		for i := 1; i < len(idx); i++ {
			assert.NotEqual(t, idx[i-1], idx[i], "two workers on %s share GPU %s", node, idx[i])
		}
	}
	assert.Eventually(t, func() bool { return c.stagingGone(t, a) }, 10*time.Second, 200*time.Millisecond, "staging directory deleted")
	var rss []string
	require.Eventually(t, func() bool {
		rss = regexp.MustCompile(`am peak RSS: ([0-9.]+ MiB)`).FindStringSubmatch(c.amLog(appID))
		return rss != nil
	}, 20*time.Second, 200*time.Millisecond, "the AM logs its peak RSS at exit")
	t.Logf("AM peak RSS: %s", rss[1])
}

func TestAMFailsAfterRetryLimit(t *testing.T) {
	c := miniCluster(t)
	a := c.submit(t, fmt.Sprintf(gpuJob, 1, `echo failing; exit 3`, 2))
	r := c.wait(t, a, 3*time.Minute)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_FAILED, r.GetFinalApplicationStatus())
	assert.Contains(t, r.GetDiagnostics(), "exit code 3")
	assert.Contains(t, r.GetDiagnostics(), "3 TaskExecutors failed, more than taskexecutor.max-failures = 2")
	assert.Eventually(t, func() bool { return c.stagingGone(t, a) }, 10*time.Second, 200*time.Millisecond)
}

func TestAMDriverMode(t *testing.T) {
	c := miniCluster(t)
	for _, tc := range []struct {
		code int
		want hadooppb.FinalApplicationStatusProto
	}{{0, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED}, {1, hadooppb.FinalApplicationStatusProto_APP_FAILED}} {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			// The driver reads the AM's API with its address from the environment, then exits.
			driver := fmt.Sprintf(`curl -sf --cacert "$YARN_AM_CA_CERT" "${YARN_AM_API}status" | grep -q '"state"' && test -n "$YARN_AM_SECRET" && exit %d; exit 7`, tc.code)
			a := c.submit(t, fmt.Sprintf(gpuJob, 1, `sleep 60`, 1), "--driver", driver)
			r := c.wait(t, a, 3*time.Minute)
			assert.Equal(t, tc.want, r.GetFinalApplicationStatus(), "diagnostics: %s", r.GetDiagnostics())
			if tc.code != 0 {
				assert.Contains(t, r.GetDiagnostics(), "exited with code 1")
			}
		})
	}
}

// TestAMKilledDeletesStaging: on its last attempt, an AM stopped by SIGTERM deletes the staging
// directory. (With attempts left it keeps it for the next attempt: TestAMRestartKeepsItsTaskExecutors;
// yarn-am kill then removes it: TestE2EKillRunningJobRemovesStaging.)
func TestAMKilledDeletesStaging(t *testing.T) {
	c := miniCluster(t)
	a := c.submit(t, "max-attempts = 1\n"+fmt.Sprintf(gpuJob, 1, `sleep 300`, 1))
	require.Eventually(t, func() bool { s := c.amStatus(t, a); return s != nil && s.Counts.Running == 1 }, 2*time.Minute, 200*time.Millisecond)
	_, err := c.rm.KillApplication(ctxT(t, 30*time.Second), a.id, "killed by the test")
	require.NoError(t, err)
	r := c.wait(t, a, 2*time.Minute)
	assert.Equal(t, hadooppb.YarnApplicationStateProto_KILLED, r.GetYarnApplicationState())
	assert.Eventually(t, func() bool { return c.stagingGone(t, a) }, 20*time.Second, 200*time.Millisecond, "the AM deletes staging on SIGTERM")
}

var _ = io.Discard
