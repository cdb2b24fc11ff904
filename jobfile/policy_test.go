package jobfile

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readPolicy(t *testing.T, body string) (Policy, error) {
	t.Helper()
	f, err := Read(writeJob(t, body))
	require.NoError(t, err)
	return f.Policy()
}

func TestPolicy(t *testing.T) {
	p, err := readPolicy(t, `
[taskexecutor]
command = "true"
[policy]
pending-timeout = "5s"
on-pending-timeout = "fail"
node-max-failures = 2
node-exclusion-timeout = "90s"
max-failure-rate = -1
`)
	require.NoError(t, err)
	want := DefaultPolicy()
	want.PendingTimeout, want.OnPendingTimeout, want.NodeMaxFailures = 5*time.Second, PendingFail, 2
	want.NodeExclusionTimeout, want.MaxFailureRate = 90*time.Second, -1
	assert.Equal(t, want, p)

	p, err = readPolicy(t, "[taskexecutor]\ncommand = \"true\"\n")
	require.NoError(t, err)
	assert.Equal(t, Policy{MaxFailureRate: 10, FailureWindow: 5 * time.Minute, RestartBackoff: time.Second, RestartBackoffMax: time.Minute,
		NodeMaxFailures: 3, NodeExclusionTimeout: 10 * time.Minute, PendingTimeout: time.Minute, OnPendingTimeout: PendingWait}, p,
		"without [policy], the defaults of docs/job-file.md#the-policy-table")

	_, err = readPolicy(t, "[policy]\npending-timeout = 5\non-pending-timeout = \"later\"\nretries = 1\nmax-failure-rate = 1000001\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `policy.pending-timeout = 5: want a positive duration in quotes`)
	assert.Contains(t, err.Error(), `policy.on-pending-timeout = later: want "wait" or "fail"`)
	assert.Contains(t, err.Error(), `policy.retries: unknown key; valid keys are max-failure-rate`)
	assert.Contains(t, err.Error(), `policy.max-failure-rate = 1000001: want an integer from -1 (off) to 1000000`)
	assert.NotContains(t, err.Error(), "--", "the job file's problems name its keys, not the AM's flags")
}

func TestPolicyThatIsNotATable(t *testing.T) {
	_, err := readPolicy(t, "policy = 3\n[taskexecutor]\ncommand = \"true\"\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "policy = 3: want a table ([policy] or policy = {...}), not an integer")
}

// TestPolicyFlagsAndKeysAreOneDefinition: the AM's flags are the [policy] keys, documented in its
// usage, parsed to the same values and refused with the same bounds, in the words the user wrote.
func TestPolicyFlagsAndKeysAreOneDefinition(t *testing.T) {
	var pf PolicyFlags
	fs := flag.NewFlagSet("am", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pf.Register(fs)
	for _, k := range PolicyKeys() {
		assert.NotNil(t, fs.Lookup(k), k)
		assert.Contains(t, PolicyFlagsUsage(), "--"+k+" ", k)
	}
	require.NoError(t, fs.Parse([]string{"--max-failure-rate=-1", "--node-exclusion-timeout=1m30s", "--node-max-failures=2",
		"--on-pending-timeout=fail", "--pending-timeout=5s"}))
	fromFlags := DefaultPolicy()
	require.NoError(t, pf.Apply(&fromFlags))
	fromFile, err := readPolicy(t, "[policy]\nmax-failure-rate = -1\nnode-exclusion-timeout = \"1m30s\"\nnode-max-failures = 2\n"+
		"on-pending-timeout = \"fail\"\npending-timeout = \"5s\"\n")
	require.NoError(t, err)
	assert.Equal(t, fromFile, fromFlags)

	// Flags win over the file: Apply sets only what was given.
	pf = PolicyFlags{}
	fs = flag.NewFlagSet("am", flag.ContinueOnError)
	pf.Register(fs)
	require.NoError(t, fs.Parse([]string{"--restart-backoff", "2s"}))
	p := fromFile
	require.NoError(t, pf.Apply(&p))
	assert.Equal(t, 2*time.Second, p.RestartBackoff)
	assert.Equal(t, fromFile.PendingTimeout, p.PendingTimeout)

	pf = PolicyFlags{}
	fs = flag.NewFlagSet("am", flag.ContinueOnError)
	pf.Register(fs)
	require.NoError(t, fs.Parse([]string{"--max-failure-rate", "-5", "--pending-timeout=-1m", "--node-max-failures=x", "--on-pending-timeout=later"}))
	err = pf.Apply(new(Policy))
	require.Error(t, err)
	for _, want := range []string{"--max-failure-rate=-5: want an integer from -1 (off) to 1000000", "--pending-timeout=-1m: want a positive duration like 30s or 5m",
		"--node-max-failures=x: want an integer", `--on-pending-timeout=later: want "wait" or "fail"`} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), "policy.", "a flag's problem names the flag")
}

func TestPolicyFlagsUsageLinesUp(t *testing.T) {
	u := PolicyFlagsUsage()
	assert.Contains(t, u, "  --max-failure-rate N         counted TaskExecutor failures allowed within --failure-window before the\n"+
		"                               application fails; -1 turns the rule off (default 10)\n")
	assert.Contains(t, u, "  --node-exclusion-timeout DUR how long a node stays excluded (default 10m0s)\n")
	assert.Contains(t, u, "  --on-pending-timeout ACTION  wait (keep asking) or fail (end the application FAILED) (default wait)\n")
	assert.True(t, strings.HasSuffix(u, "never count."))
}

// TestPolicyDefines: -D policy.<key> reads a count as a number and a duration as written, so it
// meets the table's checks.
func TestPolicyDefines(t *testing.T) {
	f, err := Read(writeJob(t, "[taskexecutor]\ncommand = \"true\"\n"))
	require.NoError(t, err)
	_, err = f.ApplyDefines([]string{"policy.max-failure-rate=4", "policy.pending-timeout=5s"})
	require.NoError(t, err)
	p, err := f.Policy()
	require.NoError(t, err)
	assert.Equal(t, 4, p.MaxFailureRate)
	assert.Equal(t, 5*time.Second, p.PendingTimeout)
}
