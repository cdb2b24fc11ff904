//go:build integration

package flink_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract/amtls"
	browser "github.com/yarn-am/yarn-am/testkit/chromium"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/testkit/itest"
)

// The JobManager's own REST address, from the driver's line of the ports its JVM bound in the AM
// container's stdout (am.stdout).
var flinkRESTLine = regexp.MustCompile(`yarn-am flink-jobmanager: the JobManager's JVM bound RPC \S+ and REST (\S+) \(learnt`)

// jobManagerClosedToStrangers checks a running session cluster with [flink] web-submit = true
// (docs/flink.md#who-can-reach-the-jobmanager, docs/security.md#framework-uis-through-the-am):
//
//   - the JobManager's REST port answers nobody directly: HTTPS without a client certificate, with
//     one of another authority, and plain HTTP get no answer;
//   - through the AM (status's "Flink UI" link, the plain tracking port; the RM's web proxy) reads
//     work and every write is refused: a jar upload 403 on the plain port and 401 over HTTPS
//     without the secret;
//   - with the application's secret over HTTPS, as yarn-am sends it, the jar (the test job built for
//     the session's Flink line) is uploaded and run; a stranger's cancel (PATCH) and savepoint (POST)
//     of that job are refused, and so are a stranger's GET of the jar's plan and of the JobManager's
//     log files; the owner's cancel ends it.
func jobManagerClosedToStrangers(t *testing.T, id, ui, jar string) {
	t.Helper()
	var jm string
	require.Eventually(t, func() bool {
		for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
			files, _ := filepath.Glob(filepath.Join(d, id, "*", "am.stdout"))
			for _, f := range files {
				data, _ := os.ReadFile(f)
				if m := flinkRESTLine.FindSubmatch(data); m != nil {
					jm = string(m[1])
				}
			}
		}
		return jm != ""
	}, time.Minute, time.Second, "the JobManager's bound ports in the AM's stdout:\n%s", e2e.ContainerLogs(id))

	// Directly: no answer to anyone but the AM's client certificate.
	direct := func(cfg *tls.Config, scheme string) error {
		c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := c.Get(scheme + "://" + jm + "/jobs/overview")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"jobs"`) {
			return nil
		}
		return errAnswer
	}
	assert.Error(t, direct(&tls.Config{InsecureSkipVerify: true}, "https"), "HTTPS without a client certificate is answered") // #nosec: the test is the stranger
	otherCA, otherKey, err := amtls.NewAuthority("stranger")
	require.NoError(t, err)
	stranger, err := amtls.ClientCertificate(otherCA, otherKey, "stranger")
	require.NoError(t, err)
	assert.Error(t, direct(&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{stranger}}, "https"), "a client certificate of another authority is answered")
	assert.Error(t, direct(nil, "http"), "plain HTTP is answered")

	// Through the AM.
	own := ownerOf(t, id) // flink_crawl_integration_test.go
	secret, pinned, secureUI := own.secret, own.client, own.secureBase+"flink/"
	plain := &http.Client{Timeout: time.Minute}
	call := func(hc *http.Client, method, url, auth, contentType string, body []byte) (int, string) {
		req, err := http.NewRequest(method, url, bytes.NewReader(body))
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := hc.Do(req)
		require.NoError(t, err, "%s %s", method, url)
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b)
	}
	code, body := call(plain, http.MethodGet, ui+"jobs/overview", "", "", nil)
	require.Equal(t, http.StatusOK, code, "a read through the AM: %s", body)
	assert.Contains(t, body, `"jobs"`)
	rmWeb := os.Getenv("YARN_AM_RM_WEB")
	require.NotEmpty(t, rmWeb, "YARN_AM_RM_WEB (from .minicluster/env)")
	code, body = call(plain, http.MethodGet, strings.TrimRight(rmWeb, "/")+"/proxy/"+id+"/flink/jobs/overview", "", "", nil)
	require.Equal(t, http.StatusOK, code, "a read through the RM's web proxy: %s", body)
	assert.Contains(t, body, `"jobs"`)

	flinkUIInChromium(t, strings.TrimRight(rmWeb, "/")+"/proxy/"+id+"/flink/")

	upload, contentType := multipartJar(t, jar)
	code, body = call(plain, http.MethodPost, ui+"jars/upload", "", contentType, upload)
	assert.Equal(t, http.StatusForbidden, code, "a stranger's upload on the tracking port: %s", body)
	code, body = call(plain, http.MethodPost, ui+"jars/upload", secret, contentType, upload)
	assert.Equal(t, http.StatusForbidden, code, "the secret over plain HTTP: %s", body)
	code, body = call(pinned, http.MethodPost, secureUI+"jars/upload", "", contentType, upload)
	assert.Equal(t, http.StatusUnauthorized, code, "a stranger's upload over HTTPS: %s", body)
	code, body = call(pinned, http.MethodPost, secureUI+"jars/upload", "wrong", contentType, upload)
	assert.Equal(t, http.StatusUnauthorized, code, "a wrong secret: %s", body)

	// The owner: upload, run.
	code, body = call(pinned, http.MethodPost, secureUI+"jars/upload", secret, contentType, upload)
	require.Equal(t, http.StatusOK, code, "the owner's upload: %s", body)
	var up struct {
		Filename string `json:"filename"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &up), body)
	jarID := filepath.Base(up.Filename)
	require.NotEmpty(t, jarID, body)
	code, body = call(pinned, http.MethodPost, secureUI+"jars/"+jarID+"/run", secret, "application/json",
		[]byte(`{"programArgsList": ["stream"], "parallelism": 1}`))
	require.Equal(t, http.StatusOK, code, "the owner's run: %s\n%s", body, e2e.ContainerLogs(id))
	var run struct {
		JobID string `json:"jobid"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &run), body)
	require.Regexp(t, `^[0-9a-f]{32}$`, run.JobID, body)
	jobState := func() string {
		code, body := call(plain, http.MethodGet, ui+"jobs/"+run.JobID, "", "", nil)
		var j struct {
			State string `json:"state"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &j) != nil {
			return ""
		}
		return j.State
	}
	require.Eventually(t, func() bool { return jobState() == "RUNNING" }, 3*time.Minute, time.Second,
		"the uploaded job runs: %s\n%s", jobState(), e2e.ContainerLogs(id))

	// A stranger cannot cancel it or take a savepoint of it, not even with Flink's acting GETs; the
	// owner cancels it.
	for _, w := range []struct{ method, path, body string }{
		{http.MethodPatch, "jobs/" + run.JobID + "?mode=cancel", ""},
		{http.MethodPost, "jobs/" + run.JobID + "/savepoints", `{"target-directory": "file:///tmp/yarn-am-stranger", "cancel-job": true}`},
		{http.MethodPost, "jobs/" + run.JobID + "/stop", `{"targetDirectory": "file:///tmp/yarn-am-stranger"}`},
		// Flink 1.x cancels on these GETs (kept for proxies that forward GETs only).
		{http.MethodGet, "jobs/" + run.JobID + "/yarn-cancel", ""},
		{http.MethodGet, "jobs/" + run.JobID + "/yarn-stop", ""},
	} {
		code, body := call(plain, w.method, ui+w.path, "", "application/json", []byte(w.body))
		assert.Equal(t, http.StatusForbidden, code, "%s %s on the tracking port: %s", w.method, w.path, body)
		code, body = call(pinned, w.method, secureUI+w.path, "", "application/json", []byte(w.body))
		assert.Equal(t, http.StatusUnauthorized, code, "%s %s over HTTPS without the secret: %s", w.method, w.path, body)
	}
	// Nor read what is not the dashboard's: the jar's plan (Flink runs its main() for it), the
	// JobManager's log and the files beside it.
	for _, p := range []string{"jars/" + jarID + "/plan?programArg=stream", "jobmanager/logs/jobmanager.log", "jobmanager/logs/launch_container.sh"} {
		code, body := call(plain, http.MethodGet, ui+p, "", "", nil)
		assert.Equal(t, http.StatusForbidden, code, "GET %s on the tracking port: %s", p, body)
		code, body = call(pinned, http.MethodGet, secureUI+p, "", "", nil)
		assert.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, code, "GET %s over HTTPS without the secret: %s", p, body)
	}
	assert.Equal(t, "RUNNING", jobState(), "the strangers' writes did nothing")
	code, body = call(pinned, http.MethodPatch, secureUI+"jobs/"+run.JobID+"?mode=cancel", secret, "", nil)
	require.Equal(t, http.StatusAccepted, code, "the owner's cancel: %s", body)
	require.Eventually(t, func() bool { return jobState() == "CANCELED" }, 2*time.Minute, time.Second, "the owner's cancel ends the job")
}

var errAnswer = &answerError{}

type answerError struct{}

func (*answerError) Error() string { return "the JobManager answered" }

// multipartJar is jar as Flink's /jars/upload takes it (the field "jarfile").
func multipartJar(t *testing.T, jar string) ([]byte, string) {
	t.Helper()
	data, err := os.ReadFile(jar)
	require.NoError(t, err)
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, err := mw.CreateFormFile("jarfile", filepath.Base(jar))
	require.NoError(t, err)
	_, err = fw.Write(data)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	return b.Bytes(), mw.FormDataContentType()
}

// flinkUIInChromium loads Flink's own web UI at url (through the RM's web proxy and the AM) in headless
// Chromium: the dashboard draws its overview from the REST API it reads through the same path, under
// the AM's Content-Security-Policy. UPDATE_UI_SCREENSHOT=1 also writes docs/img/flink-ui.png.
//
// The DOM and the picture are taken once the dashboard drew its overview, which it does only with the
// answer of GET /overview in hand (its statistic row renders under ngIf of that answer, "Available
// Task Slots" its first card): a signal of the page, not time. Loads under a --virtual-time-budget
// hung here under CI's load (the dashboard's polls, left waiting, stop Chromium's virtual clock) and
// then took the picture after 60 s of real time, whatever was drawn (testkit/chromium).
func flinkUIInChromium(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hang
	defer cancel()
	b, err := browser.Start(ctx, e2e.ChromiumPath(t), t.TempDir(), 1280, 800)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, b.Navigate(ctx, url+"#/overview"))
	require.NoError(t, b.WaitFor(ctx, `document.body.innerText.indexOf("Available Task Slots") >= 0`),
		"Flink's dashboard drew its overview through the RM's proxy and the AM")
	dom, err := b.DOM(ctx)
	require.NoError(t, err)
	assert.Contains(t, dom, "Available Task Slots", "Flink's dashboard drew its overview through the RM's proxy and the AM")
	png, err := b.Screenshot(ctx)
	require.NoError(t, err)
	shot := filepath.Join(t.TempDir(), "flink-ui.png")
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	fi, err := os.Stat(shot)
	require.NoError(t, err)
	t.Logf("Flink web UI screenshot (through %s): %s (%d KB)", url, shot, fi.Size()/1024)
	if os.Getenv(e2e.UpdateShotEnv) == "1" {
		require.Less(t, fi.Size(), int64(200_000), "docs/img/flink-ui.png stays under 200 KB")
		require.NoError(t, os.WriteFile(filepath.Join(itest.Root(), "docs", "img", "flink-ui.png"), png, 0o644))
	}
}
