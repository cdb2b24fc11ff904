//go:build integration

package flink_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/framework/flink"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// This file is the stranger's crawl of a running Flink session cluster (docs/security.md#what-anonymous-readers-see):
// everything the AM's page, its API and the JobManager's UI through the AM answer to someone without
// the application secret, walked from three places (the plain tracking URL, the HTTPS port without
// the secret, the RM's web proxy), must hold no secret, no -D value, no stderr line, no launch
// script and no bound JobManager port, and every acting or file-serving path must refuse. It runs
// inside TestFlinkSessionCluster, on the session cluster that test started (one per Flink version).

// crawlSession is what the session's job file and submit planted for the crawl to look for.
type crawlSession struct {
	// canary is a -D Flink key's value and a TaskManager's environment value (taskexecutor.env by
	// -D): in YARN_AM_DEFINES of every launch script, the JobManager's configuration and its log.
	canary string
	// marker is in the TaskManagers' JAVA_TOOL_OPTIONS, which their JVM echoes on stderr ("Picked up
	// JAVA_TOOL_OPTIONS: ..."): the stderr tail of the TaskManager the crawl kills.
	marker string
}

func newCrawlSession(t *testing.T) crawlSession {
	t.Helper()
	b := make([]byte, 8)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return crawlSession{canary: "crawler-canary-" + hex.EncodeToString(b), marker: "crawler-stderr-" + hex.EncodeToString(b)}
}

// jobText adds to a session job file what the crawl needs: the marker in the TaskManagers'
// JAVA_TOOL_OPTIONS, and room for the one TaskManager the crawl kills.
func (c crawlSession) jobText(body []byte) []byte {
	body = bytes.Replace(body, []byte("max-failures = 0\n"), []byte("max-failures = 2\n"), 1)
	return bytes.Replace(body, []byte("[taskexecutor.env]\n"), []byte(fmt.Sprintf("[taskexecutor.env]\nJAVA_TOOL_OPTIONS = \"-Dyarn.am.crawler=%s\"\n", c.marker)), 1)
}

// defines are submit's -D arguments of the canary.
func (c crawlSession) defines() []string {
	return []string{"-D", "yarn-am.crawler.canary=" + c.canary, "-D", "taskexecutor.env.CRAWLER_CANARY=" + c.canary}
}

// owner is the application's owner through the AM's HTTPS port: the secret submit kept, a client
// trusting the application's authority alone.
type owner struct {
	secret, secureBase string // secureBase: https://host:port/
	client             *http.Client
}

func ownerOf(t *testing.T, id string) owner {
	t.Helper()
	secret, caCert, err := client.LoadAppSecret(id)
	require.NoError(t, err, "the secret submit kept")
	pinned, err := amtls.HTTPClient(caCert, time.Minute)
	require.NoError(t, err)
	var st struct {
		AM struct {
			SecureAPI string `json:"secureAPI"`
		} `json:"am"`
	}
	r := e2e.YarnAM(t, time.Minute, "status", id, "--json")
	require.Equal(t, 0, r.Code, r.String())
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &st))
	require.True(t, strings.HasPrefix(st.AM.SecureAPI, "https://"), st.AM.SecureAPI)
	return owner{secret: secret, secureBase: strings.TrimSuffix(st.AM.SecureAPI, "api/v1/"), client: pinned}
}

// get is the owner's GET of path (below the AM's root), its status and body (at most 16 MiB).
func (o owner) get(t *testing.T, path string) (int, string) {
	t.Helper()
	code, body, err := o.try(path)
	require.NoError(t, err, "the owner's GET %s", path)
	return code, body
}

func (o owner) try(path string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, o.secureBase+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+o.secret)
	resp, err := o.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, string(body), err
}

// strangerCrawl kills the session's TaskManager (its stderr tail then holds the marker), checks that
// the owner reaches what a stranger must not (the tail, the canary in the JobManager's configuration
// and log, a jar's plan), and crawls as a stranger.
func strangerCrawl(t *testing.T, id, ui string, cs crawlSession) {
	t.Helper()
	start := time.Now()
	own := ownerOf(t, id)
	killTaskManagerJVM(t, id)
	var tail string
	require.Eventually(t, func() bool {
		code, body, err := own.try("api/v1/status")
		var st contract.Status
		if err != nil || code != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
			return false
		}
		for _, c := range st.Containers {
			if strings.Contains(c.StderrTail, cs.marker) {
				tail = c.StderrTail
			}
		}
		return tail != ""
	}, 2*time.Minute, time.Second, "the killed TaskManager's stderr tail, with the marker, in the owner's status\n%s", e2e.ContainerLogs(id))

	// What the owner reaches: the configuration and Flink's log hold the canary (so a stranger's
	// answer without it means something); the log comes redacted; files beside it never.
	code, body := own.get(t, "flink/jobmanager/config")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, cs.canary, "the owner reads the JobManager's configuration")
	code, body = own.get(t, "flink/jobmanager/logs/jobmanager.log")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, cs.canary, "the owner reads Flink's log, which logs the configuration")
	assert.NotContains(t, body, own.secret)
	for _, f := range []string{"launch_container.sh", "am.stderr", "stderr", "directory.info"} {
		code, body = own.get(t, "flink/jobmanager/logs/"+f)
		assert.Equal(t, http.StatusForbidden, code, "the owner's %s: %s", f, body)
	}
	defines := regexp.MustCompile(`export YARN_AM_DEFINES="([^"]+)"`).FindStringSubmatch(amContainerFile(id, "launch_container.sh"))
	require.NotNil(t, defines, "the launch script the proxy withholds exports YARN_AM_DEFINES")
	decoded, err := base64.StdEncoding.DecodeString(defines[1])
	require.NoError(t, err)
	assert.Contains(t, string(decoded), cs.canary, "the launch script the proxy withholds holds the canary")
	code, body = own.get(t, "flink/jars")
	require.Equal(t, http.StatusOK, code, body)
	var jars struct {
		Files []struct {
			ID string `json:"id"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &jars), body)
	require.NotEmpty(t, jars.Files, "the jar the owner uploaded (jobManagerClosedToStrangers): %s", body)
	jarID := jars.Files[0].ID
	code, body = own.get(t, "flink/jars/"+jarID+"/plan?programArg=stream")
	assert.Equal(t, http.StatusOK, code, "the owner's plan of the jar (Flink runs its main()): %s", body)

	leaks := secretsOf(t, id, cs, own.secret, tail)
	base := strings.TrimSuffix(ui, "flink/")
	rmWeb := os.Getenv("YARN_AM_RM_WEB")
	require.NotEmpty(t, rmWeb, "YARN_AM_RM_WEB (from .minicluster/env)")
	strangers := []stranger{
		{name: "the tracking URL", base: base, client: &http.Client{Timeout: time.Minute}, refused: http.StatusForbidden, direct: true},
		{name: "HTTPS without the secret", base: own.secureBase, client: own.client, refused: http.StatusUnauthorized, direct: true},
		// The RM's web proxy buffers a stream, and takes GET, HEAD, PUT, POST and DELETE only: it is
		// walked and asked every GET.
		{name: "the RM's web proxy", base: strings.TrimRight(rmWeb, "/") + "/proxy/" + id + "/", client: &http.Client{Timeout: time.Minute}, refused: http.StatusForbidden},
	}
	for _, s := range strangers {
		n := s.crawl(t, leaks, jarID)
		t.Logf("%s: %d URLs answered a stranger, none with a secret; %d refused", s.name, n.read, n.refused)
	}
	t.Logf("the stranger's crawl took %s", time.Since(start).Round(time.Second))
}

// killTaskManagerJVM kills the application's TaskManager JVM (SIGKILL), found on this machine by its
// main class and its working directory, which holds the application id.
func killTaskManagerJVM(t *testing.T, id string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*")
	killed := 0
	for _, p := range procs {
		cwd, err := os.Readlink(filepath.Join(p, "cwd"))
		if err != nil || !strings.Contains(cwd, id) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		if !strings.Contains(string(cmd), "TaskManagerRunner") {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(p))
		require.NoError(t, err)
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL), "kill the TaskManager %d", pid)
		killed++
	}
	require.Equal(t, 1, killed, "the session's one TaskManager JVM")
}

// leak is a text no stranger's answer may hold, and what it is.
type leak struct{ what, text string }

// secretsOf lists what no anonymous answer may hold: every secret and token password of the AM's
// credentials (as written, in hex and base64), the application secret, the canary, the marker and the
// stderr tail's lines, a launch script's lines, and the JobManager's bound RPC and REST addresses.
func secretsOf(t *testing.T, id string, cs crawlSession, secret, tail string) []leak {
	t.Helper()
	var out []leak
	add := func(what string, b []byte) {
		forms := []string{hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)), base64.StdEncoding.EncodeToString(b),
			base64.RawStdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b), string(b)}
		for _, f := range forms {
			if len(f) >= 12 {
				out = append(out, leak{what, f})
			}
		}
	}
	add("the application secret", []byte(secret))
	var amTokens []string
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOCAL_DIRS"), ",") {
		f, _ := filepath.Glob(filepath.Join(d, "usercache", "*", "appcache", id, "container_*_000001", "container_tokens"))
		amTokens = append(amTokens, f...)
	}
	require.NotEmpty(t, amTokens, "the AM's container_tokens under YARN_AM_NM_LOCAL_DIRS")
	creds, err := yarnrpc.ReadCredentialsFile(amTokens[0])
	require.NoError(t, err)
	for alias, s := range creds.Secrets {
		if alias != contract.TLSCACertAlias { // the authority's certificate is public
			add("the AM's secret "+alias, s)
		}
	}
	for alias, tok := range creds.Tokens {
		add("the password of token "+alias, tok.Password)
	}
	if m := regexp.MustCompile(`export YARN_AM_DEFINES="([^"]+)"`).FindStringSubmatch(amContainerFile(id, "launch_container.sh")); m != nil {
		out = append(out, leak{"the -D values as the launch script exports them", m[1]})
	}
	out = append(out, leak{"the -D canary", cs.canary}, leak{"the stderr marker", cs.marker},
		leak{"a launch script", "export CONTAINER_ID="}, leak{"a launch script", "YARN_AM_DEFINES"})
	for _, l := range strings.Split(tail, "\n") {
		if l = strings.TrimSpace(l); len(l) >= 12 {
			out = append(out, leak{"a line of the TaskManager's stderr tail", l})
		}
	}
	m := regexp.MustCompile(`the JobManager's JVM bound RPC (\S+) and REST (\S+) \(learnt`).FindStringSubmatch(amContainerFile(id, "am.stdout"))
	require.NotNil(t, m, "the JobManager's bound ports in am.stdout")
	out = append(out, leak{"the JobManager's bound RPC address", m[1]}, leak{"the JobManager's bound REST address", m[2]})
	return out
}

// stranger reads the AM from one place without the secret.
type stranger struct {
	name, base string // base: the AM's root as this stranger reaches it, ending in /
	client     *http.Client
	refused    int  // what a path that takes the secret answers here
	direct     bool // the AM's own port, not a proxy: the event stream and every method are tried too
}

type crawlCount struct{ read, refused int }

// crawl walks every URL the AM and the JobManager's UI answer this stranger: the AM's page and what
// it links, the API, and Flink's public paths (flink.PublicPaths) filled with the ids its answers
// name; then it asks every acting or file-serving path and expects a refusal.
func (s stranger) crawl(t *testing.T, leaks []leak, jarID string) crawlCount {
	t.Helper()
	var n crawlCount
	seen := map[string]bool{}
	ids := crawlIDs{}
	queue := []string{"", "api/v1/status", "api/v1/containers", "api/v1/requirements", "api/v1/events?format=json", "metrics",
		"flink/", "flink/config", "flink/overview", "flink/jobs/overview", "flink/taskmanagers", "flink/applications/overview"}
	visit := func(path string) {
		if seen[path] || strings.HasPrefix(path, "api/v1/events") && !strings.Contains(path, "format=json") {
			return // a stream, read by stream below
		}
		seen[path] = true
		code, ctype, body := s.get(t, path)
		s.checkNoLeak(t, path, body, leaks)
		if code != http.StatusOK {
			return
		}
		n.read++
		switch {
		case strings.Contains(ctype, "html"):
			queue = append(queue, pageLinks(path, body)...)
		case strings.Contains(ctype, "json"):
			var v any
			if json.Unmarshal([]byte(body), &v) == nil {
				ids.collect("", v)
			}
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		visit(p)
		if len(queue) == 0 { // the AM's and Flink's pages are walked: now every public template
			for _, fp := range ids.fill(flink.PublicPaths) {
				if !seen["flink"+fp] {
					queue = append(queue, "flink"+fp)
				}
			}
			for _, c := range ids.of("container") {
				for _, sub := range []string{"rendezvous", "gpus"} {
					if !seen["api/v1/containers/"+c+"/"+sub] {
						queue = append(queue, "api/v1/containers/"+c+"/"+sub)
					}
				}
			}
		}
	}
	assert.True(t, seen["flink/index.html"] || seen["flink/"], "%s: Flink's dashboard page", s.name)
	require.NotEmpty(t, ids.of("jobid"), "%s: the crawl found the owner's job (through /flink/jobs/overview)", s.name)
	require.NotEmpty(t, ids.of("vertexid"), "%s: the crawl found the job's vertices", s.name)
	assert.Greater(t, n.read, 40, "%s: the crawl read the AM's and Flink's public pages", s.name)
	if s.direct {
		s.stream(t, leaks)
	}

	// Every acting or file-serving path refuses, however spelled.
	job, tm := ids.of("jobid")[0], "unknown-taskmanager"
	if tms := ids.of("taskmanagerid"); len(tms) > 0 {
		tm = tms[0]
	}
	refused := []string{
		"flink/jars", "flink/jars/" + jarID + "/plan?programArg=stream", "flink/jars/" + jarID + "/plan?entry-class=yarnam.flinkjob.Job",
		"flink/jobmanager/config", "flink/jobmanager/environment", "flink/jobmanager/log", "flink/jobmanager/stdout",
		"flink/jobmanager/logs", "flink/jobmanager/logs/jobmanager.log", "flink/jobmanager/logs/launch_container.sh",
		"flink/jobmanager/logs/am.stderr", "flink/jobmanager/logs/stderr", "flink/jobmanager/logs/prelaunch.err",
		"flink/jobmanager/thread-dump", "flink/jobmanager/profiler",
		"flink/taskmanagers/" + tm + "/log", "flink/taskmanagers/" + tm + "/stdout", "flink/taskmanagers/" + tm + "/logs",
		"flink/taskmanagers/" + tm + "/logs/taskmanager.log", "flink/taskmanagers/" + tm + "/logs/launch_container.sh",
		"flink/taskmanagers/" + tm + "/thread-dump",
		"flink/jobs/" + job + "/yarn-cancel", "flink/jobs/" + job + "/yarn-stop", "flink/jobs/" + job + "/config",
		"flink/jobs/" + job + "/jobmanager/config", "flink/jobs/" + job + "/jobmanager/environment",
		"flink/jobs/" + job + "/accumulators", "flink/jobs/" + job + "/execution-result",
		// Spellings.
		"flink//jobmanager//config", "flink/jobmanager/config/", "flink/jobmanager%2Fconfig", "flink/jobmanager/logs/%2e%2e%2flaunch_container.sh",
		"flink/jobs/overview/..%2F..%2Fjobmanager%2Fconfig", "flink/assets/..%2F..%2Fjars", "flink/JOBMANAGER/config",
		// The AM's own.
		"api/v1/tokens", "api/v1/framework/published",
	}
	for _, p := range refused {
		s.refuses(t, http.MethodGet, p, leaks)
		n.refused++
	}
	if !s.direct {
		return n
	}
	for _, w := range []struct{ method, path string }{
		{http.MethodPost, "flink/jars/" + jarID + "/run"}, {http.MethodPost, "flink/jars/upload"}, {http.MethodDelete, "flink/jars/" + jarID},
		{http.MethodPatch, "flink/jobs/" + job + "?mode=cancel"}, {http.MethodPost, "flink/jobs/" + job + "/stop"},
		{http.MethodPost, "flink/jobs/" + job + "/savepoints"}, {http.MethodDelete, "flink/cluster"},
		{http.MethodPost, "api/v1/stop"}, {http.MethodPost, "api/v1/savepoint"}, {http.MethodPut, "api/v1/requirements"},
	} {
		s.refuses(t, w.method, w.path, leaks)
		n.refused++
	}
	return n
}

// get is the stranger's GET of path, following no redirect: its status, type and body (16 MiB at
// most).
func (s stranger) get(t *testing.T, path string) (int, string, string) {
	t.Helper()
	return s.do(t, http.MethodGet, path)
}

func (s stranger) do(t *testing.T, method, path string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(map[bool]string{true: "{}", false: ""}[method != http.MethodGet]))
	require.NoError(t, err, path)
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	c := *s.client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	require.NoError(t, err, "%s: %s %s", s.name, method, path)
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

// refuses asks method path and expects a refusal; a redirect (the AM's router cleaning a path) is
// followed as a browser would, and what it leads to must refuse too. A spelling that climbs out of
// flink/ (the RM's web proxy decodes %2F before the AM sees it) is a path of the AM's own that does
// not exist: the AM's router answers its 404, and nothing reached the JobManager.
func (s stranger) refuses(t *testing.T, method, path string, leaks []leak) {
	t.Helper()
	for hop := 0; hop < 3; hop++ {
		code, _, body := s.do(t, method, path)
		s.checkNoLeak(t, path, body, leaks)
		if code == http.StatusNotFound && body == "404 page not found\n" && strings.Contains(path, "..") {
			return
		}
		if code != http.StatusMovedPermanently && code != http.StatusTemporaryRedirect && code != http.StatusFound {
			assert.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, code, "%s: a stranger's %s %s: %.300s", s.name, method, path, body)
			if code == http.StatusUnauthorized || code == http.StatusForbidden {
				assert.True(t, code == s.refused || strings.Contains(body, "is not served through the AM"), "%s: %s %s answered %d", s.name, method, path, code)
			}
			return
		}
		c := *s.client
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		req, _ := http.NewRequest(method, s.base+path, nil)
		resp, err := c.Do(req)
		require.NoError(t, err)
		loc, err := resp.Location()
		resp.Body.Close()
		require.NoError(t, err, "%s: the redirect of %s", s.name, path)
		b, _ := url.Parse(s.base)
		require.Equal(t, b.Host, loc.Host, "%s: %s redirects to the AM itself", s.name, path)
		path = strings.TrimPrefix(loc.RequestURI(), b.Path)
	}
	t.Errorf("%s: %s %s redirects on and on", s.name, method, path)
}

// stream reads the event stream as a stranger for a few seconds and checks what arrived.
func (s stranger) stream(t *testing.T, leaks []leak) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"api/v1/events?since=0", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.client.Do(req)
	require.NoError(t, err, "%s: the event stream", s.name)
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20)) // until the 5 s end the read
	assert.Contains(t, string(body), `"type":"completed"`, "%s: the stream carried the killed TaskManager's completion", s.name)
	s.checkNoLeak(t, "api/v1/events (stream)", string(body), leaks)
}

func (s stranger) checkNoLeak(t *testing.T, path, body string, leaks []leak) {
	t.Helper()
	for _, l := range leaks {
		if strings.Contains(body, l.text) {
			t.Errorf("%s: a stranger's GET %s holds %s (%.40q…)", s.name, path, l.what, l.text)
		}
	}
}

var pageLink = regexp.MustCompile(`(?:href|src)="([^"#]+)`)

// pageLinks are the same-site links of an HTML page at path, as paths below the AM's root.
func pageLinks(path, body string) []string {
	dir := path
	if i := strings.LastIndex(dir, "/"); i >= 0 {
		dir = dir[:i+1]
	} else {
		dir = ""
	}
	var out []string
	for _, m := range pageLink.FindAllStringSubmatch(body, -1) {
		l := strings.ReplaceAll(m[1], "&amp;", "&")
		switch {
		case strings.Contains(l, "://"), strings.HasPrefix(l, "//"), strings.HasPrefix(l, "data:"), strings.HasPrefix(l, "/"):
			continue // another site, inline, or an absolute path (which through the RM's proxy would leave it)
		}
		out = append(out, strings.TrimPrefix(dir+strings.TrimPrefix(l, "./"), "/"))
	}
	return out
}

// crawlIDs are the ids a crawl found in JSON answers, by the variable of flink.PublicPaths they fill.
type crawlIDs map[string]map[string]bool

func (c crawlIDs) add(kind, v string) {
	if c[kind] == nil {
		c[kind] = map[string]bool{}
	}
	c[kind][v] = true
}

func (c crawlIDs) of(kind string) []string {
	var out []string
	for v := range c[kind] {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

// collect walks a JSON answer: "jid" and the ids of "jobs" are jobs, of "vertices" vertices, of
// "taskmanagers" TaskManagers, of "applications" applications, of "history" checkpoints; the AM's
// containers by their "id" beside "node".
func (c crawlIDs) collect(parent string, v any) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			c.collect(parent, e)
		}
	case map[string]any:
		for k, e := range x {
			switch s := e.(type) {
			case string:
				switch {
				case k == "jid" && hex32.MatchString(s):
					c.add("jobid", s)
				case k == "id" && parent == "jobs" && hex32.MatchString(s):
					c.add("jobid", s)
				case k == "id" && parent == "vertices" && hex32.MatchString(s):
					c.add("vertexid", s)
				case k == "id" && parent == "taskmanagers":
					c.add("taskmanagerid", s)
				case (k == "id" || k == "application-id" || k == "applicationId") && parent == "applications" && hex32.MatchString(s):
					c.add("applicationid", s)
				case k == "id" && parent == "containers" && strings.HasPrefix(s, "container_"):
					c.add("container", s)
				}
			case float64:
				if k == "id" && parent == "history" {
					c.add("checkpointid", strconv.Itoa(int(s)))
				}
			}
			c.collect(k, e)
		}
	}
}

var templateVar = regexp.MustCompile(`\{([a-z]+)(:[a-z0-9]+)?(\.\.\.)?\}`)

// fill is every template of ps with its variables filled from the ids found (two of each at most;
// an id nothing named yet is one that does not exist, which still asks Flink the path), its globs
// and "..." tails left out (the page's links walk those).
func (c crawlIDs) fill(ps []string) []string {
	var out []string
	for _, p := range ps {
		if strings.Contains(p, "*") || strings.Contains(p, "...}") {
			continue
		}
		paths := []string{p}
		for _, m := range templateVar.FindAllStringSubmatch(p, -1) {
			vals := c.of(m[1])
			if len(vals) > 2 {
				vals = vals[:2]
			}
			if len(vals) == 0 {
				vals = []string{map[bool]string{true: "1", false: "00000000000000000000000000000000"}[m[2] == ":int"]}
				if m[2] == "" {
					vals = []string{"unknown"}
				}
			}
			if m[1] == "subtaskindex" || m[1] == "attempt" {
				vals = []string{"0"}
			}
			var next []string
			for _, q := range paths {
				for _, v := range vals {
					next = append(next, strings.Replace(q, m[0], v, 1))
				}
			}
			paths = next
		}
		out = append(out, paths...)
	}
	return out
}
