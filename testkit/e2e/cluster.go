//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
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

// Cluster is the mini cluster (make minicluster-up) as the AM-level tests drive it: its
// ResourceManager and HDFS clients, the yarn-am binary they stage, and the repository's root.
type Cluster struct {
	conf  *yarnrpc.Config
	RM    *yarnrpc.ApplicationClient
	FS    *hdfs.Client
	FSURI string
	bin   string
	Root  string
}

// MiniCluster connects to the mini cluster of the environment (HADOOP_CONF_DIR, YARN_AM_HDFS),
// failing the test when it is not set; the clients close when the test ends.
func MiniCluster(t *testing.T) *Cluster {
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
	return &Cluster{conf: conf, RM: rm, FS: fs, FSURI: "hdfs://" + u.Host, bin: itest.Binary(t), Root: itest.Root()}
}

// Context is a context that ends after d or with the test.
func Context(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// App is one submitted application.
type App struct {
	ID        *hadooppb.ApplicationIdProto
	name      string
	staging   string // path on HDFS
	Secret    string
	CACert    []byte // the application's TLS authority (PEM)
	Submitted time.Time
}

// Put copies a local file to HDFS and returns its manifest entry.
func (c *Cluster) Put(t *testing.T, local, remote, alias string) contract.LocalResource {
	t.Helper()
	data, err := os.ReadFile(local)
	require.NoError(t, err)
	w, err := c.FS.Create(remote)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, hdfsfile.Close(w))
	fi, err := c.FS.Stat(remote)
	require.NoError(t, err)
	return contract.LocalResource{Alias: alias, URL: c.FSURI + remote, Size: fi.Size(), Timestamp: fi.ModTime().UnixMilli(), Type: "FILE", Visibility: "APPLICATION"}
}

// Submit stages the binary, the job, the Hadoop site files and the fake nvidia-smi, and submits the AM.
func (c *Cluster) Submit(t *testing.T, jobTOML string, amArgs ...string) *App {
	t.Helper()
	jobTOML = strings.ReplaceAll(jobTOML, "/tmp/yarn-am-gpu-coordination", CoordinationDir())
	ctx := Context(t, time.Minute)
	na, err := c.RM.GetNewApplication(ctx)
	require.NoError(t, err)
	id := na.GetApplicationId()
	appID := yarnrpc.FormatApplicationID(id)
	user := yarnrpc.CurrentUser()
	dir := path.Join("/user", user, ".yarn-am", appID)
	require.NoError(t, c.FS.MkdirAll(dir, 0o700))

	tmp := t.TempDir()
	jobFile := filepath.Join(tmp, "job.toml")
	require.NoError(t, os.WriteFile(jobFile, []byte(jobTOML), 0o644))
	var amRes []contract.LocalResource
	amRes = append(amRes, c.Put(t, c.bin, dir+"/yarn-am", "yarn-am"), c.Put(t, jobFile, dir+"/job.toml", "job.toml"))
	for _, f := range []string{"core-site.xml", "yarn-site.xml", "hdfs-site.xml"} {
		p := filepath.Join(os.Getenv("HADOOP_CONF_DIR"), f)
		if _, err := os.Stat(p); err == nil {
			amRes = append(amRes, c.Put(t, p, dir+"/"+f, f))
		}
	}
	manifest := []contract.LocalResource{c.Put(t, filepath.Join(c.Root, "testdata/fake-nvidia-smi/nvidia-smi"), dir+"/nvidia-smi", "nvidia-smi")}
	mdata, _ := json.Marshal(manifest)
	mfile := filepath.Join(tmp, "manifest.json")
	require.NoError(t, os.WriteFile(mfile, mdata, 0o644))
	amRes = append(amRes, c.Put(t, mfile, dir+"/manifest.json", "manifest.json"))

	lrs, err := launchctx.LocalResources(amRes)
	require.NoError(t, err)
	clc := &hadooppb.ContainerLaunchContextProto{LocalResources: lrs}
	secret := fmt.Sprintf("%064x", time.Now().UnixNano())
	env := map[string]string{"HADOOP_CONF_DIR": "$PWD", contract.EnvStagingDir: c.FSURI + dir, "HADOOP_USER_NAME": user, "YARN_AM_LOG_LEVEL": "info"}
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
	require.NoError(t, c.RM.SubmitApplication(ctx, sc))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("AM logs of %s:\n%s", appID, c.AMLog(appID))
		}
		_, _ = c.RM.KillApplication(context.Background(), id, "test over")
	})
	return &App{ID: id, name: name, staging: dir, Secret: secret, CACert: caCert, Submitted: submitted}
}

// AMLog returns the AM's stderr from the NM log dirs.
func (c *Cluster) AMLog(appID string) string {
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

// WorkerLogs returns container id → stdout of every TaskExecutor container.
func (c *Cluster) WorkerLogs(appID string) map[string]string {
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

// Report is the ResourceManager's report of a, asked within 30 s.
func (c *Cluster) Report(t *testing.T, a *App) *hadooppb.ApplicationReportProto {
	r, err := c.RM.GetApplicationReport(Context(t, 30*time.Second), a.ID)
	require.NoError(t, err)
	return r
}

// Wait polls the RM until the application has ended.
func (c *Cluster) Wait(t *testing.T, a *App, d time.Duration) *hadooppb.ApplicationReportProto {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		r := c.Report(t, a)
		switch r.GetYarnApplicationState() {
		case hadooppb.YarnApplicationStateProto_FINISHED, hadooppb.YarnApplicationStateProto_FAILED, hadooppb.YarnApplicationStateProto_KILLED:
			return r
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s did not end within %v", yarnrpc.FormatApplicationID(a.ID), d)
	return nil
}

// AMStatus reads the AM's API once it is registered (nil before).
func (c *Cluster) AMStatus(t *testing.T, a *App) *contract.Status {
	r := c.Report(t, a)
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

// StagingGone says whether a's staging directory is gone from HDFS.
func (c *Cluster) StagingGone(t *testing.T, a *App) bool {
	_, err := c.FS.Stat(a.staging)
	return os.IsNotExist(err)
}
