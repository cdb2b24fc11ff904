package am

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/driverclient"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// halt is a framework that exists only in this test: what a framework declares to stop gracefully
// (framework.AM.OnStop, OnKeepState) and to serve its own pages through the AM (framework.Proxy), and
// nothing else. Its driver runs until the framework's stop releases it; its "server" is the test's,
// with one path it declares readable by anyone and one that acts.
type halt struct {
	framework.Base
	server *url.URL
	stops  chan framework.StateRequest
	keeps  chan framework.StateRequest
}

func (halt) Name() string { return "halt" }

func (halt) Table() jobfile.TableInfo {
	return jobfile.TableInfo{Reader: haltReader{}, Command: "./halt-worker", Workers: "halt workers"}
}

type haltReader struct{}

func (haltReader) ReadTable(t *jobfile.Table, _ *jobfile.Job) any {
	t.OnlyKeys(nil)
	return struct{}{}
}

// haltReleased is the file the framework's stop writes in the AM's directory, which ends its driver.
const haltReleased = "halt-released"

func (halt) Driver(*jobfile.Job) (string, string) {
	return `echo running > driver-running; while [ ! -e ` + haltReleased + ` ]; do sleep 0.05; done`, "the halt framework's driver is its own"
}

func (h halt) StartAM(context.Context, *jobfile.Job, framework.AMStart) (*framework.AM, error) {
	return &framework.AM{
		OnStop: func(_ context.Context, r framework.StateRequest) (framework.Kept, error) {
			h.stops <- r
			if err := os.WriteFile(haltReleased, nil, 0o600); err != nil {
				return framework.Kept{}, err
			}
			return framework.Kept{What: "Snapshot", Where: r.Dir + "/halt-1"}, nil
		},
		OnKeepState: func(_ context.Context, r framework.StateRequest) (framework.Kept, error) {
			h.keeps <- r
			return framework.Kept{Where: r.Dir + "/kept-1"}, nil
		},
		Proxy: &framework.Proxy{Path: "halt", Name: "Halt UI", Target: h.server,
			Access: func(p string) framework.Access {
				if framework.Paths([]string{"/overview"}).Match(p) {
					return framework.Access{Level: framework.Public}
				}
				return framework.Access{} // closed: /act and every path not declared
			}},
	}, nil
}

// TestTestOnlyFrameworkStopsAndDeclaresItsProxyPolicy: a framework that only this test knows is
// stopped through the API yarn-am stop uses (driverclient.Stop, POST /api/v1/stop): its own stop verb
// gets the state's directory and the stop's deadline, its answer (what it kept, and its name) comes
// back, and the driver it released ends the application SUCCEEDED. The AM serves its pages by the
// policy it declared and no other: the path it declared readable is 200 to anyone (GET), every other
// path 403 on the plain port and 401 over HTTPS without the secret, and served to the owner; and the
// pages' Content-Security-Policy allows no inline script or style, since it declared none. Keeping
// the state without stopping (POST /api/v1/savepoint) reaches its verb too, named "State" when it
// gives no name. No package but this test names it.
func TestTestOnlyFrameworkStopsAndDeclaresItsProxyPolicy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "halt's own "+r.URL.Path)
	}))
	defer srv.Close()
	target, err := url.Parse(srv.URL)
	require.NoError(t, err)
	h := halt{server: target, stops: make(chan framework.StateRequest, 1), keeps: make(chan framework.StateRequest, 1)}
	framework.Register(h)
	c := fakecluster.New(t)

	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("job.toml", []byte("name = \"halt-job\"\n[halt]\n[taskexecutor]\ninstances = 1\n"), 0o644))
	f, err := jobfile.Read("job.toml")
	require.NoError(t, err)
	job, err := f.StagedJob()
	require.NoError(t, err)
	fw := framework.Of(job)
	require.Equal(t, "halt", fw.Name())
	driver, _ := fw.Driver(job)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := startFrameworkAM(t, ctx, c, dir, f, driver, "halt-secret")
	waitForFile(t, ctx, filepath.Join(dir, "driver-running"), done)
	require.Eventually(t, func() bool { c.Mu.Lock(); defer c.Mu.Unlock(); return c.RegisterReq != nil }, 30*time.Second, 20*time.Millisecond)
	c.Mu.Lock()
	tracking := strings.TrimSuffix(c.RegisterReq.GetTrackingUrl(), "/")
	c.Mu.Unlock()

	// The status names the secure API and the framework's page, under the AM.
	plain := &http.Client{Timeout: 5 * time.Second}
	get := func(cl *http.Client, u, auth string) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := cl.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(body), resp.Header
	}
	code, body, _ := get(plain, tracking+"/api/v1/status", "")
	require.Equal(t, http.StatusOK, code, body)
	var st contract.Status
	require.NoError(t, json.Unmarshal([]byte(body), &st), body)
	require.Len(t, st.Links, 1)
	assert.Equal(t, "Halt UI", st.Links[0].Name)
	assert.Equal(t, tracking+"/halt/", st.Links[0].URL)

	ca, err := os.ReadFile(filepath.Join(dir, contract.CACertFile))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	secure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	secureBase := strings.TrimSuffix(st.SecureAPI, "api/v1/")

	// The proxy's policy is the framework's: its readable path to anyone, the rest closed.
	for _, base := range []string{tracking + "/", secureBase} {
		cl := plain
		if strings.HasPrefix(base, "https:") {
			cl = secure
		}
		code, body, hdr := get(cl, base+"halt/overview", "")
		assert.Equal(t, http.StatusOK, code, "%s: the declared readable path: %s", base, body)
		assert.Equal(t, "halt's own /overview", body)
		csp := hdr.Get("Content-Security-Policy")
		assert.Contains(t, csp, "script-src 'self';", "no inline script declared, none allowed")
		assert.Contains(t, csp, "style-src 'self';", "no inline style declared, none allowed")
		assert.NotContains(t, csp, "unsafe")
	}
	code, body, _ = get(plain, tracking+"/halt/act", "Bearer halt-secret")
	assert.Equal(t, http.StatusForbidden, code, "an undeclared path on the plain port, secret or not: %s", body)
	code, body, _ = get(plain, tracking+"/halt/undeclared", "")
	assert.Equal(t, http.StatusForbidden, code, "a path the framework does not name: %s", body)
	code, body, _ = get(secure, secureBase+"halt/act", "")
	assert.Equal(t, http.StatusUnauthorized, code, "an undeclared path over HTTPS without the secret: %s", body)
	code, body, _ = get(secure, secureBase+"halt/act", "Bearer halt-secret")
	assert.Equal(t, http.StatusOK, code, "the owner: %s", body)
	assert.Equal(t, "halt's own /act", body)

	// Keeping the state, and then the stop, through the client yarn-am savepoint and stop use.
	dc, err := driverclient.New(st.SecureAPI, "halt-secret")
	require.NoError(t, err)
	require.NoError(t, dc.Trust(ca))
	kept, err := dc.KeepState(ctx, "file:///state", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, contract.KeepStateResult{Path: "file:///state/kept-1"}, kept, "no name given: yarn-am savepoint prints State")
	assert.Equal(t, "file:///state", (<-h.keeps).Dir)

	asked := time.Now()
	res, err := dc.Stop(ctx, "file:///state", 45*time.Second)
	require.NoError(t, err)
	assert.Equal(t, contract.StopResult{Result: "file:///state/halt-1", What: "Snapshot"}, res)
	req := <-h.stops
	assert.Equal(t, "file:///state", req.Dir)
	assert.WithinRange(t, req.Deadline, asked.Add(40*time.Second), asked.Add(46*time.Second), "the stop's own bound")

	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the AM did not end after the framework's stop released its driver")
	}
	require.NoError(t, r.err)
	assert.Equal(t, 0, r.code)
	c.Mu.Lock()
	defer c.Mu.Unlock()
	require.NotNil(t, c.FinishReq)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, c.FinishReq.GetFinalApplicationStatus())
}
