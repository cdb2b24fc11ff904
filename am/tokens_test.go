package am

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// rmTokenID is a YARN (protobuf) delegation token identifier with the given dates.
func rmTokenID(issue, max time.Time) []byte {
	var p []byte
	p = protowire.AppendTag(p, 4, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(issue.UnixMilli()))
	p = protowire.AppendTag(p, 5, protowire.VarintType)
	return protowire.AppendVarint(p, uint64(max.UnixMilli()))
}

// The AM announces the earliest max lifetime of its delegation tokens (not the AM-RM token's), with
// the advice to pass a keytab, and says nothing when a keytab was shipped.
func TestAnnounceTokenDeadline(t *testing.T) {
	now := time.Now().Truncate(time.Millisecond)
	c := yarnrpc.NewCredentials()
	c.Tokens["rm"] = yarnrpc.Token{Identifier: rmTokenID(now, now.Add(3*time.Hour)), Password: []byte("pw-rm-123456"), Kind: yarnrpc.RMDelegationTokenKind, Service: "10.0.0.7:8032"}
	c.Tokens["nn"] = yarnrpc.Token{Identifier: rmTokenID(now, now.Add(2*time.Hour)), Password: []byte("pw-nn-123456"), Kind: yarnrpc.HDFSDelegationTokenKind, Service: "10.0.0.5:8020"}
	c.Tokens["amrm"] = yarnrpc.Token{Identifier: rmTokenID(now, now.Add(time.Hour)), Password: []byte("pw-amrm-1234"), Kind: yarnrpc.AMRMTokenKind}
	log, hook := test.NewNullLogger()
	t.Setenv(contract.EnvPrincipal, "")
	msg := announceTokenDeadline(log, c)
	assert.Equal(t, "HDFS delegation token (10.0.0.5:8020) expires at "+now.Add(2*time.Hour).UTC().Format(time.RFC3339)+
		" (max lifetime); pass --principal/--keytab to submit to keep the job alive past it", msg)
	require.Len(t, hook.Entries, 1)
	assert.Equal(t, logrus.WarnLevel, hook.LastEntry().Level)
	line, _ := hook.LastEntry().String()
	assert.NotContains(t, line, "pw-")

	t.Setenv(contract.EnvPrincipal, "alice@EXAMPLE.COM")
	assert.Empty(t, announceTokenDeadline(log, c))
	_, ok := earliestTokenDeadline(yarnrpc.NewCredentials(), "")
	assert.False(t, ok)
}

// GET /api/v1/tokens hands the current TaskExecutor credentials only to holders of the secret, in
// exactly the form "Authorization: Bearer <secret>", and only on the HTTPS listener.
func TestTokenEndpoint(t *testing.T) {
	m := apiAM(t)
	r := &tokenRefresher{hdts: []byte("HDTS\x00creds")}
	secure := web.Handler(m.Web(), web.Options{Secret: "s3cret", Secure: true, Tokens: r})
	plain := web.Handler(m.Web(), web.Options{Secret: "s3cret", SecureAPI: "https://h:2/api/v1/", Tokens: r})
	do := func(h http.Handler, method, path, auth string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	w := do(secure, http.MethodGet, web.TokensPath, "Bearer s3cret")
	assert.Equal(t, http.StatusOK, w.Code)
	assert.True(t, bytes.Equal([]byte("HDTS\x00creds"), w.Body.Bytes()))
	assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
	assert.Equal(t, http.StatusUnauthorized, do(secure, http.MethodGet, web.TokensPath, "Bearer nope").Code)
	assert.Equal(t, http.StatusUnauthorized, do(secure, http.MethodGet, web.TokensPath, "").Code)
	assert.Equal(t, http.StatusUnauthorized, do(secure, http.MethodGet, web.TokensPath, "s3cret").Code, "the bare secret is not the Bearer form")
	assert.Equal(t, http.StatusUnauthorized, do(secure, http.MethodGet, web.TokensPath, "bearer s3cret").Code)
	assert.Equal(t, http.StatusMethodNotAllowed, do(secure, http.MethodPost, web.TokensPath, "Bearer s3cret").Code)

	w = do(plain, http.MethodGet, web.TokensPath, "Bearer s3cret")
	assert.Equal(t, http.StatusForbidden, w.Code, "never over plain HTTP, even with the secret")
	assert.Contains(t, w.Body.String(), "https://h:2/api/v1/tokens")
	assert.NotContains(t, w.Body.String(), "creds")

	noRefresh := web.Handler(m.Web(), web.Options{Secret: "s3cret", Secure: true})
	assert.Equal(t, http.StatusNotFound, do(noRefresh, http.MethodGet, web.TokensPath, "Bearer s3cret").Code, "no refresher: no tokens")
}

// The refresher renews each token at its own renewal time and replaces them all once the earliest
// maximum lifetime is 3/4 gone, on a fake clock.
func TestTokenRefresherDueOnAFakeClock(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	r := &tokenRefresher{now: func() time.Time { return now },
		renewAt:   map[string]time.Time{"rm": t0.Add(18 * time.Hour), "nn": t0.Add(12 * time.Hour)},
		replaceAt: t0.Add(5 * 24 * time.Hour)}
	replace, renew := r.due()
	assert.False(t, replace)
	assert.Empty(t, renew, "nothing is due at the start")

	now = t0.Add(12 * time.Hour)
	replace, renew = r.due()
	assert.False(t, replace)
	assert.Equal(t, []string{"nn"}, renew, "the HDFS token is due at its renewal time, the RM one is not yet")

	now = t0.Add(18*time.Hour + time.Second)
	_, renew = r.due()
	assert.Equal(t, []string{"nn", "rm"}, renew)

	now = t0.Add(5 * 24 * time.Hour)
	replace, renew = r.due()
	assert.True(t, replace, "at 3/4 of the maximum lifetime the tokens are replaced")
	assert.Empty(t, renew, "replacing supersedes renewing")

	r.replaceAt = time.Time{}
	replace, _ = r.due()
	assert.False(t, replace, "no maximum lifetime known: never replaced on time alone")
}

// A replacement keeps renewing the AM's superseded tokens until their maximum lifetime, on a fake
// clock and a fake issuer: without it a process holding them would have only until their last
// renewal's expiry (7.5 s of a 30 s renewal interval) to read the new ones.
func TestTokenRefresherRenewsReplacedTokensUntilTheirMaximumLifetime(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	interval := 30 * time.Second
	var renewed []string
	fail := false
	r := &tokenRefresher{now: func() time.Time { return now }, log: logrus.New(), renewAt: map[string]time.Time{},
		renewToken: func(_ context.Context, tok yarnrpc.Token) (int64, error) {
			renewed = append(renewed, tok.Service)
			if fail {
				return 0, errors.New("token is expired")
			}
			_, mx, _ := yarnrpc.DelegationTokenDates(tok)
			return min(now.Add(interval).UnixMilli(), mx.UnixMilli()), nil
		}}
	token := func(svc string, issue, max time.Time) yarnrpc.Token {
		return yarnrpc.Token{Identifier: rmTokenID(issue, max), Password: []byte("pw"), Kind: yarnrpc.HDFSDelegationTokenKind, Service: svc}
	}
	r.creds = yarnrpc.NewCredentials()
	r.creds.Tokens["submit"] = token("submit", t0, t0.Add(time.Minute))
	r.mu.Lock()
	r.retire(now)
	r.mu.Unlock()
	assert.Empty(t, r.retired, "submit's tokens (renewed by the RM, not the AM) are not the AM's to renew")

	// The AM's own tokens, last renewed at 22.5 s (expiry 52.5 s), replaced at 45 s: renewed once
	// more, to their maximum lifetime at 60 s, then no more.
	r.creds.Tokens["short"] = token("short", t0, t0.Add(time.Minute))
	r.creds.Tokens["long"] = token("long", t0, t0.Add(2*time.Minute))
	r.renewAt = map[string]time.Time{"short": t0.Add(45 * time.Second), "long": t0.Add(50 * time.Second)}
	now = t0.Add(45 * time.Second)
	r.mu.Lock()
	r.retire(now)
	r.mu.Unlock()
	require.Len(t, r.retired, 2)
	r.renewRetired(context.Background())
	assert.Equal(t, []string{"short"}, renewed, "the one due is renewed; the other is not due yet")
	require.Len(t, r.retired, 1, "renewed to its maximum lifetime: renewed no more")
	assert.Equal(t, "long", r.retired[0].token.Service)

	now = t0.Add(50 * time.Second)
	r.renewRetired(context.Background())
	assert.Equal(t, []string{"short", "long"}, renewed)
	require.Len(t, r.retired, 1, "renewed to 80 s, short of its maximum lifetime: renewed again later")
	assert.Equal(t, now.Add(interval*3/4), r.retired[0].renewAt, "at 3/4 of the time to its new expiry")

	now = r.retired[0].renewAt
	fail = true
	r.renewRetired(context.Background())
	assert.Equal(t, []string{"short", "long", "long"}, renewed)
	assert.Empty(t, r.retired, "a failed renewal of a replaced token is not retried")

	r.retired = []retiredToken{{token: token("old", t0, t0.Add(time.Minute)), renewAt: t0, max: t0.Add(time.Minute)}}
	now = t0.Add(time.Minute)
	r.renewRetired(context.Background())
	assert.Empty(t, r.retired, "past its maximum lifetime: dropped without a call")
	assert.Len(t, renewed, 3)
}

func TestAddTokenDeadlineEvent(t *testing.T) {
	now := time.Now()
	c := yarnrpc.NewCredentials()
	c.Tokens["nn"] = yarnrpc.Token{Identifier: rmTokenID(now, now.Add(time.Hour)), Password: []byte("pw-nn-123456"), Kind: yarnrpc.HDFSDelegationTokenKind, Service: "10.0.0.5:8020"}
	t.Setenv(contract.EnvPrincipal, "")
	var cfg config
	addTokenDeadlineEvent(&cfg, c)
	require.NotNil(t, cfg.Events)
	evs := cfg.Events.Latest(10)
	require.Len(t, evs, 1)
	assert.Equal(t, eventTokenDeadline, evs[0].Type)
	assert.Equal(t, contract.SeverityWarning, evs[0].Severity)
	assert.Contains(t, evs[0].Message, "pass --principal/--keytab to submit")

	t.Setenv(contract.EnvPrincipal, "alice@EXAMPLE.COM")
	var cfg2 config
	addTokenDeadlineEvent(&cfg2, c)
	assert.Nil(t, cfg2.Events)
}

// A keytab job with attempts left is told until when YARN can restart its AM on any node: the max
// lifetime of submit's HDFS token, which the keytab does not replace. Nothing without a keytab (the
// death notice covers it), without attempts left, or when the RM gets new tokens itself.
func TestRestartLimit(t *testing.T) {
	now := time.Now().Truncate(time.Millisecond)
	c := yarnrpc.NewCredentials()
	c.Tokens["rm"] = yarnrpc.Token{Identifier: rmTokenID(now, now.Add(time.Hour)), Password: []byte("pw-rm-123456"), Kind: yarnrpc.RMDelegationTokenKind, Service: "10.0.0.7:8032"}
	c.Tokens["nn1"] = yarnrpc.Token{Identifier: rmTokenID(now, now.Add(3*time.Hour)), Password: []byte("pw-nn-123456"), Kind: yarnrpc.HDFSDelegationTokenKind, Service: "10.0.0.5:8020"}
	c.Tokens["nn2"] = yarnrpc.Token{Identifier: rmTokenID(now, now.Add(2*time.Hour)), Password: []byte("pw-nn-654321"), Kind: yarnrpc.HDFSDelegationTokenKind, Service: "10.0.0.6:8020"}
	conf := yarnrpc.NewConfig(nil)
	t.Setenv(contract.EnvPrincipal, "alice@EXAMPLE.COM")

	log, hook := test.NewNullLogger()
	var cfg config
	addRestartLimitEvent(&cfg, conf, c, true, log)
	require.NotNil(t, cfg.Events)
	evs := cfg.Events.Latest(10)
	require.Len(t, evs, 1)
	assert.Equal(t, eventTokenDeadline, evs[0].Type)
	assert.Equal(t, contract.SeverityInfo, evs[0].Severity)
	assert.Equal(t, "am-restart", evs[0].Reason)
	assert.Equal(t, "the HDFS delegation token (10.0.0.6:8020) YARN starts new AM attempts with expires at "+now.Add(2*time.Hour).UTC().Format(time.RFC3339)+
		` (max lifetime; the keytab renews the job's own tokens, not this one): an AM restart after it can fail to localise its files ("token has expired") unless the ResourceManager has yarn.resourcemanager.proxy-user-privileges.enabled`, evs[0].Message)
	require.Len(t, hook.Entries, 1)
	line, _ := hook.LastEntry().String()
	assert.NotContains(t, line, "pw-")

	for name, tc := range map[string]struct {
		principal    string
		attemptsLeft bool
		proxy        string
	}{
		"no keytab":                   {"", true, ""},
		"the last attempt":            {"alice@EXAMPLE.COM", false, ""},
		"the RM gets tokens itself":   {"alice@EXAMPLE.COM", true, "true"},
		"the RM's setting is unclear": {"alice@EXAMPLE.COM", true, "maybe"},
	} {
		t.Setenv(contract.EnvPrincipal, tc.principal)
		conf := yarnrpc.NewConfig(nil)
		if tc.proxy != "" {
			conf.Set(proxyUserPrivilegesKey, tc.proxy)
		}
		_, ok := restartLimit(conf, c, tc.attemptsLeft)
		assert.Equal(t, name == "the RM's setting is unclear", ok, name)
	}
	t.Setenv(contract.EnvPrincipal, "alice@EXAMPLE.COM")
	_, ok := restartLimit(conf, yarnrpc.NewCredentials(), true)
	assert.False(t, ok, "no HDFS token")
}

// The driver's delegation token file (contract.EnvDelegationTokens) holds the delegation tokens and
// nothing else, 0600, and a rewrite replaces the file whole (a new inode renamed over it), so a
// process reading it sees the old tokens or the new ones.
func TestDriverDelegationTokenFile(t *testing.T) {
	creds := yarnrpc.NewCredentials()
	creds.Tokens["amrm"] = yarnrpc.Token{Kind: yarnrpc.AMRMTokenKind, Identifier: []byte("a"), Password: []byte("amrm-password")}
	creds.Tokens["nn"] = yarnrpc.Token{Kind: yarnrpc.HDFSDelegationTokenKind, Service: "127.0.0.1:8020", Identifier: []byte("old"), Password: []byte("p1")}
	creds.Secrets[contract.SecretAlias] = []byte("the-application-secret")
	r := &tokenRefresher{creds: creds}
	path := filepath.Join(t.TempDir(), driverDelegationTokensFile)
	require.NoError(t, r.keepTokenFile(path))

	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	got, err := yarnrpc.ReadCredentialsFile(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"nn"}, got.Aliases(), "the delegation tokens alone: no AM-RM token")
	assert.Empty(t, got.Secrets, "no secret")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "the-application-secret")

	fresh := yarnrpc.NewCredentials()
	fresh.Tokens["nn"] = yarnrpc.Token{Kind: yarnrpc.HDFSDelegationTokenKind, Service: "127.0.0.1:8020", Identifier: []byte("new"), Password: []byte("p2")}
	require.NoError(t, writeDelegationTokens(path, fresh))
	st2, err := os.Stat(path)
	require.NoError(t, err)
	assert.False(t, os.SameFile(st, st2), "a new file renamed over the old one, not the old one written in place")
	got, err = yarnrpc.ReadCredentialsFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(got.Tokens["nn"].Identifier))
	left, err := filepath.Glob(filepath.Join(filepath.Dir(path), ".yarn-am-delegation-tokens-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file left behind")
}
