//go:build integration

package am_test

// The web UI on the real mini cluster (2 NodeManagers with 4 GPUs each), through the RM's web proxy,
// in headless Chromium (testdata/ui/install-chromium.sh): the device map and the timeline agree with
// the API, and the page is screenshotted.

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am"
	"github.com/yarn-am/yarn-am/contract"
	browser "github.com/yarn-am/yarn-am/testkit/chromium"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// uiJob: 3 TaskExecutors × 3 GPUs on 2 nodes of 4 GPUs: two run, one waits for GPUs that never
// free up, and the first TaskExecutor fails after 3 s (a failed bar, a replacement). One TaskExecutor
// fits a node, so discovery needs no coordination between co-located workers (the mini cluster's
// nodes share one machine, and a coordination file would span them).
const uiJob = `name = "am-it-ui"
"external-resources" = "gpu"
"external-resource.gpu.amount" = 3
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"

[taskexecutor]
instances = 3
command = 'case "$CONTAINER_ID" in *_000002) sleep 3; echo "ui-err-$((40+2)) <b>bad</b>" >&2; exit 3;; esac; sleep 300'
memory = 256
max-failures = 1

[taskexecutor.env]
PATH = "$PWD:/usr/local/bin:/usr/bin:/bin"
FAKE_GPU_COUNT = "4"
`

// pageCSP is the Content-Security-Policy the AM serves the page with.
const pageCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'self'"

var (
	tagRe  = regexp.MustCompile(`<(div|g)\s[^>]*>`)
	attrRe = regexp.MustCompile(`([a-z-]+)="([^"]*)"`)
)

// domElement is one element of the dumped DOM: its tag, its attributes and where its text starts.
type domElement struct {
	tag   string
	attrs map[string]string
	end   int // offset just after the start tag
}

func domElements(dom, class string) []domElement {
	var out []domElement
	for _, loc := range tagRe.FindAllStringSubmatchIndex(dom, -1) {
		tag := dom[loc[0]:loc[1]]
		attrs := map[string]string{}
		for _, m := range attrRe.FindAllStringSubmatch(tag, -1) {
			attrs[m[1]] = html.UnescapeString(m[2])
		}
		if strings.Contains(" "+attrs["class"]+" ", " "+class+" ") {
			out = append(out, domElement{tag: dom[loc[2]:loc[3]], attrs: attrs, end: loc[1]})
		}
	}
	return out
}

// inner returns the markup of e up to its closing tag (the drawing's elements are not nested in
// elements of the same tag).
func (e domElement) inner(dom string) string {
	rest := dom[e.end:]
	if i := strings.Index(rest, "</"+e.tag+">"); i >= 0 {
		return rest[:i]
	}
	return rest
}

func TestAMWebUIDrawsGPUMapAndTimeline(t *testing.T) {
	c := e2e.MiniCluster(t)
	chromium := e2e.ChromiumPath(t)
	rmWeb := os.Getenv("YARN_AM_RM_WEB")
	require.NotEmpty(t, rmWeb, "YARN_AM_RM_WEB (from .minicluster/env)")

	a := c.Submit(t, uiJob, "--service", "--restart-backoff=100ms")
	dc := c.Driver(t, a)

	// Settled: the first TaskExecutor failed, two run and reported their GPUs, one is asked for.
	var st contract.Status
	settled := func() bool {
		s, err := dc.Status(e2e.Context(t, 10*time.Second))
		if err != nil {
			return false
		}
		st = s
		reported := 0
		for _, ct := range s.Containers {
			if ct.State == contract.Running && len(ct.Infos["gpu"]) == 3 {
				reported++
			}
		}
		return reported == 2 && s.Counts.Failed == 1 && s.Counts.Requested == 1 && len(s.Nodes) == 2
	}
	for deadline := time.Now().Add(2 * time.Minute); !settled(); time.Sleep(250 * time.Millisecond) {
		if r := c.Report(t, a); r.GetYarnApplicationState() >= hadooppb.YarnApplicationStateProto_FINISHED {
			t.Fatalf("the application ended: %s", r.GetDiagnostics())
		}
		require.True(t, time.Now().Before(deadline), "two TaskExecutors run with 3 GPUs each, one failed, one is pending, and the AM lists the nodes; last status: %+v", st)
	}
	for _, n := range st.Nodes {
		require.EqualValues(t, 4, n.Capability["yarn.io/gpu"], "node %s", n.Node)
	}
	cs, err := dc.Containers(e2e.Context(t, 10*time.Second))
	require.NoError(t, err)

	url := strings.TrimRight(rmWeb, "/") + "/proxy/" + yarnrpc.FormatApplicationID(a.ID) + "/"
	// The page through the RM's proxy, read once it drew (its own mark, am.PageDrawn): no virtual
	// time, whose clock a request left waiting stops (testkit/chromium).
	b, ctx := chromiumAt(t, chromium, url, 1280, 1000)
	dom, err := b.DOM(ctx)
	require.NoError(t, err)
	assert.Contains(t, dom, yarnrpc.FormatApplicationID(a.ID))
	assert.NotContains(t, dom, a.Secret, "the page never shows the secret")
	assert.NotContains(t, dom, "page error", "every drawing rendered")
	// The failed TaskExecutor's exit cell: the page is served to anonymous readers on the tracking
	// port, who get the exit, not the worker's stderr lines, which are its owner's
	// (docs/running.md#the-workers-own-error; TestUIPage* draw a tail, as text, where the status has one).
	assert.Regexp(t, `<td class="exit"[^>]*>3 failed[^<]*</td>`, dom)
	assert.NotContains(t, dom, "ui-err-42", "the worker's stderr is not shown to anonymous readers")

	// The map: every GPU of every running TaskExecutor, in its node's row, with its container; each
	// node's 4 GPUs drawn, those nobody holds free.
	cells := domElements(dom, "gpu-cell")
	require.NotEmpty(t, cells, "no GPU cell in the page's DOM:\n%s", dom)
	byNode := map[string]map[string]string{} // node → gpu → container
	for _, e := range cells {
		n := e.attrs["data-node"]
		if byNode[n] == nil {
			byNode[n] = map[string]string{}
		}
		_, dup := byNode[n][e.attrs["data-gpu"]]
		assert.False(t, dup, "GPU %s of %s drawn twice", e.attrs["data-gpu"], n)
		byNode[n][e.attrs["data-gpu"]] = e.attrs["data-container"]
	}
	wantMap := map[string]map[string]string{}
	for _, n := range st.Nodes {
		wantMap[n.Node] = map[string]string{"0": "", "1": "", "2": "", "3": ""}
	}
	for _, ct := range cs {
		if ct.State != contract.Running {
			continue
		}
		require.Contains(t, wantMap, ct.Node, "container %s on a node the RM does not list", ct.ID)
		for _, g := range ct.Infos["gpu"] {
			wantMap[ct.Node][g["index"]] = ct.ID
		}
	}
	assert.Equal(t, wantMap, byNode, "the GPU map (node → GPU index → container) against /api/v1/containers")

	// The timeline: a bar per container, the failed one ending in the failure colour, the running
	// ones still running; a bar for the pending ask.
	bars := map[string]domElement{}
	asks := 0
	for _, e := range domElements(dom, "bar") {
		if id := e.attrs["data-container"]; id != "" {
			bars[id] = e
		}
		if e.attrs["data-ask"] != "" {
			asks++
			assert.Contains(t, e.inner(dom), "seg-pending", "the pending ask's bar")
		}
	}
	var ids, barIDs []string
	for _, ct := range cs {
		ids = append(ids, ct.ID)
		e, ok := bars[ct.ID]
		if !ok {
			continue
		}
		inner := e.inner(dom)
		assert.Contains(t, inner, "seg-pending", "%s: its time waiting for YARN", ct.ID)
		switch ct.State {
		case contract.Completed:
			assert.Equal(t, contract.ExitFailed, ct.ExitClass)
			assert.Contains(t, inner, "end-fail", "%s failed", ct.ID)
		case contract.Running:
			assert.Contains(t, inner, "seg-running", "%s runs", ct.ID)
		}
	}
	for id := range bars {
		barIDs = append(barIDs, id)
	}
	sort.Strings(ids)
	sort.Strings(barIDs)
	assert.Equal(t, ids, barIDs, "one timeline bar per container of /api/v1/containers")
	assert.Equal(t, len(st.Asks), asks, "one bar per pending ask")

	// The same page under the Content-Security-Policy the AM serves it with (no inline script or
	// style, nothing from elsewhere): a proxy in front of the RM's adds the header. The page says
	// what the browser blocked, so nothing blocked leaves its csp line empty; and it still draws.
	target, err := neturl.Parse(url)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(r *http.Response) error {
		r.Header.Set("Content-Security-Policy", pageCSP)
		return nil
	}
	front := httptest.NewServer(rp)
	defer front.Close()
	cb, cctx := chromiumAt(t, chromium, front.URL+"/", 1280, 1000, "--enable-logging=stderr", "--v=0")
	cspDOM, err := cb.DOM(cctx)
	require.NoError(t, err)
	cb.Close() // its log is complete once it ended
	// Chromium logs what it refused (also what the parser met before the page's script could listen).
	var refused []string
	for _, line := range strings.Split(cb.Stderr(), "\n") {
		if strings.Contains(line, "Content Security Policy") {
			refused = append(refused, line)
		}
	}
	assert.Empty(t, refused, "nothing blocked by the Content-Security-Policy")
	assert.Regexp(t, `<p id="csp" class="diag"></p>`, cspDOM, "nothing blocked by the Content-Security-Policy")
	assert.Len(t, domElements(cspDOM, "gpu-cell"), len(cells), "the map drawn under the Content-Security-Policy")
	assert.Len(t, domElements(cspDOM, "bar"), len(bars)+asks, "the timeline drawn under the Content-Security-Policy")

	// /metrics through the same proxy.
	resp, err := http.Get(url + "metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(body), `yarn_am_containers{state="running"} 2`)
	assert.Contains(t, string(body), `yarn_am_rpc_duration_seconds_count{method="getClusterNodes"}`, "the node listing behind the map")

	shotDir := filepath.Join(os.TempDir(), "yarn-am-ui")
	require.NoError(t, os.MkdirAll(shotDir, 0o755))
	shot := filepath.Join(shotDir, yarnrpc.FormatApplicationID(a.ID)+".png")
	png, err := b.Screenshot(ctx)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	fi, err := os.Stat(shot)
	require.NoError(t, err)
	assert.Greater(t, fi.Size(), int64(10_000), "a screenshot with something drawn")
	t.Logf("web UI screenshot (through %s): %s (%d KB)", url, shot, fi.Size()/1024)
	if os.Getenv(e2e.UpdateShotEnv) == "1" {
		require.Less(t, fi.Size(), int64(200_000), "docs/img/ui.png stays under 200 KB")
		data, err := os.ReadFile(shot)
		require.NoError(t, err)
		doc := filepath.Join(c.Root, "docs", "img", "ui.png")
		require.NoError(t, os.MkdirAll(filepath.Dir(doc), 0o755))
		require.NoError(t, os.WriteFile(doc, data, 0o644))
		t.Logf("and copied to %s", doc)
	}
}

// chromiumAt loads the AM's page at url in headless Chromium of a width×height window with the extra
// flags and returns once the page drew a status (am.PageDrawn), with a context that bounds what the
// test does with the browser (2 minutes, a guard against a hang, never the signal).
func chromiumAt(t *testing.T, chromium, url string, width, height int, extra ...string) (*browser.Browser, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	b, err := browser.Start(ctx, chromium, t.TempDir(), width, height, extra...)
	require.NoError(t, err)
	t.Cleanup(b.Close)
	require.NoError(t, b.Navigate(ctx, url))
	require.NoError(t, b.WaitFor(ctx, am.PageDrawn), "the page at %s drew a status", url)
	return b, ctx
}

// The drawings' harder cases, from a status document served next to the page (Chromium only, no
// cluster): GPUs another application holds, a container whose launcher has not reported its indexes
// yet, a node without a node report, a container adopted from an earlier attempt, one preempted.
func TestWebUIDrawsWhatTheAMCannotKnowExactly(t *testing.T) {
	chromium := e2e.ChromiumPath(t)
	t0 := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	exit := int32(-102)
	gpus := func(idx ...string) map[string][]contract.Info {
		var l []contract.Info
		for _, i := range idx {
			l = append(l, contract.Info{"index": i})
		}
		return map[string][]contract.Info{"gpu": l}
	}
	res := contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 2}
	st := contract.Status{App: "application_1_0001", State: contract.StateRunning, Started: at(0), Now: at(100), NodesAt: at(95),
		Requirement: contract.Requirement{Instances: 4, Resources: res, ExternalResources: map[string]string{"gpu": "yarn.io/gpu"}},
		Nodes: []contract.NodeStatus{
			{Node: "nm-a:1", Capability: contract.Capability{"yarn.io/gpu": 4}, Used: contract.Capability{"yarn.io/gpu": 4}},
			{Node: "nm-b:1", Capability: contract.Capability{"yarn.io/gpu": 4}, Used: contract.Capability{"yarn.io/gpu": 0}},
		},
		Containers: []contract.ContainerStatus{
			{ID: "container_1_0001_01_000002", Node: "nm-a:1", State: contract.Running, Resources: res, Infos: gpus("0", "1"),
				RequestedAt: at(1), AllocatedAt: at(3), LaunchedAt: at(4)},
			{ID: "container_1_0001_01_000003", Node: "nm-b:1", State: contract.Launching, Resources: res, RequestedAt: at(1), AllocatedAt: at(90)},
			{ID: "container_1_0001_01_000004", Node: "nm-c:1", State: contract.Running, Resources: res, Infos: gpus("5")},
			{ID: "container_1_0001_01_000005", Node: "nm-b:1", State: contract.Completed, Resources: res, Infos: gpus("0", "1"),
				RequestedAt: at(1), AllocatedAt: at(3), LaunchedAt: at(4), FinishedAt: at(50), ExitStatus: &exit, ExitClass: contract.ExitPreempted},
		},
		Asks: []contract.AskStatus{{ID: 3, Pending: 1, Since: at(50)}},
	}
	dom := am.RenderedUIPage(t, chromium, st)
	assert.NotContains(t, dom, "page error")

	type cellKey struct{ node, gpu, container, state string }
	var got []cellKey
	for _, e := range domElements(dom, "gpu-cell") {
		got = append(got, cellKey{e.attrs["data-node"], e.attrs["data-gpu"], e.attrs["data-container"], e.attrs["data-state"]})
	}
	assert.Equal(t, []cellKey{
		// nm-a: ours hold 0 and 1; the report counts 4 used, so 2 are someone else's.
		{"nm-a:1", "0", "container_1_0001_01_000002", "running"},
		{"nm-a:1", "1", "container_1_0001_01_000002", "running"},
		{"nm-a:1", "2", "", "other"},
		{"nm-a:1", "3", "", "other"},
		// nm-b: a launching container holds 2 GPUs whose indexes are not reported yet; the preempted
		// one holds nothing any more.
		{"nm-b:1", "", "container_1_0001_01_000003", "launching"},
		{"nm-b:1", "", "container_1_0001_01_000003", "launching"},
		{"nm-b:1", "2", "", "free"},
		{"nm-b:1", "3", "", "free"},
		// nm-c: no node report: only what is held is drawn.
		{"nm-c:1", "5", "container_1_0001_01_000004", "running"},
	}, got)

	bars := map[string]string{}
	for _, e := range domElements(dom, "bar") {
		if id := e.attrs["data-container"]; id != "" {
			bars[id] = e.inner(dom)
		} else if e.attrs["data-ask"] == "3" {
			bars["ask"] = e.inner(dom)
		}
	}
	require.Len(t, bars, 5, "a bar per container and one for the pending ask")
	assert.Contains(t, bars["container_1_0001_01_000002"], "seg-running")
	assert.Contains(t, bars["container_1_0001_01_000003"], "seg-launching")
	assert.NotContains(t, bars["container_1_0001_01_000003"], "seg-running", "not started yet")
	assert.Contains(t, bars["container_1_0001_01_000004"], "adopted", "started by an earlier attempt: no times")
	assert.Contains(t, bars["container_1_0001_01_000005"], "end-lost", "preempted: YARN took it")
	assert.Contains(t, bars["ask"], "seg-pending")
}
