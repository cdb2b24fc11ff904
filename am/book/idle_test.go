package book

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
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

// TestIdleJudgeWarnsOrKeeps: a running container idle for the release's duration is warned of its
// release (a gang's round with it), once, one release at a time; where the job cannot shrink its
// spell is said kept once; a short spell, a container held beside a gang's round or a job with the
// release off judges nothing.
func TestIdleJudgeWarnsOrKeeps(t *testing.T) {
	r := NewRecords(10, nil)
	c1 := running(&r, "c1", "n1:1", "GPU-a")
	c2 := running(&r, "c2", "n2:1", "GPU-b")
	releasable := func() (bool, string) { return true, "" }
	job := IdleJob{Release: time.Minute, Wait: 30 * time.Second, Releasable: releasable, Want: 2}
	now := t0.Add(2 * time.Minute)

	var i Idle
	kept, warned := i.Judge(&r, c1, t0, t0.Add(59*time.Second), now, job)
	assert.True(t, kept == nil && warned == nil, "idle for less than the release's duration")
	off := job
	off.Release = 0
	kept, warned = i.Judge(&r, c1, t0, now, now, off)
	assert.True(t, kept == nil && warned == nil, "taskexecutor.idle-gpu-release off")
	gang := job
	gang.Gang, gang.Round, gang.Formed = true, 1, true
	kept, warned = i.Judge(&r, c1, t0, now, now, gang)
	assert.True(t, kept == nil && warned == nil, "held beside the round (round 0 of 1)")

	kept, warned = i.Judge(&r, c1, t0, now, now, job)
	assert.Nil(t, kept)
	require.NotNil(t, warned)
	assert.Equal(t, []*Container{c1}, warned.Warned, "no gang: the idle one alone")
	assert.Equal(t, now.Add(30*time.Second), warned.Deadline)
	require.NotNil(t, c1.Notice)
	assert.Equal(t, contract.NoticeIdleGPURelease, c1.Notice.Reason)
	assert.Nil(t, c2.Notice)
	assert.Equal(t, contract.EventIdleGPURelease, warned.Event.Type)
	assert.True(t, i.Busy())
	kept, warned = i.Judge(&r, c2, t0, now, now, job)
	assert.True(t, kept == nil && warned == nil, "one release at a time")
	id, due := i.Due(now.Add(30 * time.Second))
	assert.True(t, due)
	assert.Equal(t, "c1", id)

	// A gang's formed round: the idle member and the round's other live members are warned.
	gang.Round = 0
	c1.Notice = nil
	kept, warned = i.Judge(&r, c2, t0, now, now, gang)
	assert.Nil(t, kept)
	require.NotNil(t, warned)
	assert.Equal(t, []*Container{c2, c1}, warned.Warned)
	require.NotNil(t, c1.Notice.Round)
	assert.Equal(t, []string{"c2"}, c1.Notice.Containers, "the members' notices name the idle one")
	_, _ = i.Due(now.Add(time.Hour))

	// A job that cannot shrink: kept, said once per spell.
	c3 := running(&r, "c3", "n1:1", "GPU-c")
	fixed := job
	fixed.Releasable = func() (bool, string) { return false, "the job keeps a fixed number of TaskExecutors (2)" }
	kept, warned = i.Judge(&r, c3, t0, now, now, fixed)
	assert.Nil(t, warned)
	require.NotNil(t, kept)
	assert.Equal(t, contract.EventIdleGPUKept, kept.Type)
	assert.Contains(t, kept.Message, "fixed number")
	assert.Nil(t, c3.Notice)
	kept, _ = i.Judge(&r, c3, t0, now.Add(time.Minute), now.Add(time.Minute), fixed)
	assert.Nil(t, kept, "said once per spell")
}

// TestIdleGiveBackThroughTheFramework: the framework's Scale down naming a container while a
// give-back is in flight is its release (the GPUs of the container named count as given back, the
// idle one's notice withdrawn when another was left); a refused give-back withdraws the notice.
func TestIdleGiveBackThroughTheFramework(t *testing.T) {
	r := NewRecords(10, nil)
	idle := running(&r, "c1", "n1:1", "GPU-a")
	left := running(&r, "c2", "n2:1", "GPU-b", "GPU-c")
	var i Idle
	_, _, ok := i.ScaledDown(&r, 2, 1, []string{"c2"}, t0)
	assert.False(t, ok, "no give-back in flight: an ordinary scale-down")

	idle.Notice = &contract.PreemptionNotice{Container: "c1", Reason: contract.NoticeIdleGPURelease}
	i.GivingBack("c1")
	_, _, ok = i.ScaledDown(&r, 2, 3, []string{"c2"}, t0)
	assert.False(t, ok, "a scale-up releases nothing")
	ev, was, ok := i.ScaledDown(&r, 2, 1, []string{"c2"}, t0)
	require.True(t, ok)
	assert.Equal(t, "c1", was)
	assert.Equal(t, contract.EventIdleGPUReleased, ev.Type)
	assert.Equal(t, "c2", ev.Container)
	assert.Contains(t, ev.Message, "rather than c1")
	assert.Nil(t, idle.Notice, "the idle one runs the work now: its notice is withdrawn")
	assert.InDelta(t, 2.0, i.Hours(t0.Add(time.Hour)), 1e-9, "c2's 2 GPUs given back")
	assert.False(t, i.Busy())
	assert.Equal(t, contract.Running, left.Phase, "the release itself is Reconcile's, which stops it first")

	idle.Notice = &contract.PreemptionNotice{Container: "c1", Reason: contract.NoticeIdleGPURelease}
	i.GivingBack("c1")
	i.GiveBackRefused(&r, "c1")
	assert.Nil(t, idle.Notice)
	assert.False(t, i.Busy())
}
