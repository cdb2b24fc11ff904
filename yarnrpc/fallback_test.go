package yarnrpc

import (
	"errors"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// A server that answers the SASL negotiation with SUCCESS, or offers only SIMPLE, asks the client to
// continue unauthenticated. KERBEROS clients refuse unless ipc.client.fallback-to-simple-auth-allowed
// is set; TOKEN clients refuse too unless the cluster itself does not use Kerberos.
func TestSimpleFallbackPolicy(t *testing.T) {
	svc, err := rpctest.NewKerberos("rm", "localhost", "EXAMPLE.COM")
	require.NoError(t, err)
	login, _ := fakeLogin(t, svc, "alice")
	kerberos := KerberosAuth(login, "rm/_HOST@EXAMPLE.COM")
	token := TokenAuth(Token{Identifier: []byte("id"), Password: []byte("pw")}, "alice")

	servers := map[string]rpctest.Options{
		"success-instead-of-challenge": {Simple: true},
		"simple-offered":               {SimpleFirst: true},
	}
	for name, so := range servers {
		for _, tc := range []struct {
			name     string
			auth     Auth
			allowKey bool
			insecure bool
			allowed  bool
		}{
			{"kerberos", kerberos, false, false, false},
			{"kerberos/insecure-cluster", kerberos, false, true, false},
			{"kerberos/key", kerberos, true, false, true},
			{"token/secure-cluster", token, false, false, false},
			{"token/insecure-cluster", token, false, true, true},
			{"token/secure-cluster/key", token, true, false, true},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				srv := newServer(t, so)
				echo(srv)
				logger, hook := logtest.NewNullLogger()
				conn, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Auth: tc.auth,
					FallbackToSimpleAllowed: tc.allowKey, InsecureCluster: tc.insecure, Logger: logger})
				if !tc.allowed {
					require.Error(t, err)
					assert.True(t, errors.Is(err, ErrAccessControl), "a refusal is not retried: %v", err)
					assert.Contains(t, err.Error(), srv.Addr())
					assert.Contains(t, err.Error(), "fall back to SIMPLE")
					assert.Contains(t, err.Error(), "ipc.client.fallback-to-simple-auth-allowed=true")
					assert.Empty(t, srv.Connections(), "no connection context (and no call) reached the server")
					assert.Equal(t, 0, srv.Calls("echo"))
					return
				}
				require.NoError(t, err)
				defer conn.Close()
				assert.Equal(t, AuthSimple, conn.AuthMethod())
				assert.Equal(t, "x", callEcho(t, conn, "x"))
				var warned bool
				for _, e := range hook.AllEntries() {
					if e.Level == logrus.WarnLevel && assert.Contains(t, e.Message, "fall back to SIMPLE") {
						warned = true
					}
				}
				assert.True(t, warned, "an allowed fallback is logged as a warning")
			})
		}
	}
}

// A server listing SIMPLE first next to TOKEN cannot talk a client out of authenticating, even one
// that would accept a fallback.
func TestSimpleOfferedFirstDoesNotDowngrade(t *testing.T) {
	srv := newServer(t, rpctest.Options{SimpleFirst: true, Tokens: map[string][]byte{"id": []byte("pw")}})
	echo(srv)
	conn, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, FallbackToSimpleAllowed: true,
		Auth: TokenAuth(Token{Identifier: []byte("id"), Password: []byte("pw")}, "alice")})
	require.NoError(t, err)
	defer conn.Close()
	assert.Equal(t, AuthToken, conn.AuthMethod())
	assert.Equal(t, "x", callEcho(t, conn, "x"))
	require.Len(t, srv.Connections(), 1)
	assert.Equal(t, "TOKEN", srv.Connections()[0].Auth)
}

// ConnDefaults carries the fallback key and whether the cluster uses Kerberos.
func TestConnDefaultsSimpleFallback(t *testing.T) {
	o, err := NewConfig(nil).ConnDefaults()
	require.NoError(t, err)
	assert.False(t, o.FallbackToSimpleAllowed)
	assert.True(t, o.InsecureCluster)

	o, err = NewConfig(map[string]string{"hadoop.security.authentication": "kerberos"}).ConnDefaults()
	require.NoError(t, err)
	assert.False(t, o.FallbackToSimpleAllowed)
	assert.False(t, o.InsecureCluster)

	o, err = NewConfig(map[string]string{"hadoop.security.authentication": "kerberos", KeyFallbackToSimpleAllowed: "true"}).ConnDefaults()
	require.NoError(t, err)
	assert.True(t, o.FallbackToSimpleAllowed)

	_, err = NewConfig(map[string]string{KeyFallbackToSimpleAllowed: "yes"}).ConnDefaults()
	require.Error(t, err)
	assert.Contains(t, err.Error(), KeyFallbackToSimpleAllowed)
}
