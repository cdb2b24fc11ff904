package am

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// The AM opens the keytab submit sealed with the key from its credentials, and that key reaches no
// TaskExecutor: it is taken out of the credentials before they are copied, and the TaskExecutors'
// credentials leave it out in any case.
func TestKeytabKeyStaysInTheAM(t *testing.T) {
	plain := bytes.Repeat([]byte("keytab-bytes;"), 10)
	key, err := contract.NewKeytabKey()
	require.NoError(t, err)
	sealed, err := contract.SealKeytab(key, plain)
	require.NoError(t, err)
	dir := t.TempDir()
	staged := filepath.Join(dir, contract.StagedKeytab)
	require.NoError(t, os.WriteFile(staged, sealed, 0o600))

	opened, err := openStagedKeytab(staged, key)
	require.NoError(t, err)
	got, err := os.ReadFile(opened)
	require.NoError(t, err)
	assert.Equal(t, plain, got)
	fi, err := os.Stat(opened)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	other, _ := contract.NewKeytabKey()
	_, err = openStagedKeytab(staged, other)
	assert.ErrorContains(t, err, "does not open")
	require.NoError(t, os.WriteFile(staged, plain, 0o600))
	_, err = openStagedKeytab(staged, key)
	assert.ErrorContains(t, err, "not a keytab sealed", "a keytab staged in the clear is refused")

	creds := credsWithAMRM()
	creds.Secrets[contract.KeytabKeyAlias] = key
	assert.NotContains(t, taskExecutorCredentials(creds).Secrets, contract.KeytabKeyAlias)

	// With a principal, the AM takes the key out of its credentials before anything copies them, and
	// a keytab that does not open is an error naming it (before any login).
	t.Chdir(dir)
	t.Setenv(contract.EnvPrincipal, "alice@EXAMPLE.COM")
	_, err = tokenRefresherFromEnv(context.Background(), yarnrpc.NewConfig(nil), creds, logrus.New())
	require.Error(t, err)
	assert.Contains(t, err.Error(), contract.StagedKeytab)
	assert.NotContains(t, creds.Secrets, contract.KeytabKeyAlias)

	// Without one, too.
	creds.Secrets[contract.KeytabKeyAlias] = key
	t.Setenv(contract.EnvPrincipal, "")
	r, err := tokenRefresherFromEnv(context.Background(), yarnrpc.NewConfig(nil), creds, logrus.New())
	require.NoError(t, err)
	assert.Nil(t, r)
	assert.NotContains(t, creds.Secrets, contract.KeytabKeyAlias)
}
