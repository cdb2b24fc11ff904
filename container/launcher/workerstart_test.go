package launcher

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// TestWorkerStartFailureSaysWhy: a worker script that is there but cannot start says which part is
// wrong, not the kernel's "no such file or directory" for a missing interpreter (issue 33 §2), and a
// worker of 100 KB with escape sequences in its name gives a bounded message without them.
func TestWorkerStartFailureSaysWhy(t *testing.T) {
	for _, c := range []struct {
		name, content string
		want          []string
	}{
		{"missing interpreter", "#!/usr/bin/pythonX\nprint(1)\n", []string{"its #! line names /usr/bin/pythonX, which does not exist on this node"}},
		{"no #! line", "echo hi\n", []string{"has no #! line"}},
		{"Windows line ends", "#!/bin/sh\r\necho hi\r\n", []string{"carriage return (\\r)", "Windows line ends"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newLaunchFixture(t)
			w := filepath.Join(t.TempDir(), "worker.sh")
			require.NoError(t, os.WriteFile(w, []byte(c.content), 0o755))
			code := f.l.Run(context.Background(), []string{w})
			assert.Equal(t, contract.LauncherWorkerStartFailed, code)
			msg := f.stderr.String()
			assert.Contains(t, msg, "yarn-am launch: cannot start the worker "+w+": ")
			for _, s := range c.want {
				assert.Contains(t, msg, s)
			}
			assert.NotContains(t, msg, "no such file or directory")
		})
	}
	t.Run("hostile name", func(t *testing.T) {
		f := newLaunchFixture(t)
		f.l.Run(context.Background(), []string{"/no/such/\x1b[2J\x07" + strings.Repeat("w", 100<<10)})
		msg := f.stderr.String()
		assert.Contains(t, msg, "cannot start the worker")
		assert.Less(t, len(msg), 4<<10)
		assert.NotContains(t, msg, "\x1b")
		assert.NotContains(t, msg, "\x07")
	})
}
