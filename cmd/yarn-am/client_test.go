package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// fakeRM is the RM's client port of the tests' fake cluster (testkit/fakecluster) with 2 nodes of
// 8 GiB, 8 vcores, 4 GPUs.
type fakeRM struct {
	*fakecluster.Cluster
	srv *rpctest.Server
}

func newFakeRM(t *testing.T) *fakeRM {
	t.Helper()
	c := fakecluster.InProcess()
	c.NewAppMax = fakecluster.Resource(8192, 8, 4)
	for i, h := range []string{"127.0.0.2", "127.0.0.3"} {
		c.NodeReports = append(c.NodeReports, &hadooppb.NodeReportProto{
			NodeId:     &hadooppb.NodeIdProto{Host: proto.String(h), Port: proto.Int32(int32(40000 + i))},
			Capability: fakecluster.Resource(8192, 8, 4),
		})
	}
	f := &fakeRM{Cluster: c, srv: c.ClientPort(t)}
	srv := f.srv

	dir := t.TempDir()
	site := fmt.Sprintf(`<configuration>
<property><name>yarn.resourcemanager.address</name><value>%s</value></property>
<property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:1</value></property>
</configuration>`, srv.Addr())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte(site), 0o644))
	t.Setenv("HADOOP_CONF_DIR", dir)
	t.Setenv("YARN_CONF_DIR", "")
	t.Setenv("HADOOP_USER_NAME", "alice")
	return f
}

func report(state hadooppb.YarnApplicationStateProto, final hadooppb.FinalApplicationStatusProto, amURL, diag string) *hadooppb.ApplicationReportProto {
	r := &hadooppb.ApplicationReportProto{
		ApplicationId:          &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1700000000000), Id: proto.Int32(1)},
		User:                   proto.String("alice"),
		Queue:                  proto.String("default"),
		Name:                   proto.String("demo"),
		YarnApplicationState:   state.Enum(),
		FinalApplicationStatus: final.Enum(),
		ApplicationType:        proto.String("YARN-AM"),
		Diagnostics:            proto.String(diag),
		TrackingUrl:            proto.String("http://rm:8088/proxy/application_1700000000000_0001/"),
	}
	if amURL != "" {
		r.OriginalTrackingUrl = proto.String(amURL)
	}
	return r
}

func writeTestJob(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

const gpuJob = `name = "unit"
"external-resources" = "gpu"
"external-resource.gpu.amount" = 1
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
[am]
memory = 256
[taskexecutor]
instances = 2
command = "./worker"
memory = 512
vcores = 2
`

func runCmd(args ...string) (string, string, int) {
	var out, errb lockedBuffer // a cluster call's progress line comes from another goroutine
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestCheckOK(t *testing.T) {
	newFakeRM(t)
	out, errs, code := runCmd("check", writeTestJob(t, gpuJob))
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "OK: job unit fits the cluster: 2 TaskExecutor(s) of memory-mb=512, vcores=2, yarn.io/gpu=1; ApplicationMaster memory-mb=256, vcores=1; 2 running NodeManagers\n", out)
}

func TestCheckReportsEveryProblemNamingTheKey(t *testing.T) {
	newFakeRM(t)
	job := writeTestJob(t, strings.Replace(gpuJob, "memory = 256", "memory = \"16g\"", 1))
	out, errs, code := runCmd("check", job, "-D", "external-resource.gpu.amount=5")
	assert.Equal(t, contract.ExitRejected, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "external-resource.gpu.amount = 5 (yarn.io/gpu) is more than the cluster's maximum allocation of 4 yarn.io/gpu")
	assert.Contains(t, errs, "ApplicationMaster (am.memory, am.vcores): memory 16384 MB is more than the cluster's maximum allocation of 8192 MB")

	// -Dkey=value and flags after the job file work too.
	_, errs, code = runCmd("check", writeTestJob(t, gpuJob), "-Dexternal-resource.gpu.amount=9")
	assert.Equal(t, contract.ExitRejected, code)
	assert.Contains(t, errs, "external-resource.gpu.amount = 9")
}

func TestCheckUnknownQueue(t *testing.T) {
	newFakeRM(t)
	_, errs, code := runCmd("check", writeTestJob(t, "queue = \"nosuch\"\n"+gpuJob))
	assert.Equal(t, contract.ExitRejected, code)
	assert.Contains(t, errs, `queue = "nosuch": the ResourceManager has no such queue`)
}

func TestClientNeedsYarnSite(t *testing.T) {
	t.Setenv("HADOOP_CONF_DIR", t.TempDir())
	_, errs, code := runCmd("check", writeTestJob(t, gpuJob))
	assert.Equal(t, contract.ExitInvalidInput, code)
	assert.Contains(t, errs, "has no yarn-site.xml")
}

func TestCheckJobErrorsBeforeAskingTheCluster(t *testing.T) {
	f := newFakeRM(t)
	_, errs, code := runCmd("check", writeTestJob(t, "[taskexecutor]\ninstances = -1\n"))
	assert.Equal(t, contract.ExitInvalidInput, code)
	assert.Contains(t, errs, "taskexecutor.command is missing")
	assert.Contains(t, errs, "taskexecutor.instances = -1")
	assert.Zero(t, f.srv.Calls("getNewApplication"), "a broken job file does not reach the RM")
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"check"}, {"submit"}, {"status"}, {"kill"}, {"status", "not-an-id"}, {"list", "extra"}, {"check", "--bogus", "x"}} {
		_, errs, code := runCmd(args...)
		assert.Equal(t, 2, code, "%v: %s", args, errs)
		assert.NotEmpty(t, errs)
	}
	for _, c := range []string{"check", "submit", "status", "kill", "list"} {
		out, _, code := runCmd(c, "-h")
		assert.Equal(t, 0, code)
		assert.True(t, strings.HasPrefix(out, "Usage: yarn-am "+c), out)
	}
}

func TestSubmitPreflightFailsFastWithoutStaging(t *testing.T) {
	f := newFakeRM(t)
	start := time.Now()
	out, errs, code := runCmd("submit", writeTestJob(t, gpuJob), "-D", "external-resource.gpu.amount=5", "--detach")
	assert.Equal(t, contract.ExitRejected, code)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Contains(t, errs, "external-resource.gpu.amount = 5")
	assert.NotContains(t, out, "staging")
	assert.Zero(t, f.srv.Calls("submitApplication"))
}

// A bad taskexecutor.idle-gpu-release is refused by submit before any network use: the key, the
// value and what is valid, exit 3, nothing staged or submitted (docs/gpus.md#idle-gpus-given-back).
func TestSubmitRefusesABadIdleGPUReleaseBeforeStaging(t *testing.T) {
	f := newFakeRM(t)
	out, errs, code := runCmd("submit", writeTestJob(t, gpuJob+"idle-gpu-release = \"5 minutes\"\n"), "--detach")
	assert.Equal(t, contract.ExitInvalidInput, code, errs)
	assert.Contains(t, errs, `taskexecutor.idle-gpu-release = "5 minutes": not a duration; use a number with a unit, e.g. "30m" or "1h", or "off"`)
	assert.NotContains(t, out, "staging")
	assert.Zero(t, f.srv.Calls("submitApplication"))
}

// fakeAM serves /api/v1/status with the given document.
func fakeAM(t *testing.T, doc *string, mu *sync.Mutex) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/status" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, *doc)
	}))
	t.Cleanup(s.Close)
	return s
}

const amDoc = `{"app":"application_1700000000000_0001","state":"RUNNING","requirement":{"instances":2},
 "counts":{"requested":2,"allocated":2,"running":2,"completed":0,"failed":0},
 "containers":[
  {"id":"container_1700000000000_0001_01_000002","node":"127.0.0.2:40000","state":"RUNNING","resources":{"memory-mb":512,"vcores":2,"yarn.io/gpu":1},"infos":{"gpu":[{"index":"3"}]}},
  {"id":"container_1700000000000_0001_01_000003","node":"127.0.0.3:40001","state":"RUNNING","resources":{"memory-mb":512,"vcores":2,"yarn.io/gpu":1},"infos":{"gpu":[{"index":"0"}]}}
 ]}`

func TestStatusShowsTheAMsContainersAndGPUs(t *testing.T) {
	f := newFakeRM(t)
	var mu sync.Mutex
	doc := amDoc
	am := fakeAM(t, &doc, &mu)
	f.Reports = []*hadooppb.ApplicationReportProto{report(hadooppb.YarnApplicationStateProto_RUNNING, hadooppb.FinalApplicationStatusProto_APP_UNDEFINED, am.URL+"/", "")}

	out, errs, code := runCmd("status", "application_1700000000000_0001")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "State:        RUNNING, final status UNDEFINED")
	assert.Contains(t, out, "Containers:   requested 2, allocated 2, running 2, completed 0, failed 0")
	assert.Regexp(t, `container_1700000000000_0001_01_000002\s+127.0.0.2:40000\s+RUNNING\s+memory-mb=512,vcores=2,yarn.io/gpu=1\s+gpu=3`, out)
	assert.Regexp(t, `container_1700000000000_0001_01_000003\s+127.0.0.3:40001\s+RUNNING\s+\S+\s+gpu=0`, out)

	out, errs, code = runCmd("status", "application_1700000000000_0001", "--json")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"state": "RUNNING"`)
	assert.Contains(t, out, `"index": "3"`)
	assert.Contains(t, out, `"amUrl": "`+am.URL+`/"`)
}

func TestStatusUnknownApplication(t *testing.T) {
	newFakeRM(t)
	_, errs, code := runCmd("status", "application_1700000000000_0042")
	assert.Equal(t, contract.ExitRejected, code)
	assert.Contains(t, errs, "does not know application_1700000000000_0042")
}

func TestFollowPrintsOnlyChangesAndExitsByFinalStatus(t *testing.T) {
	f := newFakeRM(t)
	var mu sync.Mutex
	doc := amDoc
	am := fakeAM(t, &doc, &mu)
	running := report(hadooppb.YarnApplicationStateProto_RUNNING, hadooppb.FinalApplicationStatusProto_APP_UNDEFINED, am.URL+"/", "")
	f.Reports = []*hadooppb.ApplicationReportProto{
		report(hadooppb.YarnApplicationStateProto_ACCEPTED, hadooppb.FinalApplicationStatusProto_APP_UNDEFINED, "", ""),
		running, running, running,
		report(hadooppb.YarnApplicationStateProto_FINISHED, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, "", "done"),
	}
	_, rm, err := client.Connect(client.LoginOptions{}, os.Stderr)
	require.NoError(t, err)
	defer rm.Close()
	var out bytes.Buffer
	res := client.Follow(context.Background(), rm, f.Reports[0].GetApplicationId(), nil, &out)
	require.NoError(t, res.Err)
	assert.True(t, res.Succeeded())
	assert.Equal(t, "application_1700000000000_0001: final status SUCCEEDED", res.Outcome())
	text := out.String()
	assert.Equal(t, 1, strings.Count(text, "application_1700000000000_0001 RUNNING\n"), "state changes are printed once:\n%s", text)
	assert.Equal(t, 1, strings.Count(text, "containers: requested 2, allocated 2, running 2, completed 0, failed 0"), "unchanged counts are printed once:\n%s", text)
	assert.Contains(t, text, "container container_1700000000000_0001_01_000002 on 127.0.0.2:40000 RUNNING gpu=3")

	// A failed application: exit 1 with the diagnostics.
	f.Mu.Lock()
	f.ReportCalls = 0
	f.Reports = []*hadooppb.ApplicationReportProto{report(hadooppb.YarnApplicationStateProto_FINISHED, hadooppb.FinalApplicationStatusProto_APP_FAILED, "", "TaskExecutor failure limit reached: exit code 3")}
	f.Mu.Unlock()
	out.Reset()
	res = client.Follow(context.Background(), rm, f.Reports[0].GetApplicationId(), nil, &out)
	require.NoError(t, res.Err)
	assert.False(t, res.Succeeded())
	assert.Contains(t, res.Outcome(), "ended FINISHED with final status FAILED: TaskExecutor failure limit reached: exit code 3")
}

func TestListFiltersByTypeAndState(t *testing.T) {
	f := newFakeRM(t)
	f.ListResp = []*hadooppb.ApplicationReportProto{report(hadooppb.YarnApplicationStateProto_RUNNING, hadooppb.FinalApplicationStatusProto_APP_UNDEFINED, "", "")}
	out, errs, code := runCmd("list")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `application_1700000000000_0001\s+demo\s+alice\s+default\s+RUNNING\s+UNDEFINED`, out)
	assert.Equal(t, []string{"YARN-AM"}, f.ListReq.GetApplicationTypes())
	assert.NotContains(t, f.ListReq.GetApplicationStates(), hadooppb.YarnApplicationStateProto_FINISHED)
	assert.Contains(t, f.ListReq.GetApplicationStates(), hadooppb.YarnApplicationStateProto_RUNNING)

	out, errs, code = runCmd("list", "--all", "--json")
	require.Equal(t, 0, code, errs)
	assert.Empty(t, f.ListReq.GetApplicationStates(), "--all asks for every state")
	assert.Contains(t, out, `"id": "application_1700000000000_0001"`)
}

// TestPreflightFailureReservesNoApplicationID: a job the cluster cannot run for reasons that need no
// maximum allocation (a resource type it does not know, a queue it does not have) fails before
// getNewApplication, which would reserve an application id for nothing.
func TestPreflightFailureReservesNoApplicationID(t *testing.T) {
	f := newFakeRM(t)
	fpga := strings.Replace(gpuJob, "yarn.io/gpu", "yarn.io/fpga", 1)
	for _, cmd := range []string{"check", "submit"} {
		_, errs, code := runCmd(cmd, writeTestJob(t, fpga))
		assert.Equal(t, contract.ExitRejected, code, cmd)
		assert.Contains(t, errs, "does not know the resource type yarn.io/fpga", cmd)
		_, errs, code = runCmd(cmd, writeTestJob(t, gpuJob), "--queue", "nosuch")
		assert.Equal(t, contract.ExitRejected, code, cmd)
		assert.Contains(t, errs, `queue = "nosuch"`, cmd)
	}
	assert.Zero(t, f.srv.Calls("getNewApplication"))
	_, errs, code := runCmd("check", writeTestJob(t, gpuJob))
	require.Equal(t, 0, code, errs)
	assert.Equal(t, 1, f.srv.Calls("getNewApplication"), "a job that passed is checked against the maximum allocation")
}
