package am

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

func TestDriverOutcomeCarriesTheDriversLastStderrLines(t *testing.T) {
	p := testDriver(&driverConfig{Command: "./driver.sh"})
	_, _ = p.tail.Write([]byte("bash: line 1: ./driver.sh: No such file or directory\n"))
	code := 127
	p.exit = &code
	out := p.outcome(false, "")
	require.NotNil(t, out)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, `the driver "./driver.sh" exited with code 127`)
	assert.NotContains(t, out.Diagnostics, "No such file", "the application's diagnostics (the RM's) point to the tail")
	assert.Contains(t, out.Diagnostics, "`yarn-am status`")
	assert.Equal(t, "bash: line 1: ./driver.sh: No such file or directory", p.stderrTail(), "the status's driverStderrTail")

	code = 0
	assert.Equal(t, "the driver exited with code 0", p.outcome(false, "").Diagnostics, "a driver that succeeded adds nothing")
	assert.Empty(t, p.stderrTail())
}

// A driver that exits while a background child still holds its stderr: the exit is seen at once (not
// when the child ends), with its code and its stderr, whose tail quotes the application secret of the
// driver's environment only as [application secret] (docs/security.md#the-ams-https-api).
func TestDriverExitSeenWhileAChildHoldsStderr(t *testing.T) {
	var stderr strings.Builder
	d := &driverConfig{Command: "sleep 30 & echo \"driver-$((40+2)) failed $YARN_AM_SECRET\" >&2; exit 4", Env: []string{contract.EnvSecret + "=" + testSecret}, Stdout: io.Discard, Stderr: &lockedWriter{w: &stderr}}
	p := testDriver(d)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the background sleep's process group
	done, err := p.start(ctx)
	require.NoError(t, err)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the driver's exit was not seen within 20 s: Wait waited for the child holding stderr")
	}
	out := p.outcome(false, "")
	require.NotNil(t, out)
	assert.Contains(t, out.Diagnostics, "exited with code 4")
	assert.NotContains(t, out.Diagnostics, "driver-42 failed", "the tail is not in the RM's diagnostics")
	assert.Equal(t, "driver-42 failed [application secret]", p.stderrTail())
	assert.Contains(t, stderr.String(), testSecret, "am.stderr itself is the driver's own, as written")
}

// testDriver is driver mode's process for d as newAM makes it, logging to a logger of its own.
func testDriver(d *driverConfig) *driverProc {
	return newDriverProc(d, logrus.NewEntry(logrus.New()), func() {})
}

// stoppedAtLimit says whether the AM stopped the driver at the failure limit.
func (p *driverProc) stoppedAtLimit() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// The driver runs in the AM's container but must not act as the AM: its HADOOP_TOKEN_FILE_LOCATION
// names a token file of its own (0600) with the delegation tokens and no AM-RM token, and neither it
// nor anything else the driver is handed holds the TLS authority's key. Before, the driver inherited
// the AM's HADOOP_TOKEN_FILE_LOCATION (docs/security.md#the-ams-https-api).
func TestDriverGetsNoAMRMTokenNorTheAuthoritysKey(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	amCreds := credsWithAMRM()
	amCreds.Tokens["hdfs"] = yarnrpc.Token{Identifier: []byte("hdfs-id"), Password: []byte("hdfs-pw"), Kind: "HDFS_DELEGATION_TOKEN", Service: "10.0.0.5:8020"}
	amCreds.Secrets[contract.TLSCAKeyAlias] = []byte("the-authority-key")
	amCreds.Secrets[contract.TLSCACertAlias] = []byte("the-authority-cert")
	amCreds.Secrets[contract.DriverSecretPrefix+"signing-key"] = []byte("the-drivers-key")
	amFile := filepath.Join(dir, "container_tokens")
	require.NoError(t, amCreds.WriteFile(amFile))
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", amFile)

	p := testDriver(&driverConfig{
		Command: `echo "$HADOOP_TOKEN_FILE_LOCATION" > seen-path; cp "$HADOOP_TOKEN_FILE_LOCATION" seen-tokens; env > seen-env`,
		Tokens:  amCreds,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done, err := p.start(ctx)
	require.NoError(t, err)
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the driver did not exit")
	}
	require.NotNil(t, p.outcome(false, ""))
	assert.Equal(t, contract.Succeeded, p.outcome(false, "").Status)

	path, err := os.ReadFile(filepath.Join(dir, "seen-path"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, driverTokensFile), strings.TrimSpace(string(path)), "the driver's own token file, not the AM's")
	fi, err := os.Stat(filepath.Join(dir, driverTokensFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	got, err := yarnrpc.ReadCredentialsFile(filepath.Join(dir, "seen-tokens"))
	require.NoError(t, err)
	_, hasAMRM := got.TokenOfKind(yarnrpc.AMRMTokenKind)
	assert.False(t, hasAMRM, "no AM-RM token for the driver")
	_, hasHDFS := got.TokenOfKind("HDFS_DELEGATION_TOKEN")
	assert.True(t, hasHDFS, "the delegation tokens a driver needs")
	assert.NotContains(t, got.Secrets, contract.TLSCAKeyAlias, "never the authority's key")
	assert.Equal(t, []byte("the-drivers-key"), got.Secrets[contract.DriverSecretPrefix+"signing-key"], "the driver's own secret")
	env, err := os.ReadFile(filepath.Join(dir, "seen-env"))
	require.NoError(t, err)
	assert.NotContains(t, string(env), amFile, "the AM's token file is named nowhere in the driver's environment")
	assert.NotContains(t, string(env), "the-authority-key")
}

// A driver with EndOnFailureLimit (a Flink JobManager) is stopped when the failure limit is reached,
// and the application fails with the limit's diagnostics even though the driver exits 0 on SIGTERM;
// without it the driver decides (docs/flink.md#scaling-failures-logs).
func TestDriverEndedAtTheFailureLimit(t *testing.T) {
	for _, end := range []bool{true, false} {
		ready := filepath.Join(t.TempDir(), "ready")
		d := &driverConfig{Command: "trap 'exit 0' TERM; touch " + ready + "; sleep 30 & wait", Stdout: io.Discard, Stderr: io.Discard, EndOnFailureLimit: end}
		p := testDriver(d)
		ctx, cancel := context.WithCancel(context.Background())
		done, err := p.start(ctx)
		require.NoError(t, err)
		// The driver's trap is set once it has written ready: a SIGTERM before would end it with 143.
		require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 20*time.Second, 10*time.Millisecond)
		p.endOnLimit(false)
		assert.False(t, p.stoppedAtLimit(), "no limit yet: the driver runs on")
		diagnostics := "3 TaskExecutors failed, more than taskexecutor.max-failures = 2 allows"
		p.endOnLimit(true)
		if !end {
			assert.False(t, p.stoppedAtLimit(), "an ordinary driver decides itself")
			assert.Nil(t, p.outcome(true, diagnostics), "still running")
			cancel()
			<-done
			continue
		}
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the driver was not stopped within 20 s")
		}
		out := p.outcome(true, diagnostics)
		require.NotNil(t, out)
		assert.Equal(t, contract.Failed, out.Status, "failed although the driver exited 0")
		assert.Contains(t, out.Diagnostics, "more than taskexecutor.max-failures = 2 allows")
		assert.Contains(t, out.Diagnostics, "was stopped (it exited with code 0)")
		cancel()
	}
}

// A driver may publish its outcome in its own words for the diagnostics ($YARN_AM_OUTCOME_FILE, as
// flink-jobmanager does with the Flink job's root cause): the AM reads at most MaxOutcomeBytes of it,
// redacts the application secret, folds it onto one printable line and appends it to the outcome,
// on failure and on success; its stderr stays out of the diagnostics.
func TestDriverPublishesItsOutcome(t *testing.T) {
	t.Chdir(t.TempDir())
	run := func(script string) *decision.Outcome {
		d := &driverConfig{Command: script, Env: []string{contract.EnvSecret + "=" + testSecret}, Stdout: io.Discard, Stderr: io.Discard}
		p := testDriver(d)
		done, err := p.start(context.Background())
		require.NoError(t, err)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the driver did not end")
		}
		out := p.outcome(false, "")
		require.NotNil(t, out)
		return out
	}
	out := run(`printf 'Flink job j (abc) FAILED:\n\tjava.lang.IllegalStateException: boom \033[2J %s' "$YARN_AM_SECRET" > "$YARN_AM_OUTCOME_FILE"; echo "stderr-$((6*7))" >&2; exit 1`)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, `exited with code 1: Flink job j (abc) FAILED: java.lang.IllegalStateException: boom [2J [application secret]`)
	assert.NotContains(t, out.Diagnostics, testSecret)
	assert.NotContains(t, out.Diagnostics, "\033")
	assert.NotContains(t, out.Diagnostics, "stderr-42", "the driver's stderr is not published")

	out = run(`echo "Flink job j (abc) FINISHED" > "$YARN_AM_OUTCOME_FILE"`)
	assert.Equal(t, "the driver exited with code 0: Flink job j (abc) FINISHED", out.Diagnostics)

	out = run(`head -c 100000 /dev/zero | tr '\0' x > "$YARN_AM_OUTCOME_FILE"; exit 2`)
	assert.LessOrEqual(t, len(out.Diagnostics), contract.MaxOutcomeBytes+200, "bounded")

	out = run(`exit 3`)
	assert.Equal(t, fmt.Sprintf("the driver %q exited with code 3", "exit 3"), out.Diagnostics, "nothing written, nothing added")
}

// The outcome file is read only when it is a regular file, and its open neither blocks nor follows a
// link: a driver that leaves a named pipe there (which used to block the AM, under its lock, when it
// read the outcome), a link to another file, or a directory gets the diagnostics naming what is there,
// and nothing of a linked file is read (issue 40 §7).
func TestDriverOutcomeFileIsReadOnlyAsARegularFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "private"), []byte("private-words"), 0o600))
	for script, want := range map[string]string{
		`mkfifo "$YARN_AM_OUTCOME_FILE"; exit 1`:               "is a named pipe, not a regular file",
		`ln -s "$PWD/private" "$YARN_AM_OUTCOME_FILE"; exit 1`: "is a symbolic link, not a regular file",
		`mkdir "$YARN_AM_OUTCOME_FILE"; exit 1`:                "is a directory, not a regular file",
	} {
		d := &driverConfig{Command: script, Stdout: io.Discard, Stderr: io.Discard}
		p := testDriver(d)
		done, err := p.start(context.Background())
		require.NoError(t, err)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the driver did not end", script)
		}
		got := make(chan *decision.Outcome, 1)
		go func() { got <- p.outcome(false, "") }()
		select {
		case out := <-got:
			require.NotNil(t, out, script)
			assert.Equal(t, contract.Failed, out.Status, script)
			assert.Contains(t, out.Diagnostics, "exited with code 1; its outcome file was not read: "+filepath.Join(dir, contract.OutcomeFileName)+" "+want, script)
			assert.NotContains(t, out.Diagnostics, "private-words", script)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: reading the outcome blocked the AM", script)
		}
		_ = os.RemoveAll(filepath.Join(dir, contract.OutcomeFileName))
	}
}

// A driver whose framework restarts it (framework.AM.RestartDriver) is started again in place when it
// exits non-zero, with the framework's environment added: the restarted driver sees it, the AM's
// outcome waits for the driver's end for good, and what the framework refuses ends the application
// with that exit's code. A driver the AM stopped itself (the failure limit) is never restarted.
func TestDriverRestartedInPlaceByItsFramework(t *testing.T) {
	t.Chdir(t.TempDir())
	var codes []int
	var mu sync.Mutex
	// Each run counts itself in runs; the first two die as a lost JVM would (exit 93), the third exits 5
	// and is not restarted: the framework allows two restarts.
	d := &driverConfig{Command: `n=$(($(cat runs 2>/dev/null || echo 0)+1)); echo $n > runs; echo "$n ${RESTARTED_FROM:-none}" >> seen; [ $n -le 2 ] && exit 93; exit 5`,
		Stdout: io.Discard, Stderr: io.Discard}
	d.Restart = restartWith(func(_ context.Context, code int) (map[string]string, bool) {
		mu.Lock()
		defer mu.Unlock()
		codes = append(codes, code)
		if len(codes) > 2 {
			return nil, false
		}
		return map[string]string{"RESTARTED_FROM": fmt.Sprint("chk-", len(codes))}, true
	})
	p := testDriver(d)
	done, err := p.start(context.Background())
	require.NoError(t, err)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the driver did not end for good")
	}
	seen, err := os.ReadFile("seen")
	require.NoError(t, err)
	assert.Equal(t, "1 none\n2 chk-1\n3 chk-2\n", string(seen), "each restart runs with the framework's environment")
	mu.Lock()
	assert.Equal(t, []int{93, 93, 5}, codes, "the framework is asked of every non-zero exit")
	mu.Unlock()
	out := p.outcome(false, "")
	require.NotNil(t, out)
	assert.Contains(t, out.Diagnostics, "exited with code 5", "the last exit is the outcome")

	// Stopped by the AM at the failure limit: its exit is final, the framework is not asked.
	asked := false
	ready := filepath.Join(t.TempDir(), "ready")
	d = &driverConfig{Command: "trap 'exit 1' TERM; touch " + ready + "; sleep 30 & wait", Stdout: io.Discard, Stderr: io.Discard, EndOnFailureLimit: true,
		Restart: func(context.Context, int) ([]string, bool) { asked = true; return nil, true }}
	p = testDriver(d)
	done, err = p.start(context.Background())
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 20*time.Second, 10*time.Millisecond)
	p.endOnLimit(true)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the stopped driver did not end")
	}
	assert.False(t, asked, "a driver the AM stopped is not restarted")
}

// A driver started (again) with FreshTokens set gets the AM's current delegation tokens in its
// token file, in place of those of the AM's start, and keeps its own secrets: a JobManager restarted
// in place after its first tokens ended reads HDFS with the new ones.
func TestDriverTokenFileTakesTheFreshTokens(t *testing.T) {
	t.Chdir(t.TempDir())
	amCreds := credsWithAMRM()
	amCreds.Tokens["hdfs"] = yarnrpc.Token{Identifier: []byte("old-id"), Password: []byte("old-pw"), Kind: "HDFS_DELEGATION_TOKEN", Service: "10.0.0.5:8020"}
	amCreds.Secrets[contract.DriverSecretPrefix+"signing-key"] = []byte("the-drivers-key")
	d := &driverConfig{Tokens: amCreds, FreshTokens: func() map[string]yarnrpc.Token {
		return map[string]yarnrpc.Token{"hdfs": {Identifier: []byte("new-id"), Password: []byte("new-pw"), Kind: "HDFS_DELEGATION_TOKEN", Service: "10.0.0.5:8020"}}
	}}
	env, err := driverEnv(d)
	require.NoError(t, err)
	var file string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, envTokenFile+"="); ok {
			file = v
		}
	}
	require.NotEmpty(t, file)
	got, err := yarnrpc.ReadCredentialsFile(file)
	require.NoError(t, err)
	assert.Equal(t, "new-id", string(got.Tokens["hdfs"].Identifier))
	assert.Equal(t, "the-drivers-key", string(got.Secrets[contract.DriverSecretPrefix+"signing-key"]))
	_, hasAMRM := got.TokenOfKind(yarnrpc.AMRMTokenKind)
	assert.False(t, hasAMRM)
}
