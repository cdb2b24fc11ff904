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
)

// TestProxyReadsForAllWritesForTheOwner: a framework's UI under /<path>/ (framework.AM.Proxy) is read
// by anyone (GET, HEAD on either listener), while every other method reaches the framework only over
// HTTPS with the secret: 403 on the plain listener whatever the header says (naming the HTTPS
// address), 401 without the secret or with a wrong one. What is forwarded goes to the target's
// address with the path below the prefix, without the secret or the reader's cookies, and a body
// over the bound is cut (413) before the framework acts on it.
func TestProxyReadsForAllWritesForTheOwner(t *testing.T) {
	type seen struct{ method, path, query, auth, cookie, host, body string }
	var mu sync.Mutex
	var got []seen
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.Host, string(b)})
		mu.Unlock()
		w.Header().Set("Content-Security-Policy", "default-src *")
		w.Header().Set("Set-Cookie", "flink=1")
		_, _ = io.WriteString(w, `{"jobs":[]}`)
	}))
	defer target.Close()
	tu, err := url.Parse(target.URL)
	require.NoError(t, err)
	proxy := &framework.Proxy{Path: "flink", Name: "Flink UI", Target: tu, MaxBody: 64}
	do := func(secure bool, method, path, auth, body string) *httptest.ResponseRecorder {
		o := Options{Secret: "s3cret", Secure: secure, Proxy: proxy, SecureAPI: "https://am:8443/api/v1/"}
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		req.Header.Set("Cookie", "session=reader")
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

	for _, secure := range []bool{false, true} {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			rec := do(secure, m, "/flink/jobs/overview?x=1", "", "")
			assert.Equal(t, http.StatusOK, rec.Code, "secure=%v %s: %s", secure, m, rec.Body)
			assert.Equal(t, []string{proxyCSP}, rec.Header().Values("Content-Security-Policy"), "the AM's policy, not the framework's")
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

	for _, m := range []string{http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		rec := do(false, m, "/flink/jars/upload", "Bearer s3cret", "jar")
		assert.Equal(t, http.StatusForbidden, rec.Code, "%s on the plain listener with the secret: %s", m, rec.Body)
		assert.Contains(t, rec.Body.String(), "https://am:8443/flink/jars/upload")
		for _, auth := range []string{"", "Bearer wrong", "s3cret"} {
			rec := do(true, m, "/flink/jobs/j1", auth, "")
			assert.Equal(t, http.StatusUnauthorized, rec.Code, "%s over HTTPS with %q: %s", m, auth, rec.Body)
		}
	}
	require.Empty(t, reset(), "a refused write reached the framework")

	rec := do(true, http.MethodPatch, "/flink/jobs/j1?mode=cancel", "Bearer s3cret", "")
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = do(true, http.MethodPost, "/flink/jars/upload", "Bearer s3cret", strings.Repeat("x", 65))
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "a body over MaxBody: %s", rec.Body)
	g = reset()
	require.Len(t, g, 1, "the owner's cancel, not the oversized upload")
	assert.Equal(t, seen{method: http.MethodPatch, path: "/jobs/j1", query: "mode=cancel", host: tu.Host}, g[0], "the secret is not forwarded")

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

	// A read the framework says acts (framework.Proxy.Changes: Flink's GET .../yarn-cancel) is a
	// write: the owner's only, and the rule sees the path below the prefix.
	var asked []string
	proxy.Changes = func(r *http.Request) bool {
		asked = append(asked, r.URL.Path)
		return strings.HasSuffix(r.URL.Path, "/yarn-cancel")
	}
	for _, secure := range []bool{false, true} {
		rec := do(secure, http.MethodGet, "/flink/jobs/j1/yarn-cancel", "", "")
		assert.Contains(t, []int{http.StatusForbidden, http.StatusUnauthorized}, rec.Code, "secure=%v: %s", secure, rec.Body)
	}
	require.Empty(t, reset(), "a reader's acting GET reached the framework")
	assert.Equal(t, "/jobs/j1/yarn-cancel", asked[0])
	rec = do(true, http.MethodGet, "/flink/jobs/j1/yarn-cancel", "Bearer s3cret", "")
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = do(false, http.MethodGet, "/flink/jobs/j1", "", "")
	assert.Equal(t, http.StatusOK, rec.Code, "other reads stay open: %s", rec.Body)
	require.Len(t, reset(), 2)
	proxy.Changes = nil

	// A framework that does not answer is a 502 naming it.
	target.Close()
	rec = do(false, http.MethodGet, "/flink/", "", "")
	assert.Equal(t, http.StatusBadGateway, rec.Code)
	assert.Contains(t, rec.Body.String(), "Flink UI")
}
