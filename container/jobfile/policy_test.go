package jobfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func policyArgs(t *testing.T, path string) ([]string, error) {
	t.Helper()
	f, err := Read(path)
	require.NoError(t, err)
	return f.PolicyArgs()
}

func TestPolicyArgs(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "job.toml")
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	args, err := policyArgs(t, write(`
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

	args, err = policyArgs(t, write("[taskexecutor]\ncommand = \"true\"\n"))
	require.NoError(t, err)
	assert.Empty(t, args)

	_, err = policyArgs(t, write("[policy]\npending-timeout = 5\non-pending-timeout = \"later\"\nretries = 1\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `policy.pending-timeout = 5: want a positive duration in quotes`)
	assert.Contains(t, err.Error(), `policy.on-pending-timeout = later: want "wait" or "fail"`)
	assert.Contains(t, err.Error(), `policy.retries: unknown key; valid keys are max-failure-rate`)
}

func TestPolicyThatIsNotATable(t *testing.T) {
	_, err := policyArgs(t, writeJob(t, "policy = 3\n[taskexecutor]\ncommand = \"true\"\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "policy = 3: want a table ([policy] or policy = {...}), not an integer")
}
