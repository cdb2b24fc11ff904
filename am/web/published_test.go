package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
)

// What a framework published for its TaskExecutors (a Flink JobManager's RPC address) names a port
// its process bound: the AM serves it with the secret over HTTPS only, never to the anonymous reader
// of the plain tracking URL, and {} before anything was published.
func TestPublishedNeedsTheSecretOverHTTPS(t *testing.T) {
	values := map[string]string{}
	do := func(secure bool, auth string) *httptest.ResponseRecorder {
		o := Options{Secret: "s3cret", Secure: secure, SecureAPI: "https://am:8443/api/v1/", Published: func() map[string]string { return values }}
		req := httptest.NewRequest(http.MethodGet, contract.FrameworkPublishedPath, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		Handler(fakeBackend(newFakeEvents()), o).ServeHTTP(rec, req)
		return rec
	}
	rec := do(false, "Bearer s3cret")
	assert.Equal(t, http.StatusForbidden, rec.Code, "never on the plain listener: %s", rec.Body)
	assert.Contains(t, rec.Body.String(), "https://am:8443/api/v1/framework/published")
	rec = do(true, "")
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	rec = do(true, "Bearer wrong")
	assert.Equal(t, http.StatusUnauthorized, rec.Code)

	rec = do(true, "Bearer s3cret")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `{}`, rec.Body.String(), "nothing published yet")
	values["flink.jobmanager.rpc"] = "nm1:41234"
	rec = do(true, "Bearer s3cret")
	require.Equal(t, http.StatusOK, rec.Code)
	var got map[string]string
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, map[string]string{"flink.jobmanager.rpc": "nm1:41234"}, got)
}

type notStarted struct{}

func (notStarted) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, &framework.NotStartedError{What: "the JobManager has not started: its ports are not bound yet"}
}

// A framework's server that has not started yet (a JobManager whose ports are not bound) is a 503
// with the framework's words, which a retry outlives, not a 502 of a server that failed.
func TestProxyAnswers503BeforeTheServerStarted(t *testing.T) {
	tu, err := url.Parse("https://127.0.0.1")
	require.NoError(t, err)
	o := Options{Secret: "s3cret", Proxy: &framework.Proxy{Path: "flink", Name: "Flink UI", Target: tu, Transport: notStarted{}, Access: testAccess}}
	rec := httptest.NewRecorder()
	Handler(fakeBackend(newFakeEvents()), o).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/flink/jobs/overview", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "Flink UI: the JobManager has not started")
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
}
