package am

import (
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/jobfile"
)

// TestPolicyFlagsParseWhatPolicyArgsWrites: the flags jobfile.File.PolicyArgs writes for the [policy]
// table are the AM's flags of the same names.
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
	assert.Equal(t, []string{PendingWait, PendingFail}, []string{jobfile.PendingWait, jobfile.PendingFail},
		"the job file's on-pending-timeout values are the flag's")
	for _, k := range jobfile.PolicyKeys {
		assert.NotNil(t, fs.Lookup(k), k)
		assert.Contains(t, PolicyFlagsUsage, "--"+k+" ", k)
	}
}
