package resources

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDiscoveryStartFailureSaysWhy: a custom discovery script that is there but cannot start says
// which part is wrong (its #! line's interpreter, no #! line, Windows line ends), not "no such file
// or directory" (issue 33 §2).
func TestDiscoveryStartFailureSaysWhy(t *testing.T) {
	for content, want := range map[string]string{
		"#!/usr/bin/pythonX\nprint(0)\n": "its #! line names /usr/bin/pythonX, which does not exist on this node",
		"echo 0\n":                       "has no #! line",
		"#!/bin/sh\r\necho 0\r\n":        "its #! line ends in a carriage return (\\r)",
	} {
		p := filepath.Join(t.TempDir(), "discover.sh")
		require.NoError(t, os.WriteFile(p, []byte(content), 0o755))
		_, err := RunDiscovery(context.Background(), p, 1, "", 5*time.Second)
		require.Error(t, err, content)
		assert.Contains(t, err.Error(), p+": "+want, content)
		assert.NotContains(t, err.Error(), "no such file or directory", content)
	}
}
