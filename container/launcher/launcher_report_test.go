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

	"github.com/yarn-am/yarn-am/am/contract"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

func TestHTTPReporterPostsWithSecretAndRetries(t *testing.T) {
	var calls atomic.Int32
	var got contract.ContainerReport
	var auth, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		auth, path = r.Header.Get("Authorization"), r.URL.Path
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &got)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	dir := t.TempDir()
	creds := yarnrpc.NewCredentials()
	creds.Secrets[contract.SecretAlias] = []byte("abc123")
	creds.Tokens["amrm"] = yarnrpc.Token{Identifier: []byte("x"), Kind: "YARN_AM_RM_TOKEN"}
	tokenFile := filepath.Join(dir, "container_tokens")
	require.NoError(t, creds.WriteFile(tokenFile))
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", tokenFile)
	t.Setenv(contract.EnvReportURL, srv.URL+"/api/v1/containers")

	rep, err := ReporterFromEnv("")
	require.NoError(t, err)
	hr := rep.(*HTTPReporter)
	hr.Backoff = time.Millisecond
	err = rep.Report(context.Background(), Report{ContainerID: "container_1_0001_01_000002",
		Infos: map[string][]resources.Info{"gpu": {{"index": "3"}}}})
	require.NoError(t, err)
	assert.EqualValues(t, 2, calls.Load(), "a 503 is retried")
	assert.Equal(t, "Bearer abc123", auth)
	assert.Equal(t, "/api/v1/containers/container_1_0001_01_000002/report", path)
	assert.Equal(t, map[string][]resources.Info{"gpu": {{"index": "3"}}}, got.Infos)
}

func TestHTTPReporterRefusalIsNotRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, `{"error":"bad secret"}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	r := &HTTPReporter{BaseURL: srv.URL + "/", Secret: "wrong", Backoff: time.Millisecond}
	err := r.Report(context.Background(), Report{ContainerID: "c1", FailedResource: "gpu", Failure: "no GPUs"})
	assert.ErrorContains(t, err, "the AM refused the report (401 Unauthorized)")
	assert.EqualValues(t, 1, calls.Load())
}

func TestHTTPReporterGivesUpOnDeadAM(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	r := &HTTPReporter{BaseURL: url + "/", Secret: "s", Attempts: 3, Backoff: time.Millisecond}
	err := r.Report(context.Background(), Report{ContainerID: "c1"})
	assert.ErrorContains(t, err, "failed after 3 attempts")
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
	_, err = ReporterFromEnv("http://h:1/api/v1/containers/")
	assert.ErrorContains(t, err, `has no secret "yarn-am.secret"`)

	err = (&HTTPReporter{BaseURL: "http://h/"}).Report(context.Background(), Report{})
	assert.ErrorContains(t, err, "no container id")
}
