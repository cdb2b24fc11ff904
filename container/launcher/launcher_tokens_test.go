package launcher

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

func credsWith(secret, pw string, ca []byte) []byte {
	c := yarnrpc.NewCredentials()
	c.Secrets[contract.SecretAlias] = []byte(secret)
	c.Secrets[contract.TLSCACertAlias] = ca
	c.Tokens["127.0.0.1:8020"] = yarnrpc.Token{Identifier: []byte("id"), Password: []byte(pw), Kind: yarnrpc.HDFSDelegationTokenKind, Service: "127.0.0.1:8020"}
	return c.Marshal()
}

// The launcher replaces its token file with the AM's new credentials (atomically, keeping the mode),
// only with the right secret, and leaves it alone when nothing changed or the answer is not usable.
func TestTokenFileRefresher(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "container_tokens")
	var current []byte
	srv, ca := amtlstest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(current)
	}))
	require.NoError(t, os.WriteFile(path, credsWith("s3cret", "old", ca), 0o640))
	current = credsWith("s3cret", "new", ca)
	t.Setenv(contract.EnvTokensURL, srv.URL)
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", path)
	r, err := TokenFileRefresherFromEnv(logrus.New())
	require.NoError(t, err)
	require.NotNil(t, r)

	changed, err := r.Once(context.Background())
	require.NoError(t, err)
	assert.True(t, changed)
	got, err := yarnrpc.ReadCredentialsFile(path)
	require.NoError(t, err)
	assert.Equal(t, []byte("new"), got.Tokens["127.0.0.1:8020"].Password)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file is left behind")

	changed, err = r.Once(context.Background())
	require.NoError(t, err)
	assert.False(t, changed)

	r.Secret = "wrong"
	_, err = r.Once(context.Background())
	assert.ErrorContains(t, err, "401")

	r.Secret = "s3cret"
	current = []byte("garbage")
	_, err = r.Once(context.Background())
	assert.ErrorContains(t, err, "not a token file")
	got, err = yarnrpc.ReadCredentialsFile(path)
	require.NoError(t, err)
	assert.Equal(t, []byte("new"), got.Tokens["127.0.0.1:8020"].Password, "a bad answer leaves the file alone")
}

func TestTokenFileRefresherOffWithoutURL(t *testing.T) {
	t.Setenv(contract.EnvTokensURL, "")
	r, err := TokenFileRefresherFromEnv(logrus.New())
	require.NoError(t, err)
	assert.Nil(t, r)
}

// The token refresher, like the reporter, sends the secret only over HTTPS to the pinned AM.
func TestTokenFileRefresherRefusesPlainHTTPAndOtherCertificates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "container_tokens")
	_, appCA := amtlstest.Server(t, http.NotFoundHandler())
	saw := 0
	impostor, _ := amtlstest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			saw++
		}
	}))
	require.NoError(t, os.WriteFile(path, credsWith("s3cret", "old", appCA), 0o600))
	t.Setenv("HADOOP_TOKEN_FILE_LOCATION", path)
	t.Setenv(contract.EnvTokensURL, "http://127.0.0.1:1/api/v1/tokens")
	_, err := TokenFileRefresherFromEnv(logrus.New())
	assert.ErrorContains(t, err, "not https://")

	t.Setenv(contract.EnvTokensURL, impostor.URL+"/api/v1/tokens")
	r, err := TokenFileRefresherFromEnv(logrus.New())
	require.NoError(t, err)
	_, err = r.Once(context.Background())
	assert.ErrorContains(t, err, "certificate")
	assert.Zero(t, saw, "the impostor never saw the secret")
}
