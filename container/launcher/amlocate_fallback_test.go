package launcher

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// On a Kerberized cluster the AM locator's NameNode connection, which authenticates with the HDFS
// delegation token of the token file, refuses a server that offers only SIMPLE (asking it to continue
// unauthenticated), as every other client of yarn-am does (docs/security.md#no-fallback-to-simple);
// so does it when the AM did not say the mode (an older AM) but a token is used. Before, the launcher
// knew no mode, took the cluster for an insecure one and followed the fallback: a server posing as
// the NameNode could name any address as the new AM. Without a token it does not try SIMPLE on a
// Kerberized cluster at all, and a bad mode is an error naming the variable.
func TestStagingLookupRefusesASimpleFallback(t *testing.T) {
	srv, err := rpctest.NewServer(rpctest.Options{SimpleFirst: true})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	staging := "hdfs://" + srv.Addr() + "/user/alice/.yarn-am/application_1_0001"

	dir := t.TempDir()
	withToken := filepath.Join(dir, "tokens")
	creds := yarnrpc.NewCredentials()
	creds.Tokens[srv.Addr()] = yarnrpc.Token{Identifier: []byte("id"), Password: []byte("pw"),
		Kind: yarnrpc.HDFSDelegationTokenKind, Service: srv.Addr()}
	require.NoError(t, creds.WriteFile(withToken))
	without := filepath.Join(dir, "empty")
	require.NoError(t, yarnrpc.NewCredentials().WriteFile(without))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, mode := range []string{"kerberos", ""} {
		lookup, err := StagingLookup(staging, "", mode, withToken)
		require.NoError(t, err)
		_, err = lookup(ctx)
		require.Error(t, err, "mode %q", mode)
		assert.True(t, errors.Is(err, yarnrpc.ErrAccessControl), "mode %q: %v", mode, err)
		assert.Contains(t, err.Error(), "fall back to SIMPLE", "mode %q", mode)
	}
	assert.Empty(t, srv.Connections(), "no connection context (and no call) reached the server")

	lookup, err := StagingLookup(staging, "", "kerberos", without)
	require.NoError(t, err)
	_, err = lookup(ctx)
	require.ErrorContains(t, err, "holds no HDFS delegation token")
	assert.Empty(t, srv.Connections(), "nothing is sent as SIMPLE on a Kerberized cluster")

	_, err = StagingLookup(staging, "", "ldap", withToken)
	require.ErrorContains(t, err, contract.EnvHadoopAuthentication)
}
