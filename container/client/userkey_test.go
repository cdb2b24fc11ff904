package client

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A user's key is made on first use (32 random bytes, 0600 in a 0700 directory) and the same ever
// after, also to submits that ask at once; a key of another name is another key. A key file that is
// a link, readable by others, someone else's or not a key, and a directory others may write, are
// errors naming the file, never replaced.
func TestUserKeyIsMadeOnceAndKeptPrivate(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("YARN_AM_CONFIG_DIR", cfg)
	dir := filepath.Join(cfg, "keys")
	var wg sync.WaitGroup
	keys := make([][]byte, 8)
	errs := make([]error, 8)
	for i := range keys {
		wg.Add(1)
		go func() { defer wg.Done(); keys[i], errs[i] = UserKey("flink-cds") }()
	}
	wg.Wait()
	for i := range keys {
		require.NoError(t, errs[i])
		assert.Len(t, keys[i], 32)
		assert.Equal(t, keys[0], keys[i], "every submit at once gets the one key")
	}
	again, err := UserKey("flink-cds")
	require.NoError(t, err)
	assert.Equal(t, keys[0], again)
	other, err := UserKey("other")
	require.NoError(t, err)
	assert.NotEqual(t, keys[0], other)
	fi, err := os.Stat(filepath.Join(dir, "flink-cds"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	assert.Empty(t, left, "no temporary file left")

	p := filepath.Join(dir, "flink-cds")
	require.NoError(t, os.Chmod(p, 0o644))
	_, err = UserKey("flink-cds")
	assert.ErrorContains(t, err, p+" is -rw-r--r--, readable by others")
	require.NoError(t, os.Chmod(p, 0o600))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "short"), []byte("abcd\n"), 0o600))
	_, err = UserKey("short")
	assert.ErrorContains(t, err, "does not hold 64 hex digits")

	planted := filepath.Join(t.TempDir(), "planted")
	require.NoError(t, os.WriteFile(planted, []byte("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"), 0o600))
	require.NoError(t, os.Symlink(planted, filepath.Join(dir, "linked")))
	_, err = UserKey("linked")
	assert.ErrorContains(t, err, "is a symbolic link")

	require.NoError(t, os.Chmod(dir, 0o777))
	_, err = UserKey("flink-cds")
	assert.ErrorContains(t, err, "writable by others")
	require.NoError(t, os.Chmod(dir, 0o700))
	require.NoError(t, os.Chmod(cfg, 0o777))
	_, err = UserKey("flink-cds")
	assert.ErrorContains(t, err, "writable by others", "the directory above the keys' counts too")
	require.NoError(t, os.Chmod(cfg, 0o700))

	_, err = UserKey("../x")
	assert.ErrorContains(t, err, "a key's name")

	if os.Geteuid() == 0 {
		require.NoError(t, os.Chown(p, 4242, 4242))
		_, err = UserKey("flink-cds")
		assert.ErrorContains(t, err, "owned by uid 4242")
	}
}
