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

// A link planted at the secret's name is replaced, never written through; a directory others can
// write, or a link in place of the application's directory, is refused before anything is written.
func TestAppSecretRefusesPlantedLinksAndSharedDirectories(t *testing.T) {
	const app = "application_1700000000000_0043"
	cfg := t.TempDir()
	t.Setenv("YARN_AM_CONFIG_DIR", cfg)
	dir := filepath.Join(cfg, "apps", app)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("untouched"), 0o644))
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, "secret")))
	require.NoError(t, SaveAppSecret(app, "s3cret", []byte("PEM")))
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "untouched", string(b), "the link's target is not written")
	fi, err := os.Lstat(filepath.Join(dir, "secret"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the link was replaced by the secret's own file")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// A group-writable application directory.
	const app2 = "application_1700000000000_0044"
	dir2 := filepath.Join(cfg, "apps", app2)
	require.NoError(t, os.Mkdir(dir2, 0o700))
	require.NoError(t, os.Chmod(dir2, 0o770))
	err = SaveAppSecret(app2, "s3cret", []byte("PEM"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "writable by others")
	_, err = os.Stat(filepath.Join(dir2, "secret"))
	assert.True(t, os.IsNotExist(err), "nothing is written there")

	// A world-writable apps directory.
	require.NoError(t, os.Chmod(filepath.Join(cfg, "apps"), 0o777))
	err = SaveAppSecret("application_1700000000000_0045", "s3cret", []byte("PEM"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chmod 700 "+filepath.Join(cfg, "apps"))
	require.NoError(t, os.Chmod(filepath.Join(cfg, "apps"), 0o700))

	// A link in place of the application's directory.
	const app3 = "application_1700000000000_0046"
	elsewhere := t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(cfg, "apps", app3)))
	err = SaveAppSecret(app3, "s3cret", []byte("PEM"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a directory")
	_, err = os.Stat(filepath.Join(elsewhere, "secret"))
	assert.True(t, os.IsNotExist(err))
}
