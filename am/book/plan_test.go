package book

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// TestPlanSettlesUntilAnInputChanges: a plan that changed nothing is remembered, and the next one is
// skipped (Settled) until an allocation arrives, a container changes or the count wanted does.
func TestPlanSettlesUntilAnInputChanges(t *testing.T) {
	b := New(0, WantJobFile)
	r := NewRecords(10, nil)
	p := decision.NewPolicy(decision.PolicyConfig{})
	m := Moment{Now: t0}
	spec := b.Want.Spec(decision.Spec{Capability: te, Mode: decision.Service})
	assert.False(t, b.Settled(&r, m), "no plan yet")
	in, obs := b.Inputs(&r, m), b.Observed(&r, p, m)
	b.Planned(decision.Reconcile(spec, obs), obs, in)
	assert.True(t, b.Settled(&r, m), "nothing to do, nothing changed")
	assert.False(t, b.WouldAsk(spec, &r, p, m), "a settled plan adds no ask")

	b.Plans.Allocated(decision.Allocation{ID: "c1", Node: "n1:1", Resources: te})
	assert.False(t, b.Settled(&r, m), "a new allocation")
	obs = b.Observed(&r, p, m)
	assert.Len(t, obs.NewAllocations, 1)
	b.Planned(decision.Reconcile(spec, obs), obs, b.Inputs(&r, m))
	assert.Empty(t, b.Observed(&r, p, m).NewAllocations, "planned once")

	in, obs = b.Inputs(&r, m), b.Observed(&r, p, m)
	b.Planned(decision.Reconcile(spec, obs), obs, in)
	assert.True(t, b.Settled(&r, m))
	b.Want.Set(1, nil, "scale")
	assert.False(t, b.Settled(&r, m), "the count wanted changed")
	assert.True(t, b.WouldAsk(b.Want.Spec(spec), &r, p, m), "one more is wanted: the plan asks")
	assert.False(t, b.Settled(&r, Moment{Now: t0, DriverExited: true}), "stopping is an input")
}

// TestTickLiftsExclusionsAndReadsTheBackoff: an exclusion that timed out is lifted with its event,
// and the restart backoff after a failure holds new asks and shortens the heartbeat's wait to its end.
func TestTickLiftsExclusionsAndReadsTheBackoff(t *testing.T) {
	b := New(1, WantJobFile)
	r := NewRecords(10, nil)
	p := decision.NewPolicy(decision.PolicyConfig{NodeMaxFailures: 1, MaxFailureRate: -1, NodeExclusionTimeout: time.Minute,
		RestartBackoff: 3 * time.Second, RestartBackoffMax: 3 * time.Second})
	v := b.Judge(ended(t, &r, "c1", "n1:1", contract.ExitFailed, ""), p, t0, 5)
	assert.Equal(t, "n1:1", v.Excluded)
	assert.Empty(t, b.Tick(t0, p), "not timed out yet")
	assert.True(t, b.Observed(&r, p, Moment{Now: t0}).HoldNewAsks, "the restart backoff holds new asks")
	assert.Equal(t, 3*time.Second+time.Millisecond, b.Interval(&r, false, t0, time.Second, 10*time.Second),
		"slow, but no later than the backoff's end")
	evs := b.Tick(t0.Add(2*time.Minute), p)
	assert.Len(t, evs, 1)
	assert.Equal(t, contract.EventNodeExclusionLifted, evs[0].Type)
	_, remove := b.Excl.Next()
	assert.Equal(t, []string{"n1:1"}, remove)
	assert.False(t, b.Observed(&r, p, Moment{Now: t0.Add(2 * time.Minute)}).HoldNewAsks)
	assert.Equal(t, 10*time.Second, b.Interval(&r, false, t0.Add(2*time.Minute), time.Second, 10*time.Second))
	assert.Equal(t, time.Second, b.Interval(&r, true, t0.Add(2*time.Minute), time.Second, 10*time.Second), "releases to send")
}

// TestExclusionStatusNamesWhy: a node excluded for a loss and by the failure policy shows the
// policy's reason; the list is sorted.
func TestExclusionStatusNamesWhy(t *testing.T) {
	nodes, why := ExclusionStatus(func(yield func(string) bool) { _ = yield("n2:1") && yield("n1:1") }, []string{"n1:1"})
	assert.Equal(t, []string{"n1:1", "n2:1"}, nodes)
	assert.Equal(t, []contract.NodeExclusion{{Node: "n1:1", Reason: contract.ExclusionFailures}, {Node: "n2:1", Reason: contract.ExclusionLost}}, why)
	nodes, why = ExclusionStatus(func(func(string) bool) {}, nil)
	assert.Nil(t, nodes)
	assert.Nil(t, why)
}
