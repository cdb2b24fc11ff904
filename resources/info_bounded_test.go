package resources

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadInfoFileIsBounded: the info file lives in the container's working directory, where the worker
// can put a named pipe or a device in its place: refused promptly, naming the file.
func TestReadInfoFileIsBounded(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "external-resources.json")
	require.NoError(t, syscall.Mkfifo(pipe, 0o644))
	for path, want := range map[string]string{pipe: "named pipe", "/dev/zero": "a device"} {
		done := make(chan error, 1)
		go func() { _, err := ReadInfoFile(path); done <- err }()
		select {
		case err := <-done:
			require.Error(t, err, path)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), want)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still reading after 10s", path)
		}
	}
}
