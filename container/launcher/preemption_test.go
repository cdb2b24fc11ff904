package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// gatedNoticer hands out its notice once the test opens the gate; before, every poll ends empty
// (as the AM's 204 after the wait), and one poll fails first (the AM unreachable for a moment).
type gatedNoticer struct {
	gate   chan struct{}
	notice *contract.PreemptionNotice
	polls  atomic.Int32
}

func (g *gatedNoticer) WaitNotice(ctx context.Context, _ string, wait time.Duration) (*contract.PreemptionNotice, error) {
	if g.polls.Add(1) == 1 {
		return nil, errors.New("connection refused")
	}
	select {
	case <-g.gate:
		return g.notice, nil
	case <-time.After(wait):
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readyFIFO gives the worker $READY, a named pipe: the worker writes to it once its handler is set,
// and openWhenReady, reading it, learns so without polling.
func readyFIFO(t *testing.T, f *launchFixture) string {
	t.Helper()
	p := filepath.Join(f.dir, "ready")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	f.l.Env = append(f.l.Env, "READY="+p)
	return p
}

// openWhenReady opens the gate once the worker wrote to fifo (it runs and its handler is set): the
// open blocks until the worker opens the pipe to write.
func (g *gatedNoticer) openWhenReady(fifo string) {
	if r, err := os.Open(fifo); err == nil {
		_, _ = io.ReadAll(r)
		r.Close()
	}
	close(g.gate)
}

// pinnedReporter is the launcher's reporter for an AM at url serving with authority ca, the secret
// abc123 in the container's token file.
func pinnedReporter(t *testing.T, url string, ca []byte) *HTTPReporter {
	t.Helper()
	creds := yarnrpc.NewCredentials()
	creds.Secrets[contract.SecretAlias] = []byte("abc123")
	creds.Secrets[contract.TLSCACertAlias] = ca
	tokenFile := filepath.Join(t.TempDir(), "container_tokens")
	require.NoError(t, creds.WriteFile(tokenFile))
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", tokenFile)
	rep, err := ReporterFromEnv(url)
	require.NoError(t, err)
	return rep.(*HTTPReporter)
}

// TestPreemptionNoticeReachesTheWorker: the worker runs; a notice arrives; the worker gets the
// signal and reads the notice file at the path its environment names, which holds the notice.
func TestPreemptionNoticeReachesTheWorker(t *testing.T) {
	f := newLaunchFixture(t)
	deadline := time.Date(2026, 1, 1, 0, 0, 15, 0, time.UTC)
	g := &gatedNoticer{gate: make(chan struct{}), notice: &contract.PreemptionNotice{Container: f.l.ContainerID,
		Containers: []string{f.l.ContainerID}, WarnedAt: deadline.Add(-15 * time.Second), Deadline: deadline}}
	f.l.Preemption = &Preemption{Noticer: g, Signal: syscall.SIGUSR1, Wait: 50 * time.Millisecond, Retry: 10 * time.Millisecond}
	// The worker says it is ready, then waits for SIGUSR1; its handler copies the notice file and
	// exits 0. Without the signal it would run until the test's deadline (exit 3).
	script := `trap 'cat "$YARN_AM_PREEMPTION_FILE"; exit 0' USR1; echo up > "$READY"; for i in $(seq 1 300); do sleep 0.05; done; exit 3`
	go g.openWhenReady(readyFIFO(t, f))
	code := f.l.Run(context.Background(), []string{"bash", "-c", script})
	require.Equal(t, 0, code, "the worker got the signal: %s", f.stderr.String())
	var got contract.PreemptionNotice
	require.NoError(t, json.Unmarshal(f.stdout.Bytes(), &got), f.stdout.String())
	assert.Equal(t, f.l.ContainerID, got.Container)
	assert.True(t, deadline.Equal(got.Deadline))
	st, err := os.Stat(filepath.Join(f.dir, contract.PreemptionFileName))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	left, _ := filepath.Glob(filepath.Join(f.dir, "."+contract.PreemptionFileName+"*"))
	assert.Empty(t, left, "no temporary file is left")
	assert.GreaterOrEqual(t, g.polls.Load(), int32(2), "a failed poll is retried")
}

// TestPreemptionSignalNoneWritesTheFileOnly: with taskexecutor.preemption-signal = none the worker
// gets the file and no signal (the worker's default SIGUSR1 action would have killed it).
func TestPreemptionSignalNoneWritesTheFileOnly(t *testing.T) {
	f := newLaunchFixture(t)
	g := &gatedNoticer{gate: make(chan struct{}), notice: &contract.PreemptionNotice{Container: f.l.ContainerID, Deadline: time.Now().Add(time.Minute)}}
	close(g.gate)
	sig, err := ParsePreemptionSignal(contract.PreemptionSignalNone)
	require.NoError(t, err)
	f.l.Preemption = &Preemption{Noticer: g, Signal: sig, Wait: 50 * time.Millisecond, Retry: 10 * time.Millisecond}
	script := `for i in $(seq 1 200); do [ -f "$YARN_AM_PREEMPTION_FILE" ] && exit 0; sleep 0.05; done; exit 3`
	code := f.l.Run(context.Background(), []string{"bash", "-c", script})
	assert.Equal(t, 0, code, "the file came and no signal killed the worker: %s", f.stderr.String())
}

func TestParsePreemptionSignal(t *testing.T) {
	assert.Len(t, preemptionSignals, len(contract.PreemptionSignals), "the launcher sends exactly the signals the job file accepts")
	for _, name := range contract.PreemptionSignals {
		sig, err := ParsePreemptionSignal(name)
		require.NoError(t, err, "every name the job file accepts is one the launcher sends")
		assert.NotZero(t, sig)
		assert.Equal(t, name, unixName(sig))
	}
	sig, err := ParsePreemptionSignal("")
	require.NoError(t, err)
	assert.Equal(t, syscall.SIGUSR1, sig, "the default")
	sig, err = ParsePreemptionSignal(contract.PreemptionSignalNone)
	require.NoError(t, err)
	assert.Zero(t, sig)
	_, err = ParsePreemptionSignal("SIGKILL")
	require.Error(t, err)
	for _, want := range []string{"taskexecutor.preemption-signal", `"SIGKILL"`, "SIGUSR1, SIGUSR2", `"none"`} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = ParsePreemptionSignal(strings.Repeat("x", 500))
	assert.Less(t, len(err.Error()), 300, "the value is cut")
}

// TestWaitNoticeLongPollsWithTheSecret: the launcher's poll goes over the pinned HTTPS client with
// the secret and asks for its wait; 204 is no notice, 200 the notice, anything else an error.
func TestWaitNoticeLongPollsWithTheSecret(t *testing.T) {
	var answer atomic.Int32
	answer.Store(http.StatusNoContent)
	am, ca := amtlstest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/containers/c1"+contract.NoticesPath || r.Header.Get("Authorization") != "Bearer abc123" {
			http.Error(w, "bad request "+r.URL.Path, http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get(contract.NoticeWaitParam) != "20s" {
			http.Error(w, "wait "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		switch code := int(answer.Load()); code {
		case http.StatusOK:
			_ = json.NewEncoder(w).Encode(contract.PreemptionNotice{Container: "c1", Containers: []string{"c1"}})
		default:
			w.WriteHeader(code)
		}
	}))
	h := pinnedReporter(t, am.URL+"/api/v1/containers/", ca)
	ctx := context.Background()
	n, err := h.WaitNotice(ctx, "c1", 20*time.Second)
	require.NoError(t, err)
	assert.Nil(t, n)
	answer.Store(http.StatusOK)
	n, err = h.WaitNotice(ctx, "c1", 20*time.Second)
	require.NoError(t, err)
	require.NotNil(t, n)
	assert.Equal(t, "c1", n.Container)
	answer.Store(http.StatusNotFound)
	_, err = h.WaitNotice(ctx, "c1", 20*time.Second)
	assert.ErrorContains(t, err, "404")
	_, err = (&HTTPReporter{BaseURL: "http://am:1/api/v1/containers/", Secret: "abc123", Client: http.DefaultClient}).WaitNotice(ctx, "c1", time.Second)
	assert.Error(t, err, "never over plain HTTP")
}

// TestPreemptionSignalSparesTheShellAndReachesTheCatchingChild: the job's command runs under a shell
// that does not catch the signal (its default action would end it, and the worker with it); the
// training process below it does: only the latter is signalled.
func TestPreemptionSignalSparesTheShellAndReachesTheCatchingChild(t *testing.T) {
	f := newLaunchFixture(t)
	g := &gatedNoticer{gate: make(chan struct{}), notice: &contract.PreemptionNotice{Container: f.l.ContainerID, Deadline: time.Now().Add(time.Minute)}}
	f.l.Preemption = &Preemption{Noticer: g, Signal: syscall.SIGUSR1, Wait: 50 * time.Millisecond, Retry: 10 * time.Millisecond}
	child := filepath.Join(f.dir, "child.sh")
	require.NoError(t, os.WriteFile(child, []byte(`trap 'echo child-warned; exit 0' USR1; echo up > "$READY"; for i in $(seq 1 300); do sleep 0.05; done; exit 3`), 0o644))
	script := `bash ` + child + `; code=$?; echo "shell: child exited $code"; exit $code`
	go g.openWhenReady(readyFIFO(t, f))
	code := f.l.Run(context.Background(), []string{"sh", "-c", script})
	assert.Equal(t, 0, code, "the shell survived and passed on its child's exit: %s", f.stderr.String())
	assert.Equal(t, "child-warned\nshell: child exited 0\n", f.stdout.String())
}
