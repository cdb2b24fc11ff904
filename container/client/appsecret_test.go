package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppSecretIsKeptForItsUserAlone(t *testing.T) {
	t.Setenv("YARN_AM_CONFIG_DIR", t.TempDir())
	const app = "application_1700000000000_0042"
	_, _, err := LoadAppSecret(app)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "only the user who submitted it")
	require.NoError(t, SaveAppSecret(app, "s3cret", []byte("PEM")))
	s, ca, err := LoadAppSecret(app)
	require.NoError(t, err)
	assert.Equal(t, "s3cret", s)
	assert.Equal(t, []byte("PEM"), ca)
	dir, err := AppSecretsDir()
	require.NoError(t, err)
	st, err := os.Stat(filepath.Join(dir, app, "secret"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	_, _, err = LoadAppSecret("../../etc")
	assert.Error(t, err, "only application ids name a directory")
}
