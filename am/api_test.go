package am

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

const testSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

type nopRM struct{ rm }
type nopNM struct{ nm }

func apiAM(t *testing.T) *am {
	t.Helper()
	m, err := newAM(config{App: "application_1_0001", Spec: decision.Spec{Instances: 2, Capability: te, MaxFailures: 3},
		LaunchContext: &hadooppb.ContainerLaunchContextProto{}, RM: nopRM{}, NM: nopNM{}, Log: quietLog})
	require.NoError(t, err)
	m.book.Asks.Apply(decision.Plan{Asks: []decision.Ask{{ID: 1, Want: 1, AtRM: 1}}, NextAskID: 2}, t0, te)
	m.rec.Adopted("c1", "n1:1", te, nil)
	c2 := m.rec.Adopted("c2", "n2:1", te, nil)
	m.rec.Completed(c2, decision.Exit{Status: 3, Class: contract.ExitFailed, Diagnostics: "Exit code: 3"})
	m.state = "RUNNING"
	return m
}

func post(t *testing.T, h http.Handler, url, auth, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestAPIReportNeedsTheSecret(t *testing.T) {
	m := apiAM(t)
	h := m.Handler(testSecret)
	body := `{"infos":{"gpu":[{"index":"2"}]}}`
	assert.Equal(t, http.StatusUnauthorized, post(t, h, "/api/v1/containers/c1/report", "", body).Code)
	assert.Equal(t, http.StatusUnauthorized, post(t, h, "/api/v1/containers/c1/report", "Bearer wrong", body).Code)
	assert.Equal(t, http.StatusUnauthorized, post(t, h, "/api/v1/containers/c1/report", testSecret, body).Code, "the Bearer scheme is required")
	assert.Nil(t, m.rec.Get("c1").Infos, "a refused report changes nothing")

	assert.Equal(t, http.StatusNoContent, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, body).Code)
	assert.Equal(t, map[string][]resources.Info{"gpu": {{"index": "2"}}}, m.rec.Get("c1").Infos)

	assert.Equal(t, http.StatusNotFound, post(t, h, "/api/v1/containers/c9/report", "Bearer "+testSecret, body).Code)
	assert.Equal(t, http.StatusBadRequest, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, "{").Code)
	get := httptest.NewRequest(http.MethodGet, "/api/v1/containers/c1/report", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, get)
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}

func TestAPIDiscoveryFailureReport(t *testing.T) {
	m := apiAM(t)
	rec := post(t, m.Handler(testSecret), "/api/v1/containers/c1/report", "Bearer "+testSecret,
		`{"failedResource":"gpu","failure":"found 0 GPUs, need 1"}`)
	assert.Equal(t, http.StatusNoContent, rec.Code)
	s := m.Status()
	assert.Equal(t, "discovery failed for resource gpu: found 0 GPUs, need 1", s.Containers[0].Diagnostics)
}

func TestAPIStatus(t *testing.T) {
	m := apiAM(t)
	h := m.Handler(testSecret)
	post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, `{"infos":{"gpu":[{"index":"0"}]}}`)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/status", nil))
	require.Equal(t, http.StatusOK, rec.Code, "reads need no secret")
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var got map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, "application_1_0001", got["app"])
	assert.Equal(t, "RUNNING", got["state"])
	assert.Equal(t, map[string]any{"requested": 1.0, "allocated": 0.0, "running": 1.0, "completed": 1.0, "failed": 1.0}, got["counts"])
	req := got["requirement"].(map[string]any)
	assert.Equal(t, 2.0, req["instances"])
	assert.Equal(t, map[string]any{"memory-mb": 512.0, "vcores": 1.0, "yarn.io/gpu": 1.0}, req["resources"])
	cs := got["containers"].([]any)
	require.Len(t, cs, 2)
	c1, c2 := cs[0].(map[string]any), cs[1].(map[string]any)
	assert.Equal(t, map[string]any{"gpu": []any{map[string]any{"index": "0"}}}, c1["infos"])
	assert.Equal(t, "RUNNING", c1["state"])
	assert.NotContains(t, c1, "exitStatus")
	assert.Equal(t, 3.0, c2["exitStatus"])
	assert.Equal(t, "failed", c2["exitClass"])
	assert.Equal(t, "n2:1", c2["node"])
	assert.NotContains(t, rec.Body.String(), testSecret)
}

func TestLaunchContext(t *testing.T) {
	l := taskExecutorLaunch{
		Manifest: []contract.LocalResource{{Alias: "nvidia-smi", URL: "hdfs://127.0.0.1:9000/user/u/.yarn-am/app/nvidia-smi", Size: 10, Timestamp: 5, Type: "FILE"},
			{Alias: "data", URL: "hdfs://127.0.0.1:9000/d.tgz", Size: 1, Timestamp: 2, Type: "ARCHIVE"},
			{Alias: "yarn-am", URL: "hdfs://127.0.0.1:9000/user/u/.yarn-am/app/yarn-am", Size: 7, Timestamp: 3}},
		Staged:  fakeStaged{},
		JobFile: "job.toml", Defines: []string{"external-resource.gpu.param.discovery-script.path=my script.sh"},
		Command: `echo "$CUDA_VISIBLE_DEVICES" it's`, Env: map[string]string{"PATH": "$PWD:/usr/bin"},
		ReportURL: "http://h:1/api/v1/containers/",
	}
	l.Creds = credsWithAMRM()
	clc, err := l.LaunchContext()
	require.NoError(t, err)
	lr := map[string]*hadooppb.LocalResourceProto{}
	for _, e := range clc.GetLocalResources() {
		lr[e.GetKey()] = e.GetValue()
	}
	assert.Len(t, lr, 4, "manifest + job.toml; yarn-am from the manifest is not added twice")
	assert.Equal(t, hadooppb.LocalResourceTypeProto_ARCHIVE, lr["data"].GetType())
	assert.Equal(t, "/user/u/.yarn-am/app/nvidia-smi", lr["nvidia-smi"].GetResource().GetFile())
	assert.EqualValues(t, 9000, lr["nvidia-smi"].GetResource().GetPort())
	assert.EqualValues(t, 10, lr["nvidia-smi"].GetSize())
	assert.EqualValues(t, 99, lr["job.toml"].GetSize(), "staged files are looked up in the staging directory")
	env := map[string]string{}
	for _, e := range clc.GetEnvironment() {
		env[e.GetKey()] = e.GetValue()
	}
	assert.Equal(t, map[string]string{"PATH": "$PWD:/usr/bin", contract.EnvReportURL: "http://h:1/api/v1/containers/",
		contract.EnvDefines: contract.EncodeDefines(l.Defines)}, env, "the -D values travel in the environment")
	require.Len(t, clc.GetCommand(), 1)
	assert.Equal(t, `./yarn-am launch -f job.toml -- /bin/bash -c 'echo \"\$CUDA_VISIBLE_DEVICES\" it'\\''s' 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr`, clc.GetCommand()[0],
		"no -D value on the command line, which every user of the node can read")
	assert.NotContains(t, string(clc.GetTokens()), "amrm-id", "TaskExecutors never get the AM-RM token")
	assert.Contains(t, string(clc.GetTokens()), "yarn-am.secret")
}

func TestLauncherCommandThroughBash(t *testing.T) {
	// What YARN's launch script does with the command: exec /bin/bash -c "<command>". Check that the
	// user's command arrives at the inner bash unchanged.
	cmd := contract.LauncherCommand("job.toml", "", `printf '%s|' "$HOME" a\ b "it's" $((1+1))`)
	inner := strings.TrimPrefix(cmd, "./yarn-am launch -f job.toml -- /bin/bash -c ")
	inner = strings.TrimSuffix(inner, " 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr")
	var out bytes.Buffer
	c := execBash(`printf '%s' "` + inner + `"`)
	c.Stdout = &out
	require.NoError(t, c.Run())
	// printf of the outer layer shows the single-quoted argument the launcher's bash -c receives.
	assert.Equal(t, `'printf '\''%s|'\'' "$HOME" a\ b "it'\''s" $((1+1))'`, out.String())
}

func do(h http.Handler, method, url, auth, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, url, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// The plain listener refuses everything that takes the secret, even with the right one, naming the
// HTTPS address; its reads work.
func TestPlainListenerRefusesSecretEndpoints(t *testing.T) {
	m := apiAM(t)
	plain := web.Handler(m.Web(), web.Options{Secret: testSecret, SecureAPI: "https://h:2/api/v1/", Tokens: &tokenRefresher{hdts: []byte("x")}})
	for _, c := range []struct{ method, path, body, want string }{
		{http.MethodPost, "/api/v1/containers/c1/report", `{"infos":{"gpu":[{"index":"2"}]}}`, "https://h:2/api/v1/containers/c1/report"},
		{http.MethodPut, "/api/v1/requirements", `{"instances": 1}`, "https://h:2/api/v1/requirements"},
		{http.MethodGet, "/api/v1/tokens", "", "https://h:2/api/v1/tokens"},
		{http.MethodPost, "/api/v1/savepoint", `{"dir": "file:///tmp/sp"}`, "https://h:2/api/v1/savepoint"},
	} {
		rec := do(plain, c.method, c.path, "Bearer "+testSecret, c.body)
		assert.Equal(t, http.StatusForbidden, rec.Code, "%s %s", c.method, c.path)
		assert.Contains(t, rec.Body.String(), c.want)
	}
	assert.Nil(t, m.rec.Get("c1").Infos, "the refused report changed nothing")
	assert.Equal(t, 2, m.book.Want.Requirement(m.cfg.Spec, m.cfg.ExternalResources).Instances, "the refused PUT changed nothing")

	rec := do(plain, http.MethodGet, "/api/v1/status", "", "")
	require.Equal(t, http.StatusOK, rec.Code)
	var s contract.Status
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &s))
	assert.Equal(t, "https://h:2/api/v1/", s.SecureAPI, "status names the HTTPS API")
	assert.Equal(t, http.StatusOK, do(plain, http.MethodGet, "/api/v1/containers", "", "").Code)
	assert.Equal(t, http.StatusOK, do(plain, http.MethodGet, "/api/v1/events?format=json", "", "").Code)
}

// Every response, page or JSON, error or not, carries the browser safety headers.
func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	m := apiAM(t)
	for _, h := range []http.Handler{web.Handler(m.Web(), web.Options{Secret: testSecret, Secure: true}), web.Handler(m.Web(), web.Options{Secret: testSecret})} {
		for _, c := range []struct{ method, path string }{
			{http.MethodGet, "/"}, {http.MethodGet, "/api/v1/status"}, {http.MethodGet, "/api/v1/events?format=json"},
			{http.MethodGet, "/metrics"}, {http.MethodPut, "/api/v1/requirements"}, {http.MethodGet, "/nope"},
		} {
			rec := do(h, c.method, c.path, "", "")
			assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"), "%s %s", c.method, c.path)
			assert.Equal(t, "SAMEORIGIN", rec.Header().Get("X-Frame-Options"), "%s %s", c.method, c.path)
			assert.Equal(t, "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'self'",
				rec.Header().Get("Content-Security-Policy"), "%s %s", c.method, c.path)
		}
	}
}

// Bodies are bounded: a report over 64 KiB and a requirement over 1 MiB are refused with 413; one
// container id takes at most MaxReportsPerContainer reports.
func TestWriteBodiesAndReportsAreBounded(t *testing.T) {
	m := apiAM(t)
	h := m.Handler(testSecret)
	big := `{"failure":"` + strings.Repeat("x", contract.MaxReportBytes) + `"}`
	assert.Equal(t, http.StatusRequestEntityTooLarge, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, big).Code)
	huge := `{"instances": 1, "x": "` + strings.Repeat("x", contract.MaxRequestBytes) + `"}`
	assert.Equal(t, http.StatusRequestEntityTooLarge, do(h, http.MethodPut, "/api/v1/requirements", "Bearer "+testSecret, huge).Code)

	body := `{"infos":{"gpu":[{"index":"1"}]}}`
	for i := 1; i < contract.MaxReportsPerContainer; i++ { // the refused big one counted as the first
		require.Equal(t, http.StatusNoContent, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, body).Code, "report %d", i)
	}
	rec := post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, body)
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Contains(t, rec.Body.String(), "c1")
	assert.Equal(t, http.StatusNotFound, post(t, h, "/api/v1/containers/c9/report", "Bearer "+testSecret, body).Code, "other containers are not affected")
}

// A report is where a secret could leak into public places: a failure message quoting the worker's
// environment becomes an event (GET /api/v1/events, the UI, `yarn-am status`) and a log line. The AM
// redacts the secret there, and neither the token endpoint's answer nor any Authorization header
// reaches the log or the events.
func TestReportCarryingTheSecretIsRedacted(t *testing.T) {
	m := apiAM(t)
	var logBuf bytes.Buffer
	l := logrus.New()
	l.SetOutput(&logBuf)
	l.SetLevel(logrus.DebugLevel)
	m.log = l
	tokens := []byte("HDTS-token-bytes-" + testSecret[:8])
	h := web.Handler(m.Web(), web.Options{Secret: testSecret, Secure: true, Tokens: &tokenRefresher{hdts: tokens}})
	rep := `{"failedResource":"gpu","failure":"discovery script: YARN_AM_SECRET=` + testSecret + ` exit 1","infos":{"gpu":[{"index":"` + testSecret + `"}]}}`
	require.Equal(t, http.StatusNoContent, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, rep).Code)
	require.Equal(t, http.StatusOK, do(h, http.MethodGet, web.TokensPath, "Bearer "+testSecret, "").Code)
	require.Equal(t, http.StatusOK, do(h, http.MethodPut, "/api/v1/requirements", "Bearer "+testSecret, `{"instances": 3}`).Code)
	require.Equal(t, http.StatusUnauthorized, do(h, http.MethodPut, "/api/v1/requirements", "Bearer "+testSecret+"x", `{"instances": 3}`).Code)

	evs := do(h, http.MethodGet, "/api/v1/events?format=json", "", "").Body.String()
	st := do(h, http.MethodGet, "/api/v1/status", "", "").Body.String()
	require.Contains(t, evs, "discovery script", "the failure became an event")
	require.Contains(t, logBuf.String(), "discovery script", "and a log line")
	for what, text := range map[string]string{"events": evs, "status": st, "log": logBuf.String()} {
		assert.NotContains(t, text, testSecret, "the secret in %s", what)
		assert.NotContains(t, text, string(tokens), "the token answer in %s", what)
	}
	assert.Contains(t, evs, "[application secret]")
}
