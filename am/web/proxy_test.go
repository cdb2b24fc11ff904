package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/internal/stderrtail"
)

// testAccess is a framework's Access for the proxy's tests: /, /jobs/overview and /x public,
// /log and /big a log, /launch.sh withheld, the rest the owner's.
func testAccess(p string) framework.Access {
	switch p {
	case "/", "/jobs/overview", "/x":
		return framework.Access{Level: framework.Public}
	case "/log", "/big":
		return framework.Access{Level: framework.OwnerLog}
	case "/launch.sh":
		return framework.Access{Level: framework.Withheld, Why: "the launch script stays on the node"}
	}
	return framework.Access{Level: framework.OwnerOnly}
}

// TestProxyServesStrangersOnlyTheFrameworksPublicPaths: a framework's UI under /<path>/
// (framework.AM.Proxy) is read by anyone (GET, HEAD on either listener) only where the framework's
// Access says Public, the path judged as it is forwarded (decoded, cleaned: double slashes, dot
// segments, trailing slashes, encoded slashes), without a body; every other path and method reaches
// the framework only over HTTPS with the secret: 403 on the plain listener whatever the header says
// (naming the HTTPS address), 401 without the secret or with a wrong one. A withheld path reaches
// the framework for no one; a log reaches the owner redacted of the secret and the token passwords.
// What is forwarded goes to the target's address with the path below the prefix, without the secret
// or the reader's cookies, and a body over the bound is cut (413) before the framework acts on it.
// Before, every GET and HEAD was forwarded for anyone but the framework's acting GETs.
func TestProxyServesStrangersOnlyTheFrameworksPublicPaths(t *testing.T) {
	type seen struct{ method, path, query, auth, cookie, host, body, encoding string }
	var mu sync.Mutex
	var got []seen
	const password = "hdfs-token-password-bytes"
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.Host, string(b), r.Header.Get("Accept-Encoding")})
		mu.Unlock()
		w.Header().Set("Content-Security-Policy", "default-src *")
		w.Header().Set("Set-Cookie", "flink=1")
		switch r.URL.Path {
		case "/log":
			if r.Header.Get("Range") != "" { // a part, as Flink's file handlers may serve one
				w.WriteHeader(http.StatusPartialContent)
				_, _ = io.WriteString(w, "s3cret-app")
				return
			}
			_, _ = io.WriteString(w, "INFO secret s3cret-application-secret and token "+password+"\n")
		case "/big": // a secret across the redacting reader's reads
			_, _ = io.WriteString(w, strings.Repeat("x", 32<<10-10)+"s3cret-application-secret"+strings.Repeat("y", 70<<10)+password)
		default:
			_, _ = io.WriteString(w, `{"jobs":[]}`)
		}
	}))
	defer target.Close()
	tu, err := url.Parse(target.URL)
	require.NoError(t, err)
	red := &stderrtail.Redactor{}
	red.Add("delegation token password", []byte(password))
	proxy := &framework.Proxy{Path: "flink", Name: "Flink UI", Target: tu, MaxBody: 64, Access: testAccess}
	do := func(secure bool, method, path, auth, body string) *httptest.ResponseRecorder {
		o := Options{Secret: "s3cret-application-secret", Secure: secure, Proxy: proxy, SecureAPI: "https://am:8443/api/v1/", Redact: red}
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		req.Header.Set("Cookie", "session=reader")
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		Handler(fakeBackend(newFakeEvents()), o).ServeHTTP(rec, req)
		return rec
	}
	reset := func() []seen {
		mu.Lock()
		defer mu.Unlock()
		g := got
		got = nil
		return g
	}
	const owner = "Bearer s3cret-application-secret"

	for _, secure := range []bool{false, true} {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			rec := do(secure, m, "/flink/jobs/overview?x=1", "", "")
			assert.Equal(t, http.StatusOK, rec.Code, "secure=%v %s: %s", secure, m, rec.Body)
			assert.Equal(t, []string{proxyCSP(proxy)}, rec.Header().Values("Content-Security-Policy"), "the AM's policy, not the framework's")
			assert.Empty(t, rec.Header().Values("Set-Cookie"))
		}
	}
	g := reset()
	require.Len(t, g, 4)
	for _, s := range g {
		assert.Equal(t, "/jobs/overview", s.path)
		assert.Equal(t, "x=1", s.query)
		assert.Equal(t, tu.Host, s.host)
		assert.Empty(t, s.cookie, "the reader's cookies stay with the AM")
	}

	// Spellings of a public path are that path, forwarded as the rule saw it (or redirected to it by
	// the AM's router); spellings of another path are that other one.
	for _, p := range []string{"/flink//jobs//overview/", "/flink/jobs/./overview", "/flink/jobs%2Foverview", "/flink/x/", "/flink/jobs/overview/"} {
		rec := do(false, http.MethodGet, p, "", "")
		if rec.Code == http.StatusTemporaryRedirect || rec.Code == http.StatusMovedPermanently {
			assert.Contains(t, []string{"/flink/jobs/overview", "/flink/jobs/overview/"}, rec.Header().Get("Location"), p)
			continue
		}
		assert.Equal(t, http.StatusOK, rec.Code, "%s: %s", p, rec.Body)
	}
	for _, s := range reset() {
		assert.Contains(t, []string{"/jobs/overview", "/x"}, s.path)
	}
	for _, p := range []string{"/flink/jars/1/plan?entry-class=Evil", "/flink/jobs/overview/..%2F..%2Fjars", "/flink/jobs%2F..%2Fjars",
		"/flink/x/..%2f..%2fjars", "/flink/JOBS/overview", "/flink/jobs/overview/x", "/flink/jars%3Fx", "/flink/x%00"} {
		rec := do(false, http.MethodGet, p, "", "")
		assert.Contains(t, []int{http.StatusForbidden, http.StatusTemporaryRedirect, http.StatusMovedPermanently}, rec.Code, "a stranger's %s: %s", p, rec.Body)
		if loc := rec.Header().Get("Location"); loc != "" {
			assert.NotContains(t, []string{"/flink/jobs/overview", "/flink/x"}, loc, "%s is not the public path", p)
		}
		rec = do(true, http.MethodGet, p, "", "")
		assert.Contains(t, []int{http.StatusUnauthorized, http.StatusTemporaryRedirect, http.StatusMovedPermanently}, rec.Code, "a stranger's %s over HTTPS: %s", p, rec.Body)
	}
	require.Empty(t, reset(), "a stranger's read of a path that is not public reached the framework")
	rec := do(true, http.MethodGet, "/flink/jars/1/plan?entry-class=Evil", owner, "")
	assert.Equal(t, http.StatusOK, rec.Code, "the owner reaches every path: %s", rec.Body)
	assert.Equal(t, "/jars/1/plan", reset()[0].path)

	// A read carries no body for a stranger; the owner's is bounded.
	rec = do(false, http.MethodGet, "/flink/jobs/overview", "", "a body")
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
	rec = do(true, http.MethodGet, "/flink/jobs/overview", owner, strings.Repeat("x", 65))
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
	require.Empty(t, reset(), "a read's body reached the framework")

	for _, m := range []string{http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		rec := do(false, m, "/flink/jobs/overview", owner, "jar")
		assert.Equal(t, http.StatusForbidden, rec.Code, "%s on the plain listener with the secret: %s", m, rec.Body)
		assert.Contains(t, rec.Body.String(), "https://am:8443/flink/jobs/overview")
		for _, auth := range []string{"", "Bearer wrong", "s3cret-application-secret"} {
			rec := do(true, m, "/flink/jobs/j1", auth, "")
			assert.Equal(t, http.StatusUnauthorized, rec.Code, "%s over HTTPS with %q: %s", m, auth, rec.Body)
		}
	}
	require.Empty(t, reset(), "a refused write reached the framework")

	rec = do(true, http.MethodPatch, "/flink/jobs/j1?mode=cancel", owner, "")
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = do(true, http.MethodPost, "/flink/jars/upload", owner, strings.Repeat("x", 65))
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "a body over MaxBody: %s", rec.Body)
	g = reset()
	require.Len(t, g, 1, "the owner's cancel, not the oversized upload")
	assert.Equal(t, seen{method: http.MethodPatch, path: "/jobs/j1", query: "mode=cancel", host: tu.Host, encoding: "gzip"}, g[0], "the secret is not forwarded")

	// Withheld: no one; logs: the owner's, redacted, asked for without compression.
	for _, p := range []string{"/flink/launch.sh", "/flink/launch.sh/", "/flink/x%2F..%2Flaunch.sh", "/flink/launch.sh%2F"} {
		rec = do(true, http.MethodGet, p, owner, "")
		assert.Equal(t, http.StatusForbidden, rec.Code, "the owner's %s: %s", p, rec.Body)
		assert.Contains(t, rec.Body.String(), "the launch script stays on the node")
		rec = do(false, http.MethodGet, p, "", "")
		assert.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	}
	require.Empty(t, reset(), "a withheld path reached the framework")
	rec = do(false, http.MethodGet, "/flink/log", "", "")
	assert.Equal(t, http.StatusForbidden, rec.Code, "a stranger's log: %s", rec.Body)
	rec = do(true, http.MethodGet, "/flink/log", owner, "")
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "INFO secret [application secret] and token [delegation token password]\n", rec.Body.String())
	rec = do(true, http.MethodGet, "/flink/big", owner, "")
	assert.NotContains(t, rec.Body.String(), "s3cret-application-secret")
	assert.NotContains(t, rec.Body.String(), password)
	assert.Equal(t, 32<<10-10+70<<10+len("[application secret]")+len("[delegation token password]"), rec.Body.Len(), "nothing else changed")
	req := httptest.NewRequest(http.MethodGet, "/flink/log", nil)
	req.Header.Set("Authorization", owner)
	req.Header.Set("Range", "bytes=20-30") // a range that would cut the secret in two
	rec = httptest.NewRecorder()
	Handler(fakeBackend(newFakeEvents()), Options{Secret: "s3cret-application-secret", Secure: true, Proxy: proxy, Redact: red}).ServeHTTP(rec, req)
	assert.Equal(t, "INFO secret [application secret] and token [delegation token password]\n", rec.Body.String(), "a log is redacted whole")
	g = reset()
	require.Len(t, g, 3)
	assert.Equal(t, "identity", g[0].encoding, "a log is asked for as it is, which the AM can redact")

	// Nothing in a request names another host: an absolute-form target or a path that climbs out of
	// the prefix still reaches the framework's address, at its own path.
	rec = do(false, http.MethodGet, "/flink/../api/v1/status", "", "")
	assert.NotContains(t, rec.Body.String(), `"jobs"`, "a path out of the prefix is the AM's, not the framework's")
	rec = do(false, http.MethodGet, "http://evil.example.com/flink/x", "", "")
	assert.Equal(t, http.StatusOK, rec.Code)
	g = reset()
	require.Len(t, g, 1)
	assert.Equal(t, tu.Host, g[0].host)
	assert.Equal(t, "/x", g[0].path)

	// A framework that says nothing of its paths is its owner's alone.
	proxy.Access = nil
	rec = do(false, http.MethodGet, "/flink/jobs/overview", "", "")
	assert.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	proxy.Access = testAccess

	// A framework that does not answer is a 502 naming it.
	target.Close()
	rec = do(false, http.MethodGet, "/flink/", "", "")
	assert.Equal(t, http.StatusBadGateway, rec.Code)
	assert.Contains(t, rec.Body.String(), "Flink UI")
}

// TestProxyCSPIsWhatTheFrameworkDeclares: the policy of a framework's pages allows inline scripts
// and styles only as the framework declares them (framework.Proxy): none by default; each inline
// handler by the hash of its text, the hash a browser computes of the attribute. A framework that
// declares the handler onload="this.media='all'" and inline styles (Flink's dashboard) gets the policy
// the AM served its pages before the framework declared it.
func TestProxyCSPIsWhatTheFrameworkDeclares(t *testing.T) {
	assert.Equal(t, "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'self'",
		proxyCSP(&framework.Proxy{}))
	assert.Equal(t, "default-src 'self'; script-src 'self' 'unsafe-hashes' 'sha256-MhtPZXr7+LpJUY5qtMutB+qWfQtMaPccfe7QXtCcEYc='; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'self'",
		proxyCSP(&framework.Proxy{InlineHandlers: []string{"this.media='all'"}, InlineStyles: true}))
}
