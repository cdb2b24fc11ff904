package am

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// A framework's worker secrets reach the TaskExecutors' launch context, the driver's token file and
// the refresher's served credentials (which overwrite running TaskExecutors' token files), and stay
// in those a later replacement publishes; an alias the credentials hold already is refused.
func TestWorkerSecretsReachEveryTokenFile(t *testing.T) {
	creds := yarnrpc.NewCredentials()
	creds.Secrets[contract.SecretAlias] = []byte("app-secret")
	creds.Tokens["hdfs"] = yarnrpc.Token{Kind: "HDFS_DELEGATION_TOKEN", Service: "nn:8020"}
	r := &tokenRefresher{creds: taskExecutorCredentials(creds)}
	require.NoError(t, addWorkerSecrets(creds, r, map[string][]byte{"fw.key": []byte("k")}))

	assert.Equal(t, []byte("k"), taskExecutorCredentials(creds).Secrets["fw.key"], "launch context and driver")
	served, err := yarnrpc.ParseCredentials(r.hdts)
	require.NoError(t, err)
	assert.Equal(t, []byte("k"), served.Secrets["fw.key"], "served to the launchers")
	assert.Equal(t, []byte("app-secret"), served.Secrets[contract.SecretAlias])
	assert.Contains(t, served.Tokens, "hdfs")
	assert.Equal(t, map[string][]byte{"fw.key": []byte("k")}, r.extra, "kept for the next replacement")

	err = addWorkerSecrets(creds, nil, map[string][]byte{contract.SecretAlias: []byte("x")})
	assert.ErrorContains(t, err, `"yarn-am.secret"`)
	assert.Equal(t, []byte("app-secret"), creds.Secrets[contract.SecretAlias], "not replaced")
	assert.NoError(t, addWorkerSecrets(creds, nil, nil))
}
