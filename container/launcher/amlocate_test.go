package launcher

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
)

// fakeAM records what a fake attempt of the AM was asked, and serves tokens.
type fakeAM struct {
	mu     sync.Mutex
	asked  []string // "METHOD path bearer"
	tokens []byte
}

func (f *fakeAM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.asked = append(f.asked, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
	f.mu.Unlock()
	if r.URL.Path == "/api/v1/tokens" {
		_, _ = w.Write(f.tokens)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeAM) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string{}, f.asked...)
}

const keptID = "container_1_0001_01_000002"

// keptLauncher is a launcher's reporter and token refresher set up against first (the first attempt)
// with the secret "s3cret" and the authority ca, and a locator whose look-up returns *next.
func keptLauncher(t *testing.T, first *httptest.Server, ca []byte, next *atomic.Value, lookups *atomic.Int32) (*HTTPReporter, *TokenFileRefresher, *AMLocator) {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "container_tokens")
	require.NoError(t, os.WriteFile(tokenFile, credsWith("s3cret", "old", ca), 0o600))
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", tokenFile)
	t.Setenv(contract.EnvTokensURL, first.URL+"/api/v1/tokens")
	rep, err := ReporterFromEnv(first.URL + "/api/v1/containers/")
	require.NoError(t, err)
	hr := rep.(*HTTPReporter)
	hr.Attempts, hr.Backoff = 2, time.Millisecond
	tr, err := TokenFileRefresherFromEnv(logrus.New())
	require.NoError(t, err)
	cfg, err := amtls.ClientConfig(ca)
	require.NoError(t, err)
	loc := &AMLocator{TLS: cfg, Log: logrus.New(), Lookup: func(context.Context) (contract.APIAddress, error) {
		lookups.Add(1)
		return ParseAPIAddress([]byte(next.Load().(string)))
	}}
	loc.SetHost(strings.TrimPrefix(first.URL, "https://"))
	hr.Locator, tr.Locator = loc, loc
	return hr, tr, loc
}

// TestKeptLauncherFollowsTheAMToItsNewAttempt: the first attempt's AM dies; the launcher's next
// liveness message, report and token request find the second attempt (same authority, new address)
// through the look-up, with the secret, and the token file gets the new attempt's tokens.
func TestKeptLauncherFollowsTheAMToItsNewAttempt(t *testing.T) {
	ca, key := amtlstest.Authority(t)
	am1, am2 := &fakeAM{}, &fakeAM{tokens: credsWith("s3cret", "new", ca)}
	srv1, srv2 := amtlstest.ServerOf(t, am1, ca, key), amtlstest.ServerOf(t, am2, ca, key)
	var next atomic.Value
	next.Store(`{"url":"` + srv1.URL + `/","attempt":"appattempt_1_0001_000001"}`)
	var lookups atomic.Int32
	hr, tr, loc := keptLauncher(t, srv1, ca, &next, &lookups)
	ctx := context.Background()

	require.NoError(t, hr.Alive(ctx, keptID))
	assert.Equal(t, []string{"POST /api/v1/containers/" + keptID + "/alive Bearer s3cret"}, am1.requests())
	assert.Zero(t, lookups.Load(), "no look-up while the AM answers")

	srv1.Close() // the AM is SIGKILLed; YARN starts attempt 2 elsewhere, which writes its address
	next.Store(`{"url":"` + srv2.URL + `/","attempt":"appattempt_1_0001_000002"}`)
	require.NoError(t, hr.Alive(ctx, keptID), "the liveness message reaches the new attempt")
	assert.Equal(t, 1, loc.Moves())
	require.NoError(t, hr.Report(ctx, Report{ContainerID: keptID, WorkerStderr: "boom", ExitCode: 3}))
	changed, err := tr.Once(ctx)
	require.NoError(t, err)
	assert.True(t, changed, "the token file has the new attempt's tokens")
	data, err := os.ReadFile(tr.Path)
	require.NoError(t, err)
	assert.Equal(t, credsWith("s3cret", "new", ca), data)
	assert.Equal(t, []string{
		"POST /api/v1/containers/" + keptID + "/alive Bearer s3cret",
		"POST /api/v1/containers/" + keptID + "/report Bearer s3cret",
		"GET /api/v1/tokens Bearer s3cret",
	}, am2.requests())
	assert.Equal(t, int32(1), lookups.Load(), "one look-up found the new attempt")
}

// TestKeptLauncherRefusesAnAddressWithoutTheApplicationsAuthority: an address in the staging
// directory whose server presents another authority's certificate (an impostor, or a stale entry
// now served by someone else), or that is not https://host:port/, is not taken: the secret never
// goes there and the launcher stays where it was.
func TestKeptLauncherRefusesAnAddressWithoutTheApplicationsAuthority(t *testing.T) {
	ca, key := amtlstest.Authority(t)
	am1 := &fakeAM{}
	srv1 := amtlstest.ServerOf(t, am1, ca, key)
	impostor := &fakeAM{}
	other, _ := amtlstest.Server(t, impostor) // a certificate of another authority
	plain := httptest.NewServer(impostor)
	t.Cleanup(plain.Close)
	var next atomic.Value
	var lookups atomic.Int32
	hr, _, loc := keptLauncher(t, srv1, ca, &next, &lookups)
	srv1.Close()
	for _, addr := range []string{
		`{"url":"` + other.URL + `/"}`,
		`{"url":"` + plain.URL + `/"}`,
		`{"url":"` + other.URL + `/api/v1/"}`,
		`not json`,
	} {
		next.Store(addr)
		loc.Reached() // a look-up at once, not after the backoff
		err := hr.Alive(context.Background(), keptID)
		require.Error(t, err, addr)
		assert.Equal(t, 0, loc.Moves(), addr)
	}
	assert.Equal(t, int32(4), lookups.Load())
	assert.Empty(t, impostor.requests(), "nothing was sent to a server without the application's authority")
	assert.Contains(t, hr.Locator.URL(hr.BaseURL), strings.TrimPrefix(srv1.URL, "https://"), "the launcher stays with the address it had")
}

// TestLocatorBacksOff: failures while the AM is away look the address up at most once per backoff
// (2 s doubling to 15 s, plus up to a quarter of jitter), never hammering the NameNode; an answer
// from the AM resets it.
func TestLocatorBacksOff(t *testing.T) {
	now := time.Unix(1000, 0)
	var lookups atomic.Int32
	loc := &AMLocator{Log: logrus.New(), Now: func() time.Time { return now }, Lookup: func(context.Context) (contract.APIAddress, error) {
		lookups.Add(1)
		return contract.APIAddress{}, errors.New("the NameNode does not answer")
	}}
	refused := errors.New("connection refused")
	ctx := context.Background()
	at := func(d time.Duration) int32 {
		now = now.Add(d)
		for i := 0; i < 5; i++ { // the heartbeat, the token refresher and a report fail together
			loc.Failed(ctx, refused)
		}
		return lookups.Load()
	}
	assert.Equal(t, int32(1), at(0))
	assert.Equal(t, int32(1), at(1900*time.Millisecond), "within the first 2 s")
	assert.Equal(t, int32(2), at(700*time.Millisecond), "after 2 s + jitter")
	assert.Equal(t, int32(2), at(3900*time.Millisecond), "the next pause is 4 s")
	assert.Equal(t, int32(3), at(1200*time.Millisecond))
	for i := 0; i < 6; i++ {
		at(20 * time.Second)
	}
	assert.Equal(t, int32(9), lookups.Load())
	assert.Equal(t, int32(9), at(14900*time.Millisecond), "the pause stops growing at 15 s")
	assert.Equal(t, int32(10), at(4*time.Second))
	loc.Reached()
	assert.Equal(t, int32(11), at(0), "after the AM answered, the next failure looks up at once")

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	loc.Reached()
	assert.False(t, loc.Failed(canceled, refused))
	assert.Equal(t, int32(11), lookups.Load(), "a launcher that is stopping looks nothing up")
}

// TestParseAPIAddress: the staging directory's value is read bounded and only as https://host:port/.
func TestParseAPIAddress(t *testing.T) {
	a, err := ParseAPIAddress([]byte(`{"url":"https://10.0.0.7:41234/","attempt":"appattempt_1_0001_000002"}`))
	require.NoError(t, err)
	assert.Equal(t, "appattempt_1_0001_000002", a.Attempt)
	for _, bad := range []string{
		`{"url":"http://10.0.0.7:41234/"}`, `{"url":"https://10.0.0.7/"}`, `{"url":"https://u:p@10.0.0.7:1/"}`,
		`{"url":"https://10.0.0.7:1/x"}`, `{"url":"https://10.0.0.7:1/?a=b"}`, `{}`, `[`,
		`{"url":"https://10.0.0.7:1/","attempt":"` + strings.Repeat("x", contract.MaxAPIAddressBytes) + `"}`,
	} {
		_, err := ParseAPIAddress([]byte(bad))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "user."+contract.APIAddressXAttr, bad)
	}
	_, err = StagingLookup("/tmp/x", "", "", "")
	require.ErrorContains(t, err, contract.EnvStagingDir)
	_, err = StagingLookup("hdfs://nn:8020/user/a/.yarn-am/application_1_0001", "secret-sauce", "", "")
	require.ErrorContains(t, err, contract.EnvRPCProtection)
}

// TestKeptLauncherPollsTheNewAttemptForNotices: the preemption long poll follows the AM to its new
// attempt like the launcher's other requests; without the locator it would poll the dead address
// until the container ended and miss every warning of the new attempt.
func TestKeptLauncherPollsTheNewAttemptForNotices(t *testing.T) {
	ca, key := amtlstest.Authority(t)
	am1, am2 := &fakeAM{}, &fakeAM{}
	srv1, srv2 := amtlstest.ServerOf(t, am1, ca, key), amtlstest.ServerOf(t, am2, ca, key)
	var next atomic.Value
	next.Store(`{"url":"` + srv2.URL + `/","attempt":"appattempt_1_0001_000002"}`)
	var lookups atomic.Int32
	hr, _, loc := keptLauncher(t, srv1, ca, &next, &lookups)
	ctx := context.Background()

	srv1.Close()
	_, err := hr.WaitNotice(ctx, keptID, time.Second)
	require.Error(t, err, "the first attempt is gone")
	assert.Equal(t, 1, loc.Moves(), "the failed poll looked the AM up")
	n, err := hr.WaitNotice(ctx, keptID, time.Second)
	require.NoError(t, err)
	assert.Nil(t, n, "the new attempt has no notice (204)")
	assert.Equal(t, []string{"GET /api/v1/containers/" + keptID + contract.NoticesPath + " Bearer s3cret"}, am2.requests())
}
