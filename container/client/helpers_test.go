package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeJob writes a job file (and the worker it names) into a fresh directory and returns its path.
func writeJob(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "worker"), []byte("#!/bin/sh\n"), 0o755))
	p := filepath.Join(dir, "job.toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}
