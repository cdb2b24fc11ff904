package flink

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// The driver's outcome replaces whatever is at the outcome file: a named pipe there (which used to
// block flink-jobmanager's write until someone read it) or a link to another file (which the write
// used to follow) becomes the regular file with the outcome, readable by the user alone, and the
// linked file is untouched (issue 40 §7).
func TestPublishOutcomeReplacesWhatIsInItsPlace(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	require.NoError(t, os.WriteFile(other, []byte("keep me"), 0o600))
	for name, plant := range map[string]func(path string) error{
		"a named pipe": func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"a link":       func(p string) error { return os.Symlink(other, p) },
		"nothing":      func(string) error { return nil },
	} {
		path := filepath.Join(dir, contract.OutcomeFileName)
		require.NoError(t, plant(path), name)
		t.Setenv(contract.EnvOutcomeFile, path)
		done := make(chan struct{})
		go func() { defer close(done); publishOutcome("Flink job %s FAILED", "j") }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: writing the outcome blocked", name)
		}
		st, err := os.Lstat(path)
		require.NoError(t, err, name)
		assert.True(t, st.Mode().IsRegular(), "%s: %s", name, st.Mode())
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), name)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "Flink job j FAILED", string(data), name)
		kept, err := os.ReadFile(other)
		require.NoError(t, err)
		assert.Equal(t, "keep me", string(kept), name)
		require.NoError(t, os.Remove(path))
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left: %v", entries)
}
