//go:build integration && secure

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// keptStderr is the launcher's stderr of every TaskExecutor of the first attempt (container ids
// _01_ but not the AM's _000001), by container id.
func keptStderr(t *testing.T, app string) map[string]string {
	out := map[string]string{}
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, app, "container_*_01_*", "stderr"))
		for _, f := range files {
			c := filepath.Base(filepath.Dir(f))
			if strings.HasSuffix(c, "_000001") {
				continue
			}
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			out[c] = string(data)
		}
	}
	return out
}

// amProcess finds the pid of the first attempt's AM (yarn-am am in container ..._01_000001).
func amProcess(app string) int {
	cid := "container_" + strings.TrimPrefix(app, "application_") + "_01_000001"
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append([]byte{0}, env...), []byte("\x00CONTAINER_ID="+cid+"\x00")) {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if args := strings.Split(string(cmd), "\x00"); len(args) > 1 && strings.HasSuffix(args[0], "yarn-am") && args[1] == "am" {
			return pid
		}
	}
	return 0
}

var refreshedRE = regexp.MustCompile(`token file refreshed`)

// shortTokenLifetime is the secure cluster's delegation token max lifetime, which the tests that
// outlive tokens need short (make test-secure starts their cluster with SECURE_RESTART_TOKENS).
func shortTokenLifetime(t *testing.T) (*yarnrpc.Config, time.Duration) {
	t.Helper()
	conf, err := yarnrpc.LoadConfigFromEnv()
	require.NoError(t, err)
	life, err := conf.GetDuration("dfs.namenode.delegation.token.max-lifetime", time.Millisecond, 0)
	require.NoError(t, err)
	require.True(t, life > 0 && life <= 90*time.Second, "dfs.namenode.delegation.token.max-lifetime = %s: this test wants the cluster started with short token lifetimes (make minicluster-up-secure TOKEN_RENEW_SEC=30 TOKEN_MAX_LIFETIME_SEC=60; make test-secure does)", life)
	return conf, life
}

// TestKeptTaskExecutorsRefreshTokensAfterAMRestart (docs/running.md#kept-taskexecutors-find-the-new-attempt):
// a keytab job on the Kerberized cluster with short token lifetimes (make test-secure starts it with
// TOKEN_RENEW_SEC=30 TOKEN_MAX_LIFETIME_SEC=60 for this test and TestLongJobOutlivesTokens). Once its
// two TaskExecutors hold the first attempt's own tokens, the AM is SIGKILLed; YARN keeps the
// TaskExecutors for attempt 2. Their launchers find attempt 2 through the staging directory and
// refresh their token files from it; past the max lifetime of every token the first attempt issued,
// the kept container's token file still holds an HDFS token the NameNode accepts, and the job
// succeeds three token lifetimes after it began, with each worker run once.
func TestKeptTaskExecutorsRefreshTokensAfterAMRestart(t *testing.T) {
	t.Parallel() // beside TestLongJobOutlivesTokens: both mostly wait out token lifetimes
	secureEnv(t)
	conf, life := shortTokenLifetime(t)

	smi, err := filepath.Abs("../../testdata/fake-nvidia-smi/nvidia-smi")
	require.NoError(t, err)
	job := `name = "kept-tokens"
max-attempts = 2
"external-resources" = "gpu"
"external-resource.gpu.amount" = 1
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
[am]
memory = 256
[taskexecutor]
instances = 2
command = "./worker --sleep ` + (3 * life).String() + `"
memory = 256
files = ["` + secureRun.wkr + `", "` + smi + `"]
[taskexecutor.env]
PATH = "$PWD:/usr/local/bin:/usr/bin:/bin"
FAKE_GPU_COUNT = "4"
YARN_AM_TOKENS_REFRESH = "2s"
`
	jf := filepath.Join(t.TempDir(), "kept-tokens.toml")
	require.NoError(t, os.WriteFile(jf, []byte(job), 0o644))
	p, kt := principalAndKeytab()

	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, secureRun.bin, "submit", jf, "--principal", p, "--keytab", kt)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	started := time.Now() // submit gets its tokens after this
	require.NoError(t, cmd.Start())
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	defer func() {
		f := filepath.Join(secureRun.dir, t.Name()+".out")
		_ = os.WriteFile(f, []byte(out.String()), 0o600)
		secureRun.mu.Lock()
		secureRun.outputs = append(secureRun.outputs, f)
		secureRun.mu.Unlock()
	}()

	var app string
	require.Eventually(t, func() bool { app = submittedApp(out.String()); return app != "" }, 2*time.Minute, 200*time.Millisecond, "submitted: %s", out.String())
	secureRun.mu.Lock()
	secureRun.apps = append(secureRun.apps, app)
	secureRun.mu.Unlock()

	// The AM is killed once both TaskExecutors' workers run and their token files hold the first
	// attempt's own tokens: an HDFS delegation token other than the one submit got, which the
	// NodeManager gave the AM container. That is at once when the AM put its fresh tokens into their
	// launch context, or at their launcher's first poll. It must happen well before submit's tokens
	// reach their maximum lifetime: the NodeManager localises attempt 2's AM container with them,
	// and past it YARN cannot start another attempt on a node that has not localised its files
	// (docs/security.md#am-restarts-past-the-maximum-lifetime).
	var submitHDFS []byte
	require.Eventually(t, func() bool {
		if am := tokenFiles(app, "container_*_01_000001"); submitHDFS == nil && len(am) == 1 {
			submitHDFS = hdfsTokenID(am[0])
		}
		files := tokenFiles(app, "container_*_01_00000[2-9]")
		logs := keptStderr(t, app)
		if submitHDFS == nil || len(files) != 2 || len(logs) != 2 {
			return false
		}
		for _, l := range logs {
			if !strings.Contains(l, "yarn-am launch: worker started") {
				return false
			}
		}
		for _, f := range files {
			if id := hdfsTokenID(f); id == nil || bytes.Equal(id, submitHDFS) {
				return false
			}
		}
		return true
	}, life*3/4-time.Since(started), 200*time.Millisecond, "within 3/4 of the submit tokens' maximum lifetime, both TaskExecutors' token files hold the first attempt's own tokens:\n%s", out.String())
	before := map[string]int{}
	for c, l := range keptStderr(t, app) {
		before[c] = len(refreshedRE.FindAllStringIndex(l, -1))
	}
	pid := amProcess(app)
	require.NotZero(t, pid, "the AM process of %s", app)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	killed := time.Now()
	t.Logf("attempt 1's AM (pid %d) SIGKILLed %s after submit, its TaskExecutors holding its own tokens; refreshes so far: %v", pid, killed.Sub(started).Round(100*time.Millisecond), before)

	// Both kept launchers find attempt 2 and refresh their token files from it.
	if !assert.Eventually(t, func() bool {
		for _, l := range keptStderr(t, app) {
			i := strings.Index(l, "the AM moved")
			if i < 0 || !refreshedRE.MatchString(l[i:]) {
				return false
			}
		}
		return true
	}, 2*time.Minute, time.Second, "the kept TaskExecutors follow attempt 2 and refresh their tokens from it") {
		for c, l := range keptStderr(t, app) {
			t.Logf("%s stderr, the last lines:\n%s", c, lastLines(l, 40))
		}
		t.Logf("the AMs' logs, the last lines:\n%s", lastLines(readAll(t, app, "am.stderr"), 60))
		t.FailNow()
	}
	t.Logf("both kept launchers refreshed from attempt 2 %s after the kill", time.Since(killed).Round(time.Second))

	// Past the max lifetime of every token attempt 1 issued, a kept container's token file holds an
	// HDFS token the NameNode accepts.
	time.Sleep(time.Until(killed.Add(life + 5*time.Second))) // waiting out a token lifetime is the point here
	kept := tokenFiles(app, "container_*_01_00000[2-9]")
	require.Len(t, kept, 2, "the kept TaskExecutors' token files")
	for _, f := range kept {
		creds, err := yarnrpc.ReadCredentialsFile(f)
		require.NoError(t, err)
		tok, ok := creds.TokenOfKind(yarnrpc.HDFSDelegationTokenKind)
		require.True(t, ok, "%s has an HDFS delegation token", f)
		addr, err := hadoop.NameNodeAddr(os.Getenv("YARN_AM_HDFS"))
		require.NoError(t, err, "YARN_AM_HDFS from the cluster's env")
		nn, err := yarnrpc.NewNameNodeClient(conf, addr, yarnrpc.TokenAuth(tok, yarnrpc.CurrentUser()), yarnrpc.FailFast(func(string) {}))
		require.NoError(t, err)
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err = nn.GetFileInfo(c, "/")
		cancel()
		_ = nn.Close()
		require.NoError(t, err, "%s: the NameNode accepts its HDFS token %s after attempt 1's tokens expired", f, time.Since(killed).Round(time.Second))
	}

	select {
	case err = <-ended:
	case <-ctx.Done():
		t.Fatalf("the job did not end: %s", out.String())
	}
	s := out.String()
	require.NoError(t, err, s)
	assert.Contains(t, s, "final status SUCCEEDED")
	assert.Greater(t, time.Since(killed), 2*life, "the job ran on for two token lifetimes after the restart")
	assert.Len(t, regexp.MustCompile(`(?m)^worker: gpu indexes`).FindAllString(readAll(t, app, "stdout"), -1), 2, "each worker ran once: the kept TaskExecutors were never replaced")
	amLog := readAll(t, app, "am.stderr")
	assert.Contains(t, amLog, "API address written to the staging directory")
	assert.Equal(t, 1, strings.Count(amLog, "YARN starts new AM attempts with expires at"), "attempt 1, which had an attempt left, said until when YARN can restart it; attempt 2 did not:\n%s", amLog)
	for c, l := range keptStderr(t, app) {
		assert.Greater(t, len(refreshedRE.FindAllStringIndex(l, -1)), before[c]+1, "%s refreshed its tokens more than once after the restart", c)
	}
}

// tokenFiles lists the token files (container_tokens) of the application's containers that match
// the glob container.
func tokenFiles(app, container string) []string {
	var files []string
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOCAL_DIRS"), ",") {
		f, _ := filepath.Glob(filepath.Join(d, "usercache", "*", "appcache", app, container, "container_tokens"))
		files = append(files, f...)
	}
	return files
}

// hdfsTokenID is the identifier of the HDFS delegation token in the token file f, nil when it holds
// no such token (yet: a file being written).
func hdfsTokenID(f string) []byte {
	creds, err := yarnrpc.ReadCredentialsFile(f)
	if err != nil {
		return nil
	}
	tok, ok := creds.TokenOfKind(yarnrpc.HDFSDelegationTokenKind)
	if !ok {
		return nil
	}
	return tok.Identifier
}
