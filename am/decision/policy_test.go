package decision

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/jobfile"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestPolicyFailureRateSlidesAndIgnoresNotTheWorkersFault(t *testing.T) {
	p := NewPolicy(PolicyConfig{MaxFailureRate: 2, FailureWindow: time.Minute, NodeMaxFailures: -1})
	for _, c := range []contract.ExitClass{contract.ExitPreempted, contract.ExitAborted, contract.ExitDisksFailed, contract.ExitKilledByAM, contract.ExitKilledByRM, contract.ExitSucceeded} {
		assert.False(t, p.RecordExit(t0, "n1", c).Counted, c)
	}
	assert.False(t, p.RecordExit(t0, "n1", contract.ExitFailed).RateExceeded)
	assert.False(t, p.RecordExit(t0.Add(10*time.Second), "n1", contract.ExitDiscoveryFailed).RateExceeded)
	d := p.RecordExit(t0.Add(20*time.Second), "n2", contract.ExitMemoryExceeded)
	assert.True(t, d.RateExceeded, "3 counted failures within 1m > 2")
	assert.Contains(t, d.Reason, "--max-failure-rate = 2")

	// The window slides: the first two have left it.
	p = NewPolicy(PolicyConfig{MaxFailureRate: 2, FailureWindow: time.Minute, NodeMaxFailures: -1})
	p.RecordExit(t0, "n1", contract.ExitFailed)
	p.RecordExit(t0.Add(10*time.Second), "n1", contract.ExitFailed)
	assert.False(t, p.RecordExit(t0.Add(65*time.Second), "n1", contract.ExitFailed).RateExceeded)
}

func TestPolicyRestartBackoffDoublesAndCaps(t *testing.T) {
	p := NewPolicy(PolicyConfig{RestartBackoff: time.Second, RestartBackoffMax: 5 * time.Second, FailureWindow: time.Hour, MaxFailureRate: -1, NodeMaxFailures: -1})
	assert.True(t, p.RestartAt(t0).IsZero(), "no failure, no wait")
	var got []time.Duration
	for i := 0; i < 5; i++ {
		got = append(got, p.RecordExit(t0, "n", contract.ExitFailed).RestartBackoff)
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}, got)
	assert.Equal(t, t0.Add(5*time.Second), p.RestartAt(t0))
	assert.True(t, p.RestartAt(t0.Add(2*time.Hour)).IsZero(), "failures outside the window no longer delay restarts")
}

func TestPolicyNodeExclusionAndLift(t *testing.T) {
	p := NewPolicy(PolicyConfig{NodeMaxFailures: 2, FailureWindow: time.Minute, NodeExclusionTimeout: 10 * time.Minute, MaxFailureRate: -1})
	assert.Empty(t, p.RecordExit(t0, "bad", contract.ExitFailed).ExcludeNode)
	assert.Empty(t, p.RecordExit(t0, "good", contract.ExitFailed).ExcludeNode)
	assert.Empty(t, p.RecordExit(t0, "bad", contract.ExitPreempted).ExcludeNode, "not the worker's fault")
	d := p.RecordExit(t0.Add(time.Second), "bad", contract.ExitFailed)
	assert.Equal(t, "bad", d.ExcludeNode)
	assert.Equal(t, 2, d.NodeFailures)
	assert.Empty(t, p.RecordExit(t0.Add(2*time.Second), "bad", contract.ExitFailed).ExcludeNode, "already excluded: not excluded twice")
	assert.Equal(t, []string{"bad"}, p.Excluded())

	all, _ := p.AllExcluded(2)
	assert.False(t, all)
	all, why := p.AllExcluded(1)
	assert.True(t, all)
	assert.Contains(t, why, "every node of the cluster (1) is excluded")
	all, _ = p.AllExcluded(0)
	assert.False(t, all, "unknown cluster size never counts as all excluded")

	assert.Empty(t, p.Lift(t0.Add(5*time.Minute)))
	assert.Equal(t, []string{"bad"}, p.Lift(t0.Add(11*time.Minute)))
	assert.Empty(t, p.Excluded())
}

func TestPolicyPendingTimeoutReportsWithBackoffAndClears(t *testing.T) {
	p := NewPolicy(PolicyConfig{PendingTimeout: 10 * time.Second})
	assert.False(t, p.ObservePending(t0, 1, false).Report, "the clock starts")
	assert.False(t, p.ObservePending(t0.Add(5*time.Second), 1, false).Report)
	// Progress restarts the clock.
	assert.False(t, p.ObservePending(t0.Add(8*time.Second), 1, true).Report)
	assert.False(t, p.ObservePending(t0.Add(15*time.Second), 1, false).Report)
	d := p.ObservePending(t0.Add(18*time.Second), 1, false)
	require.True(t, d.Report)
	assert.False(t, d.Fail, "wait is the default action")
	assert.Equal(t, 10*time.Second, d.PendingFor)
	assert.True(t, p.Reporting())

	// Repeated at a doubling interval: 10s, then 20s, then 40s ...
	assert.False(t, p.ObservePending(t0.Add(27*time.Second), 1, false).Report)
	assert.True(t, p.ObservePending(t0.Add(28*time.Second), 1, false).Report)
	assert.False(t, p.ObservePending(t0.Add(47*time.Second), 1, false).Report)
	assert.True(t, p.ObservePending(t0.Add(48*time.Second), 1, true).Report, "a standing report is not reset by partial progress")

	c := p.ObservePending(t0.Add(50*time.Second), 0, false)
	assert.True(t, c.Cleared)
	assert.False(t, p.ObservePending(t0.Add(51*time.Second), 0, false).Cleared, "cleared once")

	f := NewPolicy(PolicyConfig{PendingTimeout: time.Second, OnPendingTimeout: PendingFail})
	f.ObservePending(t0, 2, false)
	d = f.ObservePending(t0.Add(time.Second), 2, false)
	assert.True(t, d.Report)
	assert.True(t, d.Fail)
}

func TestPolicyConfigDefaultsAndValidation(t *testing.T) {
	c := PolicyConfig{}.WithDefaults()
	assert.Equal(t, PolicyConfig(jobfile.DefaultPolicy()), c, "the defaults are the job file's")
	assert.Equal(t, PendingWait, c.OnPendingTimeout)
	assert.NoError(t, c.Validate())
	err := PolicyConfig{OnPendingTimeout: "panic"}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--on-pending-timeout="panic"`)
	assert.Contains(t, PolicyConfig{PendingTimeout: -time.Second}.Validate().Error(), "--pending-timeout")
}
