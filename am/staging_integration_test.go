//go:build integration

package am_test

// The AM's own files and the per-user cache on the mini cluster (docs/job-file.md#the-am-container,
// docs/job-file.md#visibility-and-the-cache): the real bin/yarn-am submits, the tests check the
// outcome through yarn-am's status and submit's output.

import (
	"archive/tar"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// writeFiles writes name -> content into a new temp dir (mode 0755 for names ending in .sh).
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for n, c := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(n, ".sh") {
			mode = 0o755
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(c), mode))
	}
	return dir
}

func TestStagingDriverScriptShippedWithAMFiles(t *testing.T) {
	e2e.Env(t)
	dir := writeFiles(t, map[string]string{
		"driver.sh": "#!/bin/bash\ntest \"$DRIVER_GREETING\" = hello || { echo \"DRIVER_GREETING=$DRIVER_GREETING\" >&2; exit 5; }\ntest -f conf.txt || exit 6\necho driver ok\n",
		"conf.txt":  "x\n",
		"job.toml": `name = "staging-am-files"
[am]
files = ["driver.sh", "conf.txt"]
[am.env]
DRIVER_GREETING = "hello"
[taskexecutor]
instances = 1
command = "sleep 3600"
memory = 256
`,
	})
	r := e2e.YarnAM(t, 5*time.Minute, "submit", filepath.Join(dir, "job.toml"), "--driver", "./driver.sh")
	require.Equal(t, 0, r.Code, "the driver shipped with [am] files runs and succeeds:\n%s", r)
	id := e2e.SubmittedID(r.Stdout + r.Stderr)
	require.NotEmpty(t, id, r.String())
	assert.Equal(t, "SUCCEEDED", e2e.Status(t, id).Report.FinalStatus)
}

// TestStagingFailingDriverStderrReachesItsOwner: a failing driver's last stderr lines are its owner's
// (docs/running.md#the-workers-own-error): the application's diagnostics, which anyone who may list
// applications reads, say only that the driver exited and where the lines are; the owner reads them
// in the AM container's am.stderr (yarn-am logs) and, when its stream caught the finished event, in
// the attached submit's output.
func TestStagingFailingDriverStderrReachesItsOwner(t *testing.T) {
	e2e.Env(t)
	dir := writeFiles(t, map[string]string{
		"driver.sh": "#!/bin/bash\necho 'noise before' >&2\necho 'driver-marker: the model path /nope does not exist' >&2\nexit 3\n",
		"job.toml": `name = "staging-driver-fails"
[am]
files = ["driver.sh"]
[taskexecutor]
instances = 1
command = "sleep 3600"
memory = 256
`,
	})
	for _, tc := range []struct{ driver, want string }{
		{"./driver.sh", "driver-marker: the model path /nope does not exist"},
		{"./not-shipped.sh", "./not-shipped.sh: No such file or directory"},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			r := e2e.YarnAM(t, 5*time.Minute, "submit", filepath.Join(dir, "job.toml"), "--driver", tc.driver)
			require.NotEqual(t, 0, r.Code, r.String())
			id := e2e.SubmittedID(r.Stdout + r.Stderr)
			require.NotEmpty(t, id, r.String())
			d := e2e.Status(t, id)
			assert.Equal(t, "FAILED", d.Report.FinalStatus)
			assert.Contains(t, d.Report.Diagnostics, "exited with code")
			assert.NotContains(t, d.Report.Diagnostics, tc.want, "the driver's stderr is not published in the diagnostics")
			assert.Contains(t, d.Report.Diagnostics, "shown to the application's owner")
			t.Logf("the attached submit showed the driver's line: %v", strings.Contains(r.Stdout+r.Stderr, tc.want))
			deadline := time.Now().Add(time.Minute)
			for {
				l := e2e.YarnAM(t, time.Minute, "logs", id, "--file", "am.stderr")
				if l.Code == 0 && strings.Contains(l.Stdout, tc.want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("yarn-am logs %s --file am.stderr does not show the driver's line %q:\n%s", id, tc.want, l)
				}
				time.Sleep(2 * time.Second) // the NodeManager may still be aggregating the AM container's logs
			}
		})
	}
}

// writeTarGz writes a tar.gz holding one file.
func writeTarGz(t *testing.T, p, name string, content []byte) {
	t.Helper()
	f, err := os.Create(p)
	require.NoError(t, err)
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}))
	_, err = tw.Write(content)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

func TestStagingSecondSubmitReusesTheCachedArchive(t *testing.T) {
	e2e.Env(t)
	tok := make([]byte, 16)
	_, err := rand.Read(tok)
	require.NoError(t, err)
	token := hex.EncodeToString(tok) // new content: the first submit cannot find it in the cache
	dir := writeFiles(t, map[string]string{"job.toml": `name = "staging-cache"
[taskexecutor]
instances = 2
command = "test \"$(cat pyenv/token.txt)\" = ` + token + `"
memory = 256
max-failures = 0
archives = ["pyenv.tar.gz#pyenv"]
`})
	writeTarGz(t, filepath.Join(dir, "pyenv.tar.gz"), "token.txt", []byte(token))

	uploadedArchive := regexp.MustCompile(`uploaded cache/[0-9a-f]{64}-[0-7]{3}/pyenv\.tar\.gz`)
	first := e2e.YarnAM(t, 5*time.Minute, "submit", filepath.Join(dir, "job.toml"))
	require.Equal(t, 0, first.Code, "the TaskExecutors find the archive unpacked:\n%s", first)
	assert.Regexp(t, uploadedArchive, first.Stdout+first.Stderr, "the first submit uploads the archive to the cache")

	second := e2e.YarnAM(t, 5*time.Minute, "submit", filepath.Join(dir, "job.toml"))
	require.Equal(t, 0, second.Code, "the TaskExecutors find the cached archive unpacked:\n%s", second)
	out := second.Stdout + second.Stderr
	assert.Contains(t, out, "reused pyenv.tar.gz from the cache (")
	assert.NotRegexp(t, uploadedArchive, out, "nothing is uploaded to the cache the second time")
	assert.NotContains(t, out, "uploaded cache/")
	// The yarn-am binary goes through the cache too: the second submit uploads only the job file,
	// the site files and the manifest (docs/job-file.md#visibility-and-the-cache).
	assert.Contains(t, out, "reused yarn-am from the cache (")
	summary := regexp.MustCompile(`staged in [0-9.]+ s: ([0-9.]+) (B|KiB|MiB) uploaded, ([0-9.]+) (KiB|MiB) reused from the cache`).FindStringSubmatch(out)
	require.NotNil(t, summary, out)
	assert.NotEqual(t, "MiB", summary[2], "less than a MiB uploaded the second time: %s", summary[0])
	t.Logf("measured: second submit: %s", summary[0])
	id := e2e.SubmittedID(out)
	require.NotEmpty(t, id, second.String())
	assert.Equal(t, "SUCCEEDED", e2e.Status(t, id).Report.FinalStatus)
}

// visibility = "public" for a world-readable archive on HDFS: the NodeManagers localise it; the same
// archive under a directory others cannot search is refused by submit before anything is submitted.
func TestStagingPublicArchiveOnHDFS(t *testing.T) {
	e2e.Env(t)
	c := e2e.MiniCluster(t)
	tok := make([]byte, 16)
	_, err := rand.Read(tok)
	require.NoError(t, err)
	token := hex.EncodeToString(tok)
	local := filepath.Join(t.TempDir(), "pub.tar.gz")
	writeTarGz(t, local, "token.txt", []byte(token))
	base := "/yarn-am-public-test-" + token[:8]
	t.Cleanup(func() { _ = c.FS.RemoveAll(base) })
	require.NoError(t, c.FS.MkdirAll(base+"/envs", 0o755))
	c.Put(t, local, base+"/envs/pub.tar.gz", "pub")
	require.NoError(t, c.FS.Chmod(base+"/envs/pub.tar.gz", 0o644))

	job := func(name string) string {
		return filepath.Join(writeFiles(t, map[string]string{"job.toml": `name = "` + name + `"
[taskexecutor]
instances = 1
command = "test \"$(cat pub/token.txt)\" = ` + token + `"
memory = 256
max-failures = 0
archives = ["` + c.FSURI + base + `/envs/pub.tar.gz#pub"]
visibility = "public"
`}), "job.toml")
	}
	r := e2e.YarnAM(t, 5*time.Minute, "submit", job("staging-public"))
	require.Equal(t, 0, r.Code, "the NodeManager localises the public archive:\n%s", r)

	require.NoError(t, c.FS.Chmod(base+"/envs", 0o750))
	r = e2e.YarnAM(t, 2*time.Minute, "submit", job("staging-public-refused"))
	require.NotEqual(t, 0, r.Code, r.String())
	out := r.Stdout + r.Stderr
	assert.Contains(t, out, `visibility = "public"`)
	assert.Contains(t, out, "the directory "+base+"/envs above")
	assert.Contains(t, out, "not searchable by all users")
	assert.NotContains(t, out, "submitted application_", "nothing is submitted")
}
