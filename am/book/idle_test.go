package book

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdleReleaseOneAtATime: a warning is due at its deadline and only once, a give-back in flight
// keeps another from starting until it ends or is taken, and a kept spell is news once.
func TestIdleReleaseOneAtATime(t *testing.T) {
	var i Idle
	assert.False(t, i.Busy())
	i.Warned("c1", t0.Add(time.Minute))
	assert.True(t, i.Busy())
	_, ok := i.Due(t0)
	assert.False(t, ok, "before the deadline")
	id, ok := i.Due(t0.Add(time.Minute))
	require.True(t, ok)
	assert.Equal(t, "c1", id)
	_, ok = i.Due(t0.Add(time.Hour))
	assert.False(t, ok, "once")
	assert.False(t, i.Busy())

	i.GivingBack("c2")
	assert.True(t, i.Busy())
	i.GiveBackEnded("c3")
	assert.True(t, i.Busy(), "another container's end changes nothing")
	assert.Equal(t, "c2", i.TakeGivingBack())
	assert.Equal(t, "", i.TakeGivingBack())
	assert.False(t, i.Busy())

	assert.True(t, i.Kept("c4", t0))
	assert.False(t, i.Kept("c4", t0), "said once per spell")
	assert.True(t, i.Kept("c4", t0.Add(time.Hour)), "a new spell")
	i.ForgetKept(func(string) bool { return false })
	assert.True(t, i.Kept("c4", t0.Add(time.Hour)), "forgotten once it no longer runs")
}

// TestIdleCountsTheGPUTimeGivenBack: GPUs given back count until declared again, and the count
// survives the durable state.
func TestIdleCountsTheGPUTimeGivenBack(t *testing.T) {
	var i Idle
	assert.Nil(t, i.GivenState(t0), "nothing given back: nothing to keep")
	i.Given(2, t0)
	i.Given(2, t0)
	assert.InDelta(t, 4.0, i.Hours(t0.Add(time.Hour)), 1e-9)
	i.Retake(1, t0.Add(time.Hour))
	assert.InDelta(t, 6.0, i.Hours(t0.Add(2*time.Hour)), 1e-9, "one container's 2 GPUs no longer count")

	s := i.GivenState(t0.Add(2 * time.Hour))
	require.NotNil(t, s)
	var j Idle
	j.RestoreGiven(*s)
	assert.InDelta(t, 8.0, j.Hours(t0.Add(3*time.Hour)), 1e-9, "the restored GPUs go on counting")
}
