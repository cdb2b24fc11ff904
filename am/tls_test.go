package am

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// The AM serves HTTPS with a certificate from the client's authority; its key leaves the AM's
// credentials at once, so the TaskExecutors' launch context carries the certificate but never the
// key; a client trusting the authority verifies the AM, one trusting another authority does not.
func TestTLSFromCredentialsKeepsTheKeyInTheAM(t *testing.T) {
	caCert, caKey, err := amtls.NewAuthority("application_1_0001")
	require.NoError(t, err)
	creds := credsWithAMRM()
	creds.Secrets[contract.TLSCACertAlias], creds.Secrets[contract.TLSCAKeyAlias] = caCert, caKey
	at, err := tlsFromCredentials(creds, "127.0.0.1", "application_1_0001", quietLog)
	require.NoError(t, err)
	assert.NotContains(t, creds.Secrets, contract.TLSCAKeyAlias)
	assert.Equal(t, caCert, creds.Secrets[contract.TLSCACertAlias])

	clc, err := taskExecutorLaunch{Staged: fakeStaged{}, JobFile: "job.toml", Command: "true", Creds: creds}.LaunchContext()
	require.NoError(t, err)
	te, err := yarnrpc.ParseCredentials(clc.GetTokens())
	require.NoError(t, err)
	assert.Equal(t, caCert, te.Secrets[contract.TLSCACertAlias], "TaskExecutors get the certificate")
	assert.NotContains(t, te.Secrets, contract.TLSCAKeyAlias)
	assert.NotContains(t, string(clc.GetTokens()), "PRIVATE KEY")

	// Even AM credentials that still held the key are filtered, for launch contexts and for the
	// refreshed tokens (both are built by taskExecutorCredentials).
	creds.Secrets[contract.TLSCAKeyAlias] = caKey
	te = taskExecutorCredentials(creds)
	assert.NotContains(t, te.Secrets, contract.TLSCAKeyAlias)
	assert.Contains(t, te.Secrets, contract.SecretAlias)
	_, amrm := te.TokenOfKind(yarnrpc.AMRMTokenKind)
	assert.False(t, amrm)
	clc, err = taskExecutorLaunch{Staged: fakeStaged{}, JobFile: "job.toml", Command: "true", Creds: creds}.LaunchContext()
	require.NoError(t, err)
	assert.NotContains(t, string(clc.GetTokens()), "PRIVATE KEY")

	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	srv.Listener.Close()
	srv.Listener, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv.TLS = at.Config
	srv.StartTLS()
	defer srv.Close()
	good, err := amtls.HTTPClient(caCert, 5*time.Second)
	require.NoError(t, err)
	resp, err := good.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	otherCA, _, err := amtls.NewAuthority("other")
	require.NoError(t, err)
	bad, err := amtls.HTTPClient(otherCA, 5*time.Second)
	require.NoError(t, err)
	_, err = bad.Get(srv.URL)
	require.Error(t, err, "a client trusting another authority refuses the AM")
}

// Without an authority in its credentials the AM makes one; with half of one it refuses to start.
func TestTLSFromCredentialsWithoutAnAuthority(t *testing.T) {
	creds := credsWithAMRM()
	at, err := tlsFromCredentials(creds, "127.0.0.1", "application_1_0001", quietLog)
	require.NoError(t, err)
	assert.Equal(t, at.CACert, creds.Secrets[contract.TLSCACertAlias])
	assert.NotContains(t, creds.Secrets, contract.TLSCAKeyAlias)

	caCert, _, err := amtls.NewAuthority("x")
	require.NoError(t, err)
	half := credsWithAMRM()
	half.Secrets[contract.TLSCACertAlias] = caCert
	_, err = tlsFromCredentials(half, "127.0.0.1", "application_1_0001", quietLog)
	require.Error(t, err)
	assert.Contains(t, err.Error(), contract.TLSCAKeyAlias)
}
