//go:build integration

package yarnrpc_test

// Integration tests against the real mini YARN cluster (make minicluster-up; run by make test).
// With the integration build tag a missing cluster is a failure, never a skip.

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/testkit/itest"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func miniRM(t *testing.T) (*yarnrpc.Config, *yarnrpc.ApplicationClient) {
	t.Helper()
	if os.Getenv("HADOOP_CONF_DIR") == "" {
		t.Fatal("HADOOP_CONF_DIR is not set: start the mini cluster with 'make minicluster-up' and source .minicluster/env (make test does both)")
	}
	conf, err := yarnrpc.LoadConfigFromEnv()
	require.NoError(t, err)
	rm, err := yarnrpc.NewApplicationClient(conf, yarnrpc.Auth{})
	require.NoError(t, err)
	t.Cleanup(func() { rm.Close() })
	return conf, rm
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestMiniClusterMetricsAndResourceTypes(t *testing.T) {
	_, rm := miniRM(t)
	ctx := ctxT(t, 30*time.Second)
	m, err := rm.GetClusterMetrics(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 2, m.GetNumNodeManagers())
	assert.EqualValues(t, 2, m.GetNumActiveNms())

	types, err := rm.GetResourceTypeInfo(ctx)
	require.NoError(t, err)
	var names []string
	for _, ti := range types {
		names = append(names, ti.GetName())
	}
	assert.Subset(t, names, []string{"memory-mb", "vcores", "yarn.io/gpu", "yarn.io/fpga"})
}

func TestMiniClusterNodesHaveGPUs(t *testing.T) {
	_, rm := miniRM(t)
	nodes, err := rm.GetClusterNodes(ctxT(t, 30*time.Second), hadooppb.NodeStateProto_NS_RUNNING)
	require.NoError(t, err)
	require.Len(t, nodes, 2)
	hosts := map[string]bool{}
	for _, n := range nodes {
		c := yarnrpc.ResourceAmounts(n.GetCapability())
		assert.EqualValues(t, 4, c["yarn.io/gpu"], "node %s", yarnrpc.NodeAddress(n.GetNodeId()))
		assert.EqualValues(t, 2, c["yarn.io/fpga"])
		assert.EqualValues(t, 8192, c["memory-mb"])
		assert.EqualValues(t, 8, c["vcores"])
		hosts[yarnrpc.NodeAddress(n.GetNodeId())] = true
	}
	assert.Len(t, hosts, 2, "two distinct node ids")
}

func TestMiniClusterNewApplicationMaximum(t *testing.T) {
	_, rm := miniRM(t)
	resp, err := rm.GetNewApplication(ctxT(t, 30*time.Second))
	require.NoError(t, err)
	id := yarnrpc.FormatApplicationID(resp.GetApplicationId())
	assert.Regexp(t, `^application_\d+_\d{4,}$`, id)
	max := yarnrpc.ResourceAmounts(resp.GetMaximumCapability())
	assert.EqualValues(t, 4, max["yarn.io/gpu"])
	assert.EqualValues(t, 2, max["yarn.io/fpga"])
	assert.EqualValues(t, 8192, max["memory-mb"])
}

func submitTrivial(t *testing.T, rm *yarnrpc.ApplicationClient, name string, command string) *hadooppb.ApplicationIdProto {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	na, err := rm.GetNewApplication(ctx)
	require.NoError(t, err)
	sc := &hadooppb.ApplicationSubmissionContextProto{
		ApplicationId:   na.GetApplicationId(),
		ApplicationName: proto.String(name),
		Queue:           proto.String("default"),
		AmContainerSpec: &hadooppb.ContainerLaunchContextProto{Command: []string{command}},
		Resource:        &hadooppb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1)},
		MaxAppAttempts:  proto.Int32(1),
		ApplicationType: proto.String("YARN-AM-TEST"),
		ApplicationTags: []string{"yarn-am-it"},
	}
	require.NoError(t, rm.SubmitApplication(ctx, sc))
	return na.GetApplicationId()
}

func waitState(t *testing.T, rm *yarnrpc.ApplicationClient, id *hadooppb.ApplicationIdProto, within time.Duration, want ...hadooppb.YarnApplicationStateProto) *hadooppb.ApplicationReportProto {
	t.Helper()
	deadline := time.Now().Add(within)
	var last *hadooppb.ApplicationReportProto
	for time.Now().Before(deadline) {
		r, err := rm.GetApplicationReport(ctxT(t, 10*time.Second), id)
		require.NoError(t, err)
		last = r
		for _, w := range want {
			if r.GetYarnApplicationState() == w {
				return r
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("application %s did not reach %v within %s; last state %v, diagnostics %q",
		yarnrpc.FormatApplicationID(id), want, within, last.GetYarnApplicationState(), last.GetDiagnostics())
	return nil
}

func TestMiniClusterSubmitTrivialAMReachesTerminalState(t *testing.T) {
	_, rm := miniRM(t)
	id := submitTrivial(t, rm, "yarn-am-it-true", "/bin/true")
	r := waitState(t, rm, id, 2*time.Minute, hadooppb.YarnApplicationStateProto_FINISHED, hadooppb.YarnApplicationStateProto_FAILED)
	// An AM that exits without registering is a failed attempt; with one attempt the app fails.
	assert.Equal(t, hadooppb.YarnApplicationStateProto_FAILED, r.GetYarnApplicationState())
	assert.Equal(t, "yarn-am-it-true", r.GetName())
	assert.Equal(t, "YARN-AM-TEST", r.GetApplicationType())

	apps, err := rm.GetApplications(ctxT(t, 30*time.Second), &hadooppb.GetApplicationsRequestProto{ApplicationTypes: []string{"YARN-AM-TEST"}})
	require.NoError(t, err)
	found := false
	for _, a := range apps {
		found = found || proto.Equal(a.GetApplicationId(), id)
	}
	assert.True(t, found, "getApplications lists the submitted app")
}

func TestMiniClusterKill(t *testing.T) {
	_, rm := miniRM(t)
	id := submitTrivial(t, rm, "yarn-am-it-sleep", "sleep 600")
	waitState(t, rm, id, time.Minute, hadooppb.YarnApplicationStateProto_ACCEPTED, hadooppb.YarnApplicationStateProto_RUNNING)
	_, err := rm.KillApplication(ctxT(t, 30*time.Second), id, "killed by the yarn-am integration test")
	require.NoError(t, err)
	r := waitState(t, rm, id, time.Minute, hadooppb.YarnApplicationStateProto_KILLED)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_KILLED, r.GetFinalApplicationStatus())

	_, err = rm.GetApplicationReport(ctxT(t, 30*time.Second), &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1), Id: proto.Int32(99999)})
	require.Error(t, err)
	assert.True(t, errors.Is(err, yarnrpc.ErrApplicationNotFound), "typed error, got %v", err)
}

func TestStoppedRMGivesTypedErrorWithinDeadline(t *testing.T) {
	// A port where an RM was and is no more: listen, take the port, close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	conf := yarnrpc.NewConfig(map[string]string{"yarn.resourcemanager.address": addr})
	rm, err := yarnrpc.NewApplicationClient(conf, yarnrpc.Auth{})
	require.NoError(t, err)
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err = rm.GetClusterMetrics(ctx)
	require.Error(t, err)
	assert.True(t, errors.Is(err, yarnrpc.ErrConnection) || errors.Is(err, context.DeadlineExceeded), "typed error, got %v", err)
	assert.Contains(t, err.Error(), addr, "the error names the address")
	assert.Less(t, time.Since(start), 5*time.Second, "the call gives up near its deadline")
}

func TestClusterCommand(t *testing.T) {
	miniRM(t)
	out, err := exec.Command(itest.Binary(t), "cluster").CombinedOutput()
	require.NoError(t, err, string(out))
	s := string(out)
	assert.Contains(t, s, "2 NodeManagers (2 active")
	assert.Contains(t, s, "yarn.io/gpu")
	// Other tests run containers on the same cluster at the same time, so the used amounts vary: check
	// the capacities (8192 MiB, 8 vcores, 4 GPUs, 2 FPGAs) of both nodes.
	nodeLine := regexp.MustCompile(`(?m)^127\.0\.0\.[23]:\d+\s+\S+\s+RUNNING\s+\d+\s+\d+/8192\s+\d+/8\s+\d+/4\s+\d+/2\s*$`)
	assert.Len(t, nodeLine.FindAllString(s, -1), 2, "two RUNNING nodes with 4 GPUs and 2 FPGAs each:\n%s", s)
}

// The real RM's refusal of an over-maximum ask (here the AM's own, which submitApplication validates
// as the scheduler validates a TaskExecutor's): ResourceRejection reads the type and the maximum that
// getNewApplication reports, from Hadoop's own message text.
func TestMiniClusterRefusalNamesTypeAndMaximum(t *testing.T) {
	_, rm := miniRM(t)
	for _, c := range []struct {
		typ string
		res *hadooppb.ResourceProto
	}{
		{"yarn.io/gpu", &hadooppb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1),
			ResourceValueMap: []*hadooppb.ResourceInformationProto{{Key: proto.String("yarn.io/gpu"), Value: proto.Int64(9),
				Units: proto.String(""), Type: hadooppb.ResourceTypesProto_COUNTABLE.Enum()}}}},
		{"memory-mb", &hadooppb.ResourceProto{Memory: proto.Int64(1 << 20), VirtualCores: proto.Int32(1)}},
	} {
		t.Run(c.typ, func(t *testing.T) {
			ctx := ctxT(t, 30*time.Second)
			na, err := rm.GetNewApplication(ctx)
			require.NoError(t, err)
			max := yarnrpc.ResourceAmounts(na.GetMaximumCapability())
			err = rm.SubmitApplication(ctx, &hadooppb.ApplicationSubmissionContextProto{
				ApplicationId:   na.GetApplicationId(),
				ApplicationName: proto.String("yarn-am-it-over-max"),
				Queue:           proto.String("default"),
				AmContainerSpec: &hadooppb.ContainerLaunchContextProto{Command: []string{"/bin/true"}},
				Resource:        c.res,
				MaxAppAttempts:  proto.Int32(1),
				ApplicationType: proto.String("YARN-AM-TEST"),
			})
			require.Error(t, err)
			require.ErrorIs(t, err, yarnrpc.ErrInvalidResourceRequest)
			r, ok := yarnrpc.RejectedResource(err)
			require.True(t, ok, "no type in %q", err)
			assert.Equal(t, c.typ, r.Type)
			got, ok := r.MaximumOfType()
			require.True(t, ok, "no maximum in %q", err)
			assert.Equal(t, max[c.typ], got, "the message's maximum is getNewApplication's: %q", err)
			t.Logf("%v", err)
		})
	}
}
