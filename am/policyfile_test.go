package am

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPolicyArgs(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "job.toml")
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	args, err := PolicyArgs(write(`
[taskexecutor]
command = "true"
[policy]
pending-timeout = "5s"
on-pending-timeout = "fail"
node-max-failures = 2
node-exclusion-timeout = "90s"
max-failure-rate = -1
`))
	require.NoError(t, err)
	assert.Equal(t, []string{"--max-failure-rate=-1", "--node-exclusion-timeout=1m30s", "--node-max-failures=2",
		"--on-pending-timeout=fail", "--pending-timeout=5s"}, args)

	args, err = PolicyArgs(write("[taskexecutor]\ncommand = \"true\"\n"))
	require.NoError(t, err)
	assert.Empty(t, args)

	_, err = PolicyArgs(write("[policy]\npending-timeout = 5\non-pending-timeout = \"later\"\nretries = 1\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `policy.pending-timeout = 5: want a positive duration in quotes`)
	assert.Contains(t, err.Error(), `policy.on-pending-timeout = later: want "wait" or "fail"`)
	assert.Contains(t, err.Error(), `policy.retries: unknown key; valid keys are max-failure-rate`)
}

func TestPolicyFlagsParseWhatPolicyArgsWrites(t *testing.T) {
	c := PolicyConfig{}.WithDefaults()
	fs := flag.NewFlagSet("am", flag.ContinueOnError)
	c.RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"--max-failure-rate=-1", "--node-exclusion-timeout=1m30s", "--node-max-failures=2", "--on-pending-timeout=fail", "--pending-timeout=5s"}))
	assert.Equal(t, -1, c.MaxFailureRate)
	assert.Equal(t, 90*time.Second, c.NodeExclusionTimeout)
	assert.Equal(t, 2, c.NodeMaxFailures)
	assert.Equal(t, PendingFail, c.OnPendingTimeout)
	assert.Equal(t, 5*time.Second, c.PendingTimeout)
	assert.Equal(t, DefaultFailureWindow, c.FailureWindow)
	for _, k := range PolicyKeys {
		assert.NotNil(t, fs.Lookup(k), k)
		assert.Contains(t, PolicyFlagsUsage, "--"+k+" ", k)
	}
}
