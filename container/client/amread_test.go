package client

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
)

const (
	tailApp    = "application_1_0007"
	tailSecret = "0123456789abcdef0123456789abcdef"
	tailLine   = "ValueError: bad row 17"
)

// tailState is an AM whose TaskExecutor container_1_0007_01_000002 failed with a stderr tail (web.State).
type tailState struct{}

func (tailState) Status() contract.Status {
	st := int32(3)
	return contract.Status{App: tailApp, State: contract.StateRunning, Containers: []contract.ContainerStatus{
		{ID: "container_1_0007_01_000002", Node: "n1:1", State: contract.Completed, ExitStatus: &st, ExitClass: contract.ExitFailed,
			Diagnostics: "exited with code 3: its last stderr lines are shown to the application's owner", StderrTail: "Traceback:\n" + tailLine}}}
}
func (tailState) WantNodes()                        {}
func (tailState) Requirement() contract.Requirement { return contract.Requirement{Instances: 1} }
func (tailState) SetRequirements(n int, _ string) (contract.Requirement, error) {
	return contract.Requirement{Instances: n}, nil
}
func (tailState) Report(string, contract.ContainerReport) error { return web.ErrUnknownContainer }
func (tailState) Unknown(ids []string) []string                 { return ids }
func (tailState) Alive(string) bool                             { return false }
func (tailState) Notice(string) (*contract.PreemptionNotice, <-chan struct{}, bool) {
	return nil, make(chan struct{}), false
}
func (tailState) Rendezvous(string) web.Rendezvous { return web.Rendezvous{} }

// eventSource is an events.Log as web.EventLog (as package am adapts it).
type eventSource struct{ *events.Log }

func (s eventSource) Subscribe(after uint64) web.Subscription { return s.Log.Subscribe(after) }

// tailAM serves tailState as the AM does: its HTTPS API (a certificate of the application's authority
// ca, the secret tailSecret) and its plain tracking URL, which names the HTTPS API. It returns the
// tracking URL (the AM's URL as AMURL gives it) and ca.
func tailAM(t *testing.T) (base string, ca []byte) {
	t.Helper()
	log := events.NewLog(100)
	log.Add(events.Requested(1, contract.Capability{"yarn.io/gpu": 1}))
	e := events.Completed("container_1_0007_01_000002", "n1:1", decision.Exit{Status: 3, Class: contract.ExitFailed})
	e.StderrTail = "Traceback:\n" + tailLine
	log.Add(e)
	b := web.Backend{State: tailState{}, Events: eventSource{log}, Metrics: http.NotFoundHandler()}
	ca, key := amtlstest.Authority(t)
	secure := amtlstest.ServerOf(t, web.Handler(b, web.Options{Secret: tailSecret, Secure: true}), ca, key)
	plain := httptest.NewServer(web.Handler(b, web.Options{Secret: tailSecret, SecureAPI: secure.URL + "/api/v1/"}))
	t.Cleanup(plain.Close)
	return plain.URL + "/", ca
}

// TestOwnerSeesTheWorkersStderrTail: with the application's secret (and its authority's certificate)
// status reads the AM's HTTPS API and prints the failed worker's last stderr lines; without it, or
// when the AM's certificate is not the application's, it reads the tracking URL as anyone may, gets
// no tail and says once why (docs/security.md#what-anonymous-readers-see).
func TestOwnerSeesTheWorkersStderrTail(t *testing.T) {
	base, ca := tailAM(t)
	ctx := context.Background()

	owner := NewAMReader(&AppKey{Secret: tailSecret, CACert: ca}, nil)
	v, err := owner.Status(ctx, base)
	require.NoError(t, err)
	assert.True(t, v.Owner)
	assert.Contains(t, string(v.Raw), tailLine, "status --json prints the owner's document")
	var b bytes.Buffer
	PrintAMView(&b, v)
	assert.Contains(t, b.String(), "Last stderr lines of container_1_0007_01_000002 (exit 3):\n  Traceback:\n  "+tailLine+"\n")
	assert.NotContains(t, b.String(), "need the application's secret")
	v, err = owner.Status(ctx, base) // the second read goes to the HTTPS API it found
	require.NoError(t, err)
	assert.True(t, v.Owner)

	otherCA, _ := amtlstest.Authority(t)
	for name, r := range map[string]*AMReader{
		"no secret on this machine": NewAMReader(nil, &NoAppSecretError{App: tailApp, Dir: "/x"}),
		"another authority":         NewAMReader(&AppKey{Secret: tailSecret, CACert: otherCA}, nil),
	} {
		v, err := r.Status(ctx, base)
		require.NoError(t, err, name)
		assert.False(t, v.Owner, name)
		assert.NotContains(t, string(v.Raw), tailLine, name)
		b.Reset()
		PrintAMView(&b, v)
		out := b.String()
		assert.NotContains(t, out, tailLine, name)
		assert.Equal(t, 1, strings.Count(out, "the failed workers' last stderr lines need the application's secret: "), "%s:\n%s", name, out)
		assert.Contains(t, out, "exited with code 3: its last stderr lines are shown to the application's owner", name)
	}
	v, err = NewAMReader(nil, &NoAppSecretError{App: tailApp, Dir: "/x"}).Status(ctx, base)
	require.NoError(t, err)
	b.Reset()
	PrintAMView(&b, v)
	assert.Contains(t, b.String(), "\nStderr tails: the failed workers' last stderr lines need the application's secret: this machine keeps no secret of "+tailApp)
}

// TestOwnersFollowerStreamsTheStderrTail: submit and follow read the event stream over HTTPS with the
// secret and print the worker's lines under its completed event; without the secret the event comes
// without them and the follower says once why.
func TestOwnersFollowerStreamsTheStderrTail(t *testing.T) {
	base, ca := tailAM(t)
	follow := func(r *AMReader) string {
		_, err := r.Status(context.Background(), base)
		require.NoError(t, err)
		var b bytes.Buffer
		out := &lockedWriter{w: &b}
		f := &eventFollower{out: out, app: tailApp}
		f.start(context.Background(), base, r)
		require.Eventually(t, func() bool {
			out.mu.Lock()
			defer out.mu.Unlock()
			return strings.Contains(b.String(), "its logs: ")
		}, 10*time.Second, 10*time.Millisecond)
		f.stop()
		return b.String()
	}
	text := follow(NewAMReader(&AppKey{Secret: tailSecret, CACert: ca}, nil))
	assert.Contains(t, text, tailLine)
	assert.NotContains(t, text, "need the application's secret")

	text = follow(NewAMReader(nil, &NoAppSecretError{App: tailApp, Dir: "/x"}))
	assert.NotContains(t, text, tailLine)
	assert.Equal(t, 1, strings.Count(text, "the failed workers' last stderr lines need the application's secret: this machine keeps no secret of "+tailApp), text)
}

// TestOwnerReaderUsesTheKeptSecret: status and follow find the secret submit kept (SaveAppSecret);
// a session reads the application it submitted with the key it holds in memory.
func TestOwnerReaderUsesTheKeptSecret(t *testing.T) {
	base, ca := tailAM(t)
	t.Setenv("YARN_AM_CONFIG_DIR", t.TempDir())
	v, err := OwnerReader(tailApp).Status(context.Background(), base)
	require.NoError(t, err)
	assert.False(t, v.Owner)
	var no *NoAppSecretError
	assert.ErrorAs(t, v.Withheld, &no)

	require.NoError(t, SaveAppSecret(tailApp, tailSecret, ca))
	v, err = OwnerReader(tailApp).Status(context.Background(), base)
	require.NoError(t, err)
	assert.True(t, v.Owner)

	s := &Session{submittedApp: "application_1_0008", submittedKey: &AppKey{Secret: tailSecret, CACert: ca}}
	v, err = s.OwnerReader("application_1_0008").Status(context.Background(), base)
	require.NoError(t, err)
	assert.True(t, v.Owner, "the submitting session's key, not the (absent) kept one")
}
