package am

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	browser "github.com/yarn-am/yarn-am/testkit/chromium"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// The web UI's timeline needs when each container was asked for, allocated, started and ended; a
// container whose start the NodeManager refused has no start time but an end.
func TestStatusCarriesTimelineTimes(t *testing.T) {
	f := newFakeCluster(t)
	f.RefuseStarts = 1
	m, _ := f.newAM(t, gpuSpec(3, 3))
	m.cfg.ExternalResources = map[string]string{"gpu": "yarn.io/gpu"}
	out := run(t, m)
	require.Equal(t, contract.Succeeded, out.Status)
	s := m.Status()
	assert.Equal(t, map[string]string{"gpu": "yarn.io/gpu"}, s.Requirement.ExternalResources)
	require.False(t, s.Started.IsZero())
	require.False(t, s.Now.Before(s.Started))
	require.Len(t, s.Containers, 4, "3 succeeded + 1 refused by the NM")
	refused := 0
	for _, c := range s.Containers {
		for name, ts := range map[string]time.Time{"requestedAt": c.RequestedAt, "allocatedAt": c.AllocatedAt, "finishedAt": c.FinishedAt} {
			require.False(t, ts.IsZero(), "%s of %s", name, c.ID)
			assert.False(t, ts.Before(s.Started) || ts.After(s.Now), "%s of %s (%v) is outside the AM's run %v..%v", name, c.ID, ts, s.Started, s.Now)
		}
		assert.False(t, c.AllocatedAt.Before(c.RequestedAt), "%s allocated before it was asked for", c.ID)
		if c.ExitClass == contract.ExitLaunchFailed {
			refused++
			assert.True(t, c.LaunchedAt.IsZero(), "%s never started", c.ID)
			assert.False(t, c.FinishedAt.Before(c.AllocatedAt))
			continue
		}
		require.False(t, c.LaunchedAt.IsZero(), "launchedAt of %s", c.ID)
		assert.False(t, c.LaunchedAt.Before(c.AllocatedAt), "%s started before it was allocated", c.ID)
		assert.False(t, c.FinishedAt.Before(c.LaunchedAt), "%s ended before it started", c.ID)
	}
	assert.Equal(t, 1, refused)
	assert.Empty(t, s.Asks, "nothing pending once the application is done")

	// The JSON document carries them under the names the page reads; unset times are left out.
	b, err := json.Marshal(s)
	require.NoError(t, err)
	for _, k := range []string{`"requestedAt":`, `"allocatedAt":`, `"launchedAt":`, `"finishedAt":`, `"now":`, `"started":`, `"externalResources":{"gpu":"yarn.io/gpu"}`} {
		assert.Contains(t, string(b), k)
	}
	assert.NotContains(t, string(b), `"0001-01-01T00:00:00Z"`, "zero times are omitted, not sent as year 1")
}

// Asks the RM has not satisfied yet are listed with how many containers they still want and since
// when: the timeline's pending bars.
func TestStatusListsPendingAsks(t *testing.T) {
	f := newFakeCluster(t)
	f.MaxAllocations = 1
	f.ExitCode = func(int) int32 { return 0 }
	m, _ := f.newAM(t, decision.Spec{Instances: 3, MaxFailures: 3, Mode: decision.Service, Capability: contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 1}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _, _ = m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	var s contract.Status
	require.Eventually(t, func() bool {
		s = m.Status()
		return len(s.Asks) > 0 && s.Counts.Running+s.Counts.Completed >= 1
	}, 10*time.Second, 10*time.Millisecond, "one container allocated, the rest pending")
	pending := 0
	for _, a := range s.Asks {
		pending += a.Pending
		assert.Positive(t, a.ID)
		assert.False(t, a.Since.IsZero(), "ask %d: since when", a.ID)
		assert.False(t, a.Since.After(s.Now))
	}
	assert.Equal(t, s.Counts.Requested, pending, "asks add up to the requested count")
	assert.Positive(t, pending)
}

// fakeNodes is a clusterNodes that counts its calls.
type fakeNodes struct {
	mu    sync.Mutex
	calls int
	err   error
	gpus  int64
}

func (f *fakeNodes) GetClusterNodes(context.Context, ...hadooppb.NodeStateProto) ([]*hadooppb.NodeReportProto, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	node := func(host string, state hadooppb.NodeStateProto, used int64) *hadooppb.NodeReportProto {
		return &hadooppb.NodeReportProto{NodeId: &hadooppb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(8041)}, NodeState: state.Enum(),
			Capability: resourceProto(contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": f.gpus, "yarn.io/fpga": 2}),
			Used:       resourceProto(contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": used})}
	}
	cpuOnly := node("nm-d", hadooppb.NodeStateProto_NS_RUNNING, 0)
	cpuOnly.Capability = resourceProto(contract.Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/fpga": 2})
	return []*hadooppb.NodeReportProto{node("nm-b", hadooppb.NodeStateProto_NS_RUNNING, 1), node("nm-a", hadooppb.NodeStateProto_NS_RUNNING, 0),
		node("nm-c", hadooppb.NodeStateProto_NS_UNHEALTHY, 0), cpuOnly}, nil
}

func (f *fakeNodes) count() int { f.mu.Lock(); defer f.mu.Unlock(); return f.calls }

// The node listing behind the GPU map costs an RM call that grows with the cluster: the AM makes it
// only while the status is being read, and at most every book.NodesRefresh; a failed listing keeps the
// last one. The test plays the node refresher's part itself (refreshIfDue on each want), so what did
// not happen is known to have not happened, not merely not yet.
func TestNodeViewRefreshesOnlyWhileRead(t *testing.T) {
	f := newFakeCluster(t)
	m, _ := f.newAM(t, gpuSpec(1, 1))
	nodes := &fakeNodes{gpus: 4}
	var clockMu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m.nodes.cluster = nodes
	m.cfg.Now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	m.nodes.now = m.cfg.Now
	advance := func(d time.Duration) { clockMu.Lock(); now = now.Add(d); clockMu.Unlock() }
	ctx := context.Background()
	srv := httptest.NewServer(m.Handler("s3cret"))
	defer srv.Close()
	read := func(path string) {
		resp, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// refresh is one turn of the node refresher: whether a read wanted the nodes, and whether they
	// were listed.
	refresh := func() (wanted, listed bool) {
		select {
		case <-m.nodes.want:
			return true, m.nodes.refreshIfDue(ctx)
		default:
			return false, false
		}
	}

	read("/api/v1/containers")
	read("/metrics")
	wanted, _ := refresh()
	assert.False(t, wanted, "nobody read the status: no node listing wanted")
	assert.Equal(t, 0, nodes.count())
	assert.Empty(t, m.Status().Nodes)

	read("/api/v1/status")
	wanted, listed := refresh()
	require.True(t, wanted && listed)
	s := m.Status()
	assert.Equal(t, []contract.NodeStatus{
		{Node: "nm-a:8041", Capability: contract.Capability{"yarn.io/gpu": 4}, Used: contract.Capability{"yarn.io/gpu": 0}},
		{Node: "nm-b:8041", Capability: contract.Capability{"yarn.io/gpu": 4}, Used: contract.Capability{"yarn.io/gpu": 1}},
	}, s.Nodes, "running nodes with GPUs only, sorted, the job's device types only (no memory, no yarn.io/fpga)")
	assert.Equal(t, now, s.NodesAt)

	for i := 0; i < 5; i++ {
		read("/api/v1/status")
		_, listed = refresh()
		assert.False(t, listed)
	}
	advance(book.NodesRefresh - time.Second)
	read("/api/v1/status")
	wanted, listed = refresh()
	assert.True(t, wanted)
	assert.False(t, listed, "read again within %v: no second listing", book.NodesRefresh)
	assert.Equal(t, 1, nodes.count())

	advance(time.Second)
	nodes.mu.Lock()
	nodes.gpus = 8
	nodes.mu.Unlock()
	read("/api/v1/status")
	_, listed = refresh()
	require.True(t, listed)
	s = m.Status()
	require.Len(t, s.Nodes, 2)
	assert.Equal(t, int64(8), s.Nodes[0].Capability["yarn.io/gpu"])
	assert.Equal(t, 2, nodes.count())
	listedAt := s.NodesAt

	nodes.mu.Lock()
	nodes.err = errors.New("connection refused")
	nodes.mu.Unlock()
	advance(book.NodesRefresh)
	read("/api/v1/status")
	_, listed = refresh()
	require.True(t, listed)
	assert.Equal(t, 3, nodes.count())
	s = m.Status()
	assert.Len(t, s.Nodes, 2, "a failed listing keeps the last one")
	assert.Equal(t, listedAt, s.NodesAt, "and says how old it is")
}

// The node refresher Run starts lists the nodes when a read of the status wants them.
func TestNodeRefresherListsWhenWanted(t *testing.T) {
	f := newFakeCluster(t)
	m, _ := f.newAM(t, gpuSpec(1, 1))
	nodes := &fakeNodes{gpus: 4}
	m.nodes.cluster = nodes
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.nodes.refresher(ctx) }()
	defer func() { cancel(); <-done }()
	m.nodes.wanted()
	require.Eventually(t, func() bool { return len(m.Status().Nodes) == 2 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, 1, nodes.count())
}

// A job that asks for no device has no map: the AM never lists the nodes for it.
func TestNodeViewNotListedWithoutDevices(t *testing.T) {
	f := newFakeCluster(t)
	m, _ := f.newAM(t, decision.Spec{Instances: 1, MaxFailures: 1, Capability: contract.Capability{"memory-mb": 512, "vcores": 1}})
	nodes := &fakeNodes{gpus: 4}
	m.nodes.cluster = nodes
	srv := httptest.NewServer(m.Handler("s3cret"))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/api/v1/status")
	require.NoError(t, err)
	resp.Body.Close()
	// The handler returned: a want would be queued for the node refresher by now.
	assert.Empty(t, m.nodes.want, "the status read wants no node listing")
	assert.Equal(t, 0, nodes.count())
	assert.Empty(t, m.Status().Nodes)
}

// uiChromium is the headless Chromium the page tests run in (testdata/ui/install-chromium.sh; make
// test installs it): missing, the test fails under CI and is skipped elsewhere.
func uiChromium(t *testing.T) string {
	t.Helper()
	if p := browser.Path(); p != "" {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: run testdata/ui/install-chromium.sh (make test does)")
	}
	t.Skip("chromium is not installed: run testdata/ui/install-chromium.sh")
	return ""
}

// renderedPage is the page's DOM once its script drew st, as headless Chromium has it.
func renderedPage(t *testing.T, chromium string, st contract.Status) string {
	t.Helper()
	b, ctx := pageInChromium(t, chromium, st, 1280, 800)
	dom, err := b.DOM(ctx)
	require.NoError(t, err)
	require.Contains(t, dom, st.App, "the page rendered the status")
	return dom
}

// PageDrawn is the web UI's own mark that it drew a status: the time of its last good poll in
// #updated (app.js poll), "never" or "failed: ..." before. The UI tests wait on it, not on time.
const PageDrawn = `/^\d{4}-\d\d-\d\d \d/.test(document.getElementById("updated").textContent)`

// pageInChromium serves the page and st as the AM would (until the test ends), loads it in headless
// Chromium of a width×height window and returns once the page drew st (PageDrawn), with a context
// that bounds what the test does with the browser (90 s, a guard against a hang).
func pageInChromium(t *testing.T, chromium string, st contract.Status, width, height int) (*browser.Browser, context.Context) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /", web.UIHandler())
	mux.HandleFunc("GET /api/v1/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
	mux.HandleFunc("GET /api/v1/events", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("[]")) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	b, err := browser.Start(ctx, chromium, t.TempDir(), width, height)
	require.NoError(t, err)
	t.Cleanup(b.Close)
	require.NoError(t, b.Navigate(ctx, srv.URL+"/"))
	require.NoError(t, b.WaitFor(ctx, PageDrawn), "the page drew the status")
	return b, ctx
}

// RenderedUIPage is renderedPage for the integration tests of package am_test (a name of this test
// file, in no build of the AM).
func RenderedUIPage(t *testing.T, chromium string, st contract.Status) string {
	return renderedPage(t, chromium, st)
}

// A framework's pages (a Flink job's web UI) are linked in the header; other jobs' pages have no
// such link, and a link that is not an http(s) URL never becomes one (docs/flink.md#the-web-ui).
func TestUIPageLinksTheFrameworkPages(t *testing.T) {
	chromium := uiChromium(t)
	link := regexp.MustCompile(`<a [^>]*class="framework-link"[^>]*>[^<]*</a>`)
	for _, tc := range []struct {
		url  string
		want string // "" = no link
	}{
		{"http://127.0.0.2:40321/", `href="http://127.0.0.2:40321/"`},
		{"", ""},
		{"javascript:alert(1)", ""},
	} {
		st := contract.Status{App: "application_1_0001", State: contract.StateRunning}
		if tc.url != "" {
			st.Links = []contract.Link{{Name: "Flink UI", URL: tc.url, Note: "the JobManager's web UI and REST API"}}
		}
		a := link.FindString(renderedPage(t, chromium, st))
		if tc.want == "" {
			assert.Empty(t, a, "link %q", tc.url)
			continue
		}
		assert.Contains(t, a, tc.want)
		assert.Contains(t, a, "· Flink UI</a>")
	}
}

// An elastic gang's round and bounds show in a summary card (hidden without gang mode), and a
// container the RM warned it will preempt shows when the AM expects the kill.
func TestUIPageShowsTheGangAndPreemptionWarnings(t *testing.T) {
	chromium := uiChromium(t)
	deadline := time.Date(2026, 11, 24, 6, 50, 15, 0, time.UTC)
	st := contract.Status{App: "application_1_0002", State: contract.StateRunning,
		Gang: &contract.GangStatus{Round: 2, Formed: true, Size: 2, Held: 1, MinInstances: 2, MaxInstances: 3},
		Containers: []contract.ContainerStatus{
			{ID: "container_1_0002_01_000002", Node: "n1:1", State: contract.Running, PreemptionDeadline: deadline},
			{ID: "container_1_0002_01_000003", Node: "n2:1", State: contract.Running},
		}}
	dom := renderedPage(t, chromium, st)
	assert.Regexp(t, `<div class="card wide" id="gang-card">`, dom, "the gang card is shown")
	assert.Contains(t, dom, "round 2: running at 2 (elastic 2–3, 1 held to grow)")
	assert.Regexp(t, `<td class="cstate preempting">RUNNING · preempted by 2026-11-24 06:50:15 UTC</td>`, dom)
	assert.Equal(t, 1, strings.Count(dom, "preempted by"), "only the warned container")

	st.Gang, st.Containers = nil, nil
	st.App = "application_1_0003"
	assert.Regexp(t, `<div class="card wide" id="gang-card" hidden="">`, renderedPage(t, chromium, st), "no gang card without gang mode")
}

// A failed worker's own stderr lines, where the status carries them (the owner's view), show in its
// exit cell as text: markup in them is never drawn (docs/running.md#the-workers-own-error).
func TestUIPageShowsAWorkersStderrTailAsText(t *testing.T) {
	chromium := uiChromium(t)
	code := int32(3)
	st := contract.Status{App: "application_1_0009", State: contract.StateRunning, Containers: []contract.ContainerStatus{
		{ID: "container_1_0009_01_000002", Node: "n1:1", State: contract.Completed, ExitStatus: &code, ExitClass: contract.ExitFailed,
			StderrTail: "ui-err-42 <b>bad</b>"},
	}}
	dom := renderedPage(t, chromium, st)
	assert.Regexp(t, `<td class="exit"[^>]*>3 failed: ui-err-42 &lt;b&gt;bad&lt;/b&gt;</td>`, dom)
	assert.NotContains(t, dom, "<b>bad</b>")
}
