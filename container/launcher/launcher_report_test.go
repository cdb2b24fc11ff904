package launcher

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

func TestHTTPReporterPostsWithSecretAndRetries(t *testing.T) {
	var calls atomic.Int32
	var got contract.ContainerReport
	var auth, path string
	srv, ca := amtlstest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		auth, path = r.Header.Get("Authorization"), r.URL.Path
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &got)
		w.WriteHeader(http.StatusNoContent)
	}))

	dir := t.TempDir()
	creds := yarnrpc.NewCredentials()
	creds.Secrets[contract.SecretAlias] = []byte("abc123")
	creds.Secrets[contract.TLSCACertAlias] = ca
	creds.Tokens["amrm"] = yarnrpc.Token{Identifier: []byte("x"), Kind: "YARN_AM_RM_TOKEN"}
	tokenFile := filepath.Join(dir, "container_tokens")
	require.NoError(t, creds.WriteFile(tokenFile))
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", tokenFile)
	t.Setenv(contract.EnvReportURL, srv.URL+"/api/v1/containers")

	rep, err := ReporterFromEnv("")
	require.NoError(t, err)
	hr := rep.(*HTTPReporter)
	hr.Backoff = time.Millisecond
	topo := map[string]contract.GPUTopology{"gpu": {Link: "PXB", Best: "PIX", GPUs: []contract.GPUTopologyRow{
		{Index: "0", NUMA: "0", Links: []string{"X", "PXB"}}, {Index: "3", NUMA: "-", Links: []string{"PXB", "X"}}}}}
	err = rep.Report(context.Background(), Report{ContainerID: "container_1_0001_01_000002",
		Infos: map[string][]resources.Info{"gpu": {{"index": "3"}}}, Topology: topo})
	require.NoError(t, err)
	assert.EqualValues(t, 2, calls.Load(), "a 503 is retried")
	assert.Equal(t, "Bearer abc123", auth)
	assert.Equal(t, "/api/v1/containers/container_1_0001_01_000002/report", path)
	assert.Equal(t, map[string][]resources.Info{"gpu": {{"index": "3"}}}, got.Infos)
	assert.Equal(t, topo, got.Topology, "the GPU topology reaches the AM")
}

func pinned(t *testing.T, ca []byte) *http.Client {
	c, err := amtls.HTTPClient(ca, 5*time.Second)
	require.NoError(t, err)
	return c
}

func TestHTTPReporterRefusalIsNotRetried(t *testing.T) {
	var calls atomic.Int32
	srv, ca := amtlstest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, `{"error":"bad secret"}`, http.StatusUnauthorized)
	}))
	r := &HTTPReporter{BaseURL: srv.URL + "/", Secret: "wrong", Backoff: time.Millisecond, Client: pinned(t, ca)}
	err := r.Report(context.Background(), Report{ContainerID: "c1", FailedResource: "gpu", Failure: "no GPUs"})
	assert.ErrorContains(t, err, "the AM refused the report (401 Unauthorized)")
	assert.EqualValues(t, 1, calls.Load())
}

func TestHTTPReporterGivesUpOnDeadAM(t *testing.T) {
	srv, ca := amtlstest.Server(t, http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	r := &HTTPReporter{BaseURL: url + "/", Secret: "s", Attempts: 3, Backoff: time.Millisecond, Client: pinned(t, ca)}
	err := r.Report(context.Background(), Report{ContainerID: "c1"})
	assert.ErrorContains(t, err, "failed after 3 attempts")
}

// The launcher sends the secret only over HTTPS to a server whose certificate the application's
// authority issued: an impostor with another self-signed authority on the AM's address never sees an
// Authorization header, nor does a plain http:// URL.
func TestReporterSendsTheSecretOnlyToThePinnedAM(t *testing.T) {
	var sawAuth atomic.Int32
	spy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			sawAuth.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	_, appCA := amtlstest.Server(t, http.NotFoundHandler()) // the application's authority
	impostor, _ := amtlstest.Server(t, spy)                 // another authority, same host
	plain := httptest.NewServer(spy)
	defer plain.Close()

	dir := t.TempDir()
	creds := yarnrpc.NewCredentials()
	creds.Secrets[contract.SecretAlias] = []byte("abc123")
	creds.Secrets[contract.TLSCACertAlias] = appCA
	tokenFile := filepath.Join(dir, "container_tokens")
	require.NoError(t, creds.WriteFile(tokenFile))
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", tokenFile)

	rep, err := ReporterFromEnv(impostor.URL + "/api/v1/containers/")
	require.NoError(t, err)
	rep.(*HTTPReporter).Attempts, rep.(*HTTPReporter).Backoff = 2, time.Millisecond
	err = rep.Report(context.Background(), Report{ContainerID: "c1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "certificate")

	_, err = ReporterFromEnv(plain.URL + "/api/v1/containers/")
	assert.ErrorContains(t, err, "not https://")
	err = (&HTTPReporter{BaseURL: plain.URL + "/", Secret: "abc123", Client: http.DefaultClient}).Report(context.Background(), Report{ContainerID: "c1"})
	assert.ErrorContains(t, err, "not https://")
	assert.Zero(t, sawAuth.Load(), "no server but the pinned AM ever saw the Authorization header")

	// Without the authority in the token file there is nothing to trust: no reporter.
	delete(creds.Secrets, contract.TLSCACertAlias)
	require.NoError(t, creds.WriteFile(tokenFile))
	_, err = ReporterFromEnv(impostor.URL + "/api/v1/containers/")
	assert.ErrorContains(t, err, contract.TLSCACertAlias)
}

func TestReporterFromEnv(t *testing.T) {
	t.Setenv(contract.EnvReportURL, "")
	rep, err := ReporterFromEnv("")
	require.NoError(t, err)
	assert.IsType(t, NopReporter{}, rep, "outside an AM-launched container nothing is reported")

	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", "")
	_, err = ReporterFromEnv("http://h:1/api/v1/containers/")
	assert.ErrorContains(t, err, "HADOOP_TOKEN_FILE_LOCATION is not")

	f := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, yarnrpc.NewCredentials().WriteFile(f))
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", f)
	_, err = ReporterFromEnv("https://h:1/api/v1/containers/")
	assert.ErrorContains(t, err, `has no secret "yarn-am.secret"`)

	err = (&HTTPReporter{BaseURL: "http://h/"}).Report(context.Background(), Report{})
	assert.ErrorContains(t, err, "no container id")
}
