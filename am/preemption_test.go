package am

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// runningAM starts m's loop on f until the test ends and waits for n running TaskExecutors.
func runningAM(t *testing.T, m *am, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _, _ = m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool { return m.Status().Counts.Running == n }, 10*time.Second, time.Millisecond)
}

func warnings(m *am) map[string]contract.Event {
	out := map[string]contract.Event{}
	for _, e := range m.events.Latest(500) {
		if e.Type == contract.EventPreemptionWarning {
			if _, dup := out[e.Container]; dup {
				out[e.Container+" again"] = e
			}
			out[e.Container] = e
		}
	}
	return out
}

// poll is the launcher's long poll: GET .../notices with the secret and maxWait.
func poll(t *testing.T, url, id, wait string) (int, *contract.PreemptionNotice) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/api/v1/containers/"+id+contract.NoticesPath+"?"+contract.NoticeWaitParam+"="+wait, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	var n contract.PreemptionNotice
	require.NoError(t, json.Unmarshal(body, &n), string(body))
	return resp.StatusCode, &n
}

// TestPreemptionWarningReachesTheLongPoll: a long poll waiting for a running container's notice is
// answered in the heartbeat where the RM first names the container, with the deadline the AM knows;
// the warning is given once however often the RM repeats it, and only the named container is warned.
func TestPreemptionWarningReachesTheLongPoll(t *testing.T) {
	f := newFakeCluster(t)
	f.KeepRunning = true
	m, _ := f.newAM(t, gpuSpec(2, 0))
	m.cfg.PreemptionWait = 7 * time.Second
	runningAM(t, m, 2)
	srv := httptest.NewServer(m.Handler("s3cret"))
	defer srv.Close()
	f.Mu.Lock()
	named, other := f.Started[0], f.Started[1]
	f.Mu.Unlock()

	type answer struct {
		code int
		n    *contract.PreemptionNotice
	}
	got := make(chan answer, 1)
	go func() { c, n := poll(t, srv.URL, named, "20s"); got <- answer{c, n} }()
	heartbeats(t, f, 3) // the poll waits through heartbeats that name nothing
	select {
	case a := <-got:
		t.Fatalf("the long poll returned %d before any warning", a.code)
	default:
	}
	f.Mu.Lock()
	f.PreemptNegotiable = []string{named} // the negotiable contract counts as a warning too
	f.Mu.Unlock()
	var a answer
	select {
	case a = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll was not answered after the warning")
	}
	require.Equal(t, http.StatusOK, a.code)
	assert.Equal(t, named, a.n.Container)
	assert.Equal(t, []string{named}, a.n.Containers)
	assert.Equal(t, 7*time.Second, a.n.Deadline.Sub(a.n.WarnedAt), "deadline = warning + the configured wait")
	assert.Nil(t, a.n.Round, "not a gang")

	heartbeats(t, f, 5) // the RM repeats the message every heartbeat
	w := warnings(m)
	require.Contains(t, w, named)
	assert.NotContains(t, w, named+" again", "one warning per container")
	assert.NotContains(t, w, other, "the container the RM did not name is not warned")
	assert.WithinDuration(t, a.n.Deadline, w[named].Deadline, 0)
	assert.Equal(t, contract.SeverityWarning, w[named].Severity)

	code, _ := poll(t, srv.URL, other, "0s")
	assert.Equal(t, http.StatusNoContent, code, "no notice for the other container")
	code, again := poll(t, srv.URL, named, "0s")
	require.Equal(t, http.StatusOK, code, "a notice stays: a launcher that polls again gets it at once")
	assert.WithinDuration(t, a.n.Deadline, again.Deadline, 0)
	for _, c := range m.Status().Containers {
		if c.ID == named {
			assert.WithinDuration(t, a.n.Deadline, c.PreemptionDeadline, 0)
		} else {
			assert.True(t, c.PreemptionDeadline.IsZero(), c.ID)
		}
	}
}

// TestPreemptionOfAGangRankRestartsTheRound: the RM names one rank of a gang; every rank of the
// round is warned at once (they checkpoint together), the kill (exit -102) restarts the gang as a
// new round whose ranks carry no notice, and nothing counts as a failure.
func TestPreemptionOfAGangRankRestartsTheRound(t *testing.T) {
	f := newFakeCluster(t)
	f.KeepRunning = true
	m, _ := f.newAM(t, gangSpec(3))
	m.cfg.Spec.MaxFailures = 0
	runningAM(t, m, 3)
	f.Mu.Lock()
	round0 := append([]string{}, f.Started...)
	f.Preempt = []string{round0[1]}
	f.Mu.Unlock()
	require.Eventually(t, func() bool { return len(warnings(m)) == 3 }, 10*time.Second, time.Millisecond)
	heartbeats(t, f, 3)
	w := warnings(m)
	require.Len(t, w, 3, "each rank warned once: %v", w)
	assert.Equal(t, "the ResourceManager named it", w[round0[1]].Reason)
	assert.Contains(t, w[round0[0]].Reason, "a rank of its gang round 0 was named")
	assert.WithinDuration(t, w[round0[0]].Deadline, w[round0[1]].Deadline, 0, "one deadline for the round")
	srv := httptest.NewServer(m.Handler("s3cret"))
	defer srv.Close()
	code, n := poll(t, srv.URL, round0[2], "0s")
	require.Equal(t, http.StatusOK, code)
	require.NotNil(t, n.Round)
	assert.Equal(t, 0, *n.Round)
	assert.Equal(t, []string{round0[1]}, n.Containers, "the notice names the container the RM named")
	assert.Equal(t, contract.DefaultPreemptionWait, n.Deadline.Sub(n.WarnedAt), "no configured wait: the scheduler's default")

	// The kill: the RM stops naming it and reports it preempted.
	cid, err := yarnrpc.ParseContainerID(round0[1])
	require.NoError(t, err)
	f.Mu.Lock()
	f.Preempt = nil
	f.Complete = []*hadooppb.ContainerStatusProto{{ContainerId: cid, State: hadooppb.ContainerStateProto_C_COMPLETE.Enum(),
		ExitStatus: proto.Int32(contract.ExitStatusPreempted), Diagnostics: proto.String("Container preempted by scheduler")}}
	f.Mu.Unlock()
	require.Eventually(t, func() bool { return f.StartedCount() == 6 }, 10*time.Second, time.Millisecond, "a new round of three starts")
	require.Eventually(t, func() bool { return m.Status().Counts.Running == 3 }, 10*time.Second, time.Millisecond)
	var restarted []contract.Event
	for _, e := range m.events.Latest(500) {
		if e.Type == contract.EventGangRestarted {
			restarted = append(restarted, e)
		}
	}
	require.Len(t, restarted, 1)
	assert.Contains(t, restarted[0].Message, "round 1")
	assert.Zero(t, m.Status().Counts.Failed, "a preempted gang is no failure (max-failures = 0 still running)")
	f.Mu.Lock()
	round1 := append([]string{}, f.Started[3:]...)
	f.Mu.Unlock()
	for _, id := range round1 {
		code, _ := poll(t, srv.URL, id, "0s")
		assert.Equal(t, http.StatusNoContent, code, "round 1's rank %s is not warned", id)
	}
	assert.Len(t, warnings(m), 3, "no new warnings")
}

// TestPreemptionNoticesEndpointRefusesWhatItMust: the long poll takes the secret, bounds its wait and
// knows only this application's containers.
func TestPreemptionNoticesEndpointRefusesWhatItMust(t *testing.T) {
	f := newFakeCluster(t)
	m, _ := f.newAM(t, gpuSpec(1, 0))
	srv := httptest.NewServer(m.Handler("s3cret"))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/containers/container_1_0001_01_000002" + contract.NoticesPath)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no secret")
	code, _ := poll(t, srv.URL, "container_1_0001_01_000002", "1s")
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = poll(t, srv.URL, "container_1_0001_01_000002", "soon")
	assert.Equal(t, http.StatusBadRequest, code)
	plain := httptest.NewServer(web.Handler(m.Web(), web.Options{Secret: "s3cret"}))
	defer plain.Close()
	code, _ = poll(t, plain.URL, "container_1_0001_01_000002", "1s")
	assert.Equal(t, http.StatusForbidden, code, "never over the plain listener")
}

// TestPreemptedIDsReadsBothContracts: both contracts count, each container once.
func TestPreemptedIDsReadsBothContracts(t *testing.T) {
	id := func(n int64) *hadooppb.PreemptionContainerProto {
		return &hadooppb.PreemptionContainerProto{Id: &hadooppb.ContainerIdProto{Id: proto.Int64(n),
			AppId:        &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1), Id: proto.Int32(1)},
			AppAttemptId: &hadooppb.ApplicationAttemptIdProto{ApplicationId: &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1), Id: proto.Int32(1)}, AttemptId: proto.Int32(1)}}}
	}
	msg := &hadooppb.PreemptionMessageProto{StrictContract: &hadooppb.StrictPreemptionContractProto{Container: []*hadooppb.PreemptionContainerProto{id(2), id(3)}},
		Contract: &hadooppb.PreemptionContractProto{Container: []*hadooppb.PreemptionContainerProto{id(3), id(4), {}}}}
	got := preemptedIDs(msg)
	require.Len(t, got, 3)
	assert.Equal(t, yarnrpc.FormatContainerID(id(4).GetId()), got[2])
	assert.Empty(t, preemptedIDs(&hadooppb.PreemptionMessageProto{}))
}

// TestPreemptionWaitFromTheSiteFiles: the AM's deadline uses the RM's key from its site files, in
// milliseconds; a missing or unusable value gives the scheduler's default.
func TestPreemptionWaitFromTheSiteFiles(t *testing.T) {
	assert.Equal(t, 10*time.Second, preemptionWait(yarnrpc.NewConfig(map[string]string{contract.PreemptionWaitKey: "10000"}), quietLog))
	assert.Equal(t, contract.DefaultPreemptionWait, preemptionWait(yarnrpc.NewConfig(nil), quietLog))
	assert.Equal(t, contract.DefaultPreemptionWait, preemptionWait(yarnrpc.NewConfig(map[string]string{contract.PreemptionWaitKey: "ten"}), quietLog))
	assert.Equal(t, contract.DefaultPreemptionWait, preemptionWait(yarnrpc.NewConfig(map[string]string{contract.PreemptionWaitKey: "-5"}), quietLog))
}
