//go:build integration

package am_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// On the mini cluster the secret never crosses plain HTTP (docs/design.md#security): the launcher is
// given the AM's https:// report URL and its report arrives; the tracking (plain) port answers 403 to
// the token, report and requirement endpoints even with the right secret; the HTTPS port answers 401
// without it; a client that does not trust the application's authority cannot talk to it at all.
func TestAMSecretTravelsOnlyOverHTTPS(t *testing.T) {
	c := e2e.MiniCluster(t)
	a := c.Submit(t, fmt.Sprintf(gpuJob, 1, `echo "report-url=$YARN_AM_REPORT_URL"; sleep 15`, 1))
	dc := c.Driver(t, a)
	base := c.PlainBase(t, a)
	st, err := dc.Status(e2e.Context(t, 10*time.Second))
	require.NoError(t, err)
	secure := st.SecureAPI
	require.True(t, strings.HasPrefix(secure, "https://"), secure)

	require.Eventually(t, func() bool {
		cs, err := dc.Containers(e2e.Context(t, 10*time.Second))
		return err == nil && len(cs) == 1 && len(cs[0].Infos["gpu"]) == 1
	}, 2*time.Minute, 200*time.Millisecond, "the launcher's report (over HTTPS) reaches the AM")

	// The TaskExecutor's own token file, as its NodeManager wrote it: the authority's certificate,
	// never its key.
	var teTokens []string
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOCAL_DIRS"), ",") {
		f, _ := filepath.Glob(filepath.Join(d, "usercache", "*", "appcache", yarnrpc.FormatApplicationID(a.ID), "container_*", "container_tokens"))
		for _, p := range f {
			if !strings.Contains(p, "_000001/") {
				teTokens = append(teTokens, p)
			}
		}
	}
	require.NotEmpty(t, teTokens, "the TaskExecutor's container_tokens under YARN_AM_NM_LOCAL_DIRS")
	for _, p := range teTokens {
		creds, err := yarnrpc.ReadCredentialsFile(p)
		require.NoError(t, err)
		assert.Equal(t, a.CACert, creds.Secrets[contract.TLSCACertAlias], "%s holds the authority's certificate", p)
		assert.NotContains(t, creds.Secrets, contract.TLSCAKeyAlias, "%s must not hold the authority's key", p)
	}

	plain := &http.Client{Timeout: 10 * time.Second}
	call := func(hc *http.Client, method, url, auth, body string) (int, string) {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := hc.Do(req)
		require.NoError(t, err, "%s %s", method, url)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	cs, err := dc.Containers(e2e.Context(t, 10*time.Second))
	require.NoError(t, err)
	report := "containers/" + cs[0].ID + "/report"
	for _, e := range []struct{ method, path, body string }{
		{http.MethodGet, "tokens", ""},
		{http.MethodPost, report, `{"infos":{"gpu":[{"index":"9"}]}}`},
		{http.MethodPut, "requirements", `{"instances": 3}`},
	} {
		code, body := call(plain, e.method, base+"api/v1/"+e.path, "Bearer "+a.Secret, e.body)
		assert.Equal(t, http.StatusForbidden, code, "plain %s %s with the secret: %s", e.method, e.path, body)
		assert.Contains(t, body, secure+e.path, "the 403 names the HTTPS address")
	}

	pinned, err := amtls.HTTPClient(a.CACert, 10*time.Second)
	require.NoError(t, err)
	for _, e := range []struct{ method, path, body string }{
		{http.MethodGet, "tokens", ""},
		{http.MethodPost, report, `{"infos":{"gpu":[{"index":"9"}]}}`},
		{http.MethodPut, "requirements", `{"instances": 3}`},
	} {
		code, body := call(pinned, e.method, secure+e.path, "", e.body)
		assert.Equal(t, http.StatusUnauthorized, code, "HTTPS %s %s without the secret: %s", e.method, e.path, body)
	}
	code, _ := call(pinned, http.MethodGet, secure+"status", "", "")
	assert.Equal(t, http.StatusOK, code, "HTTPS reads")
	_, err = (&http.Client{Timeout: 10 * time.Second}).Get(secure + "status")
	require.Error(t, err, "a client with only the system's roots does not trust the AM")

	code, body := call(plain, http.MethodGet, base+"api/v1/status", "", "")
	assert.Equal(t, http.StatusOK, code)
	assert.NotContains(t, body, a.Secret)

	r := c.Wait(t, a, 3*time.Minute)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, r.GetFinalApplicationStatus(), "diagnostics: %s", r.GetDiagnostics())
	logs := c.WorkerLogs(yarnrpc.FormatApplicationID(a.ID))
	var urls []string
	for _, out := range logs {
		for _, l := range strings.Split(out, "\n") {
			if u, ok := strings.CutPrefix(l, "report-url="); ok {
				urls = append(urls, u)
			}
		}
	}
	require.Len(t, urls, 1, "the worker printed its report URL: %v", logs)
	assert.Equal(t, secure+"containers/", urls[0], "the TaskExecutor's environment names the HTTPS API")
	amLog := c.AMLog(yarnrpc.FormatApplicationID(a.ID))
	assert.Contains(t, amLog, "resource infos reported")
	assert.Contains(t, amLog, `secure_api="`+strings.TrimSuffix(secure, "api/v1/")+`"`)
	assert.False(t, bytes.Contains([]byte(amLog), []byte(a.Secret)), "the AM log never holds the secret")
}
