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

// A driver's secret (contract.DriverSecretPrefix) is in the AM's credentials and the driver's, never
// a TaskExecutor's, whether at launch or in refreshed tokens; a framework cannot hand one to the
// TaskExecutors as a worker secret (docs/flink.md#class-data-sharing).
func TestTaskExecutorsGetNoDriverSecret(t *testing.T) {
	am := yarnrpc.NewCredentials()
	am.Secrets[contract.SecretAlias] = []byte("s")
	am.Secrets[contract.DriverSecretPrefix+"flink-cds-key"] = []byte("k")
	te := taskExecutorCredentials(am)
	assert.Contains(t, te.Secrets, contract.SecretAlias)
	assert.NotContains(t, te.Secrets, contract.DriverSecretPrefix+"flink-cds-key")
	d := driverCredentials(am)
	assert.Equal(t, []byte("k"), d.Secrets[contract.DriverSecretPrefix+"flink-cds-key"])
	assert.Contains(t, d.Secrets, contract.SecretAlias)
	err := addWorkerSecrets(yarnrpc.NewCredentials(), nil, map[string][]byte{contract.DriverSecretPrefix + "x": []byte("v")})
	assert.ErrorContains(t, err, "the driver's alone")
	assert.False(t, contract.IsDriverSecret(contract.DriverSecretPrefix), "the prefix alone is no alias")
	assert.False(t, contract.IsDriverSecret("yarn-am.secret"))
}
