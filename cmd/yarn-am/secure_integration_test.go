//go:build integration && secure

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/itest"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// The secure suite: yarn-am's client and AM on the Kerberized mini cluster (make minicluster-up-secure
// RPC_PROTECTION=...; source its env; or make test-secure, which does it for every level). Compiled
// only with the build tags integration and secure, and then it needs YARN_AM_SECURE=1 (fails without).
// TestLongJobOutlivesTokens takes over 3 minutes (the cluster's token max lifetime), so make test-secure
// selects it (-run 'Secure|LongJob') at one level. TestSecureLogsHoldNoSecrets runs last and scans what
// the others printed and logged.

// secureRun is what the tests of one run share: the binaries, and what the log scan needs.
var secureRun struct {
	once          sync.Once
	dir, bin, wkr string
	err           error

	mu      sync.Mutex
	apps    []string // application ids submitted
	outputs []string // files with the client's stdout+stderr
	secrets map[string][]byte
}

func secureEnv(t *testing.T) {
	t.Helper()
	if os.Getenv("YARN_AM_SECURE") != "1" {
		t.Fatal("YARN_AM_SECURE is not 1: the secure suite (build tag secure) needs the Kerberized mini cluster (make test-secure starts it; or make minicluster-up-secure and source its env)")
	}
	for _, k := range []string{"HADOOP_CONF_DIR", "KRB5_CONFIG", "YARN_AM_TEST_PRINCIPAL", "YARN_AM_TEST_KEYTAB", "YARN_AM_NM_LOG_DIRS", "YARN_AM_NM_LOCAL_DIRS"} {
		require.NotEmpty(t, os.Getenv(k), "YARN_AM_SECURE=1 but %s is not set: source the secure cluster's env", k)
	}
	bin, wkr := itest.Binary(t), itest.Worker(t)
	secureRun.once.Do(func() {
		secureRun.secrets = map[string][]byte{}
		secureRun.dir, secureRun.err = os.MkdirTemp("", "yarn-am-secure-")
		secureRun.bin, secureRun.wkr = bin, wkr
	})
	require.NoError(t, secureRun.err)
}

// secureGPUJob is testdata/jobs/gpu-4x1.toml (4 TaskExecutors × 1 GPU) with the freshly built worker.
func secureGPUJob(t *testing.T) string {
	data, err := os.ReadFile("../../testdata/jobs/gpu-4x1.toml")
	require.NoError(t, err)
	smi, err := filepath.Abs("../../testdata/fake-nvidia-smi/nvidia-smi")
	require.NoError(t, err)
	body := regexp.MustCompile(`(?m)^files = .*$`).ReplaceAllString(string(data), `files = ["`+secureRun.wkr+`", "`+smi+`"]`)
	p := filepath.Join(t.TempDir(), "gpu-4x1.toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

var appIDRE = regexp.MustCompile(`application_\d+_\d+`)

// submittedRE finds the application submit names as its own: its output may name others first (the
// leftover sweep, docs/running.md#nothing-left-behind).
var submittedRE = regexp.MustCompile(`submitted (application_\d+_\d+)`)

func submittedApp(out string) string {
	if m := submittedRE.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// submit runs the built yarn-am submit with env changes, harvesting the application's token files
// from the NM local dirs while it runs (for the log scan), and keeps its output.
func submit(t *testing.T, timeout time.Duration, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, secureRun.bin, append([]string{"submit"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	hctx, stopHarvest := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); harvestTokens(hctx) }()
	err := cmd.Run()
	stopHarvest()
	<-done
	code := 0
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "running yarn-am submit: %s", out.String())
		code = ee.ExitCode()
	}
	f := filepath.Join(secureRun.dir, strings.ReplaceAll(t.Name(), "/", "_")+".out")
	require.NoError(t, os.WriteFile(f, out.Bytes(), 0o600))
	secureRun.mu.Lock()
	secureRun.outputs = append(secureRun.outputs, f)
	secureRun.apps = append(secureRun.apps, appIDRE.FindAllString(out.String(), -1)...)
	secureRun.mu.Unlock()
	t.Logf("yarn-am submit %s → exit %d\n%s", strings.Join(args, " "), code, lastLines(out.String(), 8))
	return out.String(), code
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// harvestTokens collects the token passwords and secrets of every container_tokens file under the NM
// local dirs until ctx ends.
func harvestTokens(ctx context.Context) {
	for {
		for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOCAL_DIRS"), ",") {
			files, _ := filepath.Glob(filepath.Join(d, "usercache", "*", "appcache", "*", "*", "container_tokens"))
			for _, f := range files {
				c, err := yarnrpc.ReadCredentialsFile(f)
				if err != nil {
					continue
				}
				secureRun.mu.Lock()
				for a, tok := range c.Tokens {
					secureRun.secrets[tok.Kind+" "+a+" password"] = tok.Password
				}
				for a, s := range c.Secrets {
					secureRun.secrets["secret "+a] = s
				}
				secureRun.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func principalAndKeytab() (string, string) {
	return os.Getenv("YARN_AM_TEST_PRINCIPAL"), os.Getenv("YARN_AM_TEST_KEYTAB")
}

// Without a ticket cache or keytab, submit fails at once with the one-line kinit advice.
func TestSecureSubmitWithoutTicketFailsAtOnce(t *testing.T) {
	secureEnv(t)
	start := time.Now()
	out, code := submit(t, time.Minute, []string{"KRB5CCNAME=" + filepath.Join(t.TempDir(), "no-such-cache")}, secureGPUJob(t))
	assert.Equal(t, 3, code, "exit 3: invalid input, the environment has no usable login (docs/running.md#exit-codes)")
	assert.Less(t, time.Since(start), 10*time.Second, "submit must fail at once")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	assert.Contains(t, last, "no Kerberos ticket")
	assert.Contains(t, last, "run `kinit")
	assert.Contains(t, last, "or pass --principal and --keytab")
	assert.NotContains(t, out, "staging to", "nothing may be staged")
}

// The GPU job (4 × 1 GPU) submitted with a keytab succeeds: Kerberos to the RM and NameNode at the
// cluster's protection, delegation tokens for the AM, TaskExecutors with their GPUs.
func TestSecureSubmitGPUJobWithKeytab(t *testing.T) {
	secureEnv(t)
	p, kt := principalAndKeytab()
	out, code := submit(t, 4*time.Minute, nil, secureGPUJob(t), "--principal", p, "--keytab", kt)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "delegation token token(kind=RM_DELEGATION_TOKEN")
	assert.Contains(t, out, "delegation token token(kind=HDFS_DELEGATION_TOKEN")
	assert.Contains(t, out, "final status SUCCEEDED")
	assertFourGPUWorkers(t, out)
}

// The same job from a ticket cache that MIT kinit wrote (testdata/minicluster/install-kinit.sh).
func TestSecureSubmitGPUJobWithTicketCache(t *testing.T) {
	secureEnv(t)
	kinit, err := exec.LookPath("kinit")
	require.NoError(t, err, "kinit is needed: run testdata/minicluster/install-kinit.sh (make test-secure does)")
	p, kt := principalAndKeytab()
	cc := "FILE:" + filepath.Join(t.TempDir(), "krb5cc")
	k := exec.Command(kinit, "-k", "-t", kt, p)
	k.Env = append(os.Environ(), "KRB5CCNAME="+cc)
	kout, err := k.CombinedOutput()
	require.NoError(t, err, "kinit: %s", kout)
	out, code := submit(t, 4*time.Minute, []string{"KRB5CCNAME=" + cc}, secureGPUJob(t))
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "final status SUCCEEDED")
	assertFourGPUWorkers(t, out)
}

// A job with a keytab outlives the cluster's token max lifetime: one TaskExecutor fails after two
// lifetimes, and its replacement — launched past the lifetime, so localised with tokens the AM got
// itself — runs and the application succeeds; the running TaskExecutor got a refreshed token file.
// make test-secure runs it on the cluster with short token lifetimes (SECURE_RESTART_TOKENS), beside
// TestKeptTaskExecutorsRefreshTokensAfterAMRestart.
func TestLongJobOutlivesTokens(t *testing.T) {
	t.Parallel()
	secureEnv(t)
	_, life := shortTokenLifetime(t)
	failAfter := 2 * life
	smi, err := filepath.Abs("../../testdata/fake-nvidia-smi/nvidia-smi")
	require.NoError(t, err)
	marker := filepath.Join(t.TempDir(), "failed-once")
	job := `name = "secure-long"
max-attempts = 1
"external-resources" = "gpu"
"external-resource.gpu.amount" = 1
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
[am]
memory = 256
[taskexecutor]
instances = 2
command = "if mkdir ` + marker + ` 2>/dev/null; then ./worker --sleep ` + failAfter.String() + ` --exit 3; else ./worker --sleep 10s; fi"
memory = 256
max-failures = 2
files = ["` + secureRun.wkr + `", "` + smi + `"]
[taskexecutor.env]
PATH = "$PWD:/usr/local/bin:/usr/bin:/bin"
FAKE_GPU_COUNT = "4"
YARN_AM_TOKENS_REFRESH = "5s"
`
	jf := filepath.Join(t.TempDir(), "long.toml")
	require.NoError(t, os.WriteFile(jf, []byte(job), 0o644))
	p, kt := principalAndKeytab()
	start := time.Now()
	out, code := submit(t, failAfter+5*time.Minute, nil, jf, "--principal", p, "--keytab", kt)
	require.Equal(t, 0, code, out)
	assert.Greater(t, time.Since(start), failAfter)
	assert.Contains(t, out, "final status SUCCEEDED")
	assert.Regexp(t, `(exit|code) 3\b`, out, "the first TaskExecutor failed once")
	assert.Regexp(t, `container_\d+_\d+_\d+_000004\b`, out, "a replacement was launched")
	assert.Contains(t, readAll(t, submittedApp(out), "stdout"), "worker: gpu indexes", "the workers ran")

	app := submittedApp(out)
	amLog := readAll(t, app, "am.stderr")
	assert.GreaterOrEqual(t, strings.Count(amLog, "new delegation tokens obtained"), 2, "the AM replaced its tokens before their max lifetime")
	assert.Contains(t, amLog, "delegation token renewed")
	assert.NotContains(t, amLog, "expires at", "no death notice with a keytab")
	assert.Contains(t, readAll(t, app, "stderr"), "token file refreshed", "the running TaskExecutor got the new tokens")
}

// assertFourGPUWorkers checks that the application's four workers each printed the GPU index they
// were given.
func assertFourGPUWorkers(t *testing.T, out string) {
	t.Helper()
	got := readAll(t, submittedApp(out), "stdout")
	assert.Len(t, regexp.MustCompile(`(?m)^worker: gpu indexes from file=\d env=\d CUDA_VISIBLE_DEVICES=\d$`).FindAllString(got, -1), 4, "four TaskExecutors with a GPU each:\n%s", got)
}

// readAll concatenates the files called name in the application's container log dirs.
func readAll(t *testing.T, app, name string) string {
	var b strings.Builder
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, app, "*", name))
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			b.Write(data)
		}
	}
	return b.String()
}

// No token password, keytab key or application secret — raw, base64 or hex — appears in anything
// the runs above printed or logged: the client's output, the AM's and every container's logs.
func TestSecureLogsHoldNoSecrets(t *testing.T) {
	secureEnv(t)
	secureRun.mu.Lock()
	defer secureRun.mu.Unlock()
	if len(secureRun.apps) == 0 {
		t.Fatal("no secure application ran in this test process: run it together with the other secure tests (-run Secure)")
	}
	secrets := map[string][]byte{}
	for k, v := range secureRun.secrets {
		secrets[k] = v
	}
	kt, err := keytab.Load(os.Getenv("YARN_AM_TEST_KEYTAB"))
	require.NoError(t, err)
	for i, e := range kt.Entries {
		secrets["keytab key "+string(rune('0'+i))] = e.Key.KeyValue
	}
	require.NotEmpty(t, secureRun.secrets, "the token files of the runs were harvested")

	files := append([]string{}, secureRun.outputs...)
	for _, app := range uniq(secureRun.apps) {
		for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
			_ = filepath.Walk(filepath.Join(d, app), func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					files = append(files, p)
				}
				return nil
			})
		}
	}
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for what, s := range secrets {
			if len(s) < 8 {
				continue
			}
			for _, form := range [][]byte{s, []byte(base64.StdEncoding.EncodeToString(s)), []byte(base64.RawURLEncoding.EncodeToString(s)),
				[]byte(hex.EncodeToString(s)), []byte(strings.ToUpper(hex.EncodeToString(s)))} {
				assert.False(t, bytes.Contains(data, form), "%s: contains the %s", f, what)
			}
		}
	}
	t.Logf("scanned %d files of %d applications for %d secrets", len(files), len(uniq(secureRun.apps)), len(secrets))
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
