package book

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// alloc is an allocation of ask 1 on n1:1.
func alloc(id string) decision.Allocation {
	return decision.Allocation{ID: id, Node: "n1:1", AskID: 1, Resources: te}
}

// TestRecordsPhaseCountersMatchTheRecords: the phase counters the gauges read every heartbeat agree
// with a count over the records after every kind of transition, and every transition changes the
// version Reconcile's skip depends on (PlanInputs.Records).
func TestRecordsPhaseCountersMatchTheRecords(t *testing.T) {
	r := NewRecords(2, nil)
	check := func(what string) {
		t.Helper()
		var l, run, s int
		for _, x := range r.seq {
			switch {
			case x.forgotten:
			case x.Phase == contract.Launching:
				l++
			case x.Phase == contract.Running:
				run++
			case x.Phase == contract.Stopping:
				s++
			}
		}
		gl, grun, gs, _ := r.Phases()
		assert.Equal(t, []int{l, run, s}, []int{gl, grun, gs}, what)
	}
	accept := func(id string, held bool) *Container { return r.Accepted(alloc(id), nil, 0, held) }
	step := func(what string, f func()) {
		t.Helper()
		v := r.version
		f()
		assert.NotEqual(t, v, r.version, what+" changes the version")
		check(what)
	}
	var a, b, c, d, h *Container
	step("accepted", func() { a, b, c, d = accept("a", false), accept("b", false), accept("c", false), accept("d", false) })
	step("held", func() { h = accept("h", true) })
	step("launched", func() { r.Launched(a); r.Launched(b) })
	step("launch failed", func() { r.LaunchFailed(c, "refused") })
	step("stopping while launching", func() { r.Stopping(d) })
	step("stopped before start", func() { r.StoppedBeforeStart(d) })
	step("stopping while running", func() { r.Stopping(b) })
	step("completed while stopping", func() { r.Completed(b, decision.Exit{Status: 143, Class: contract.ExitKilledByAM}) })
	step("start held", func() { r.StartHeld(h) })
	step("completed while launching", func() { r.Completed(h, decision.Exit{Status: 1, Class: contract.ExitFailed}) })
	step("adopted", func() { r.Adopted("e", "n1:1", te, nil) })
	step("completed", func() { r.Completed(a, decision.Exit{Status: 0, Class: contract.ExitSucceeded}) })
	_, _, _, completed := r.Phases()
	assert.Equal(t, 5, completed) // c, d, b, h, a
	assert.Zero(t, r.inFlight)
}

func TestRecordsMarkAHeldContainerThatEndedAsNeverStarted(t *testing.T) {
	r := NewRecords(10, time.Now)
	held := r.Accepted(alloc("h1"), nil, 0, true)
	ran := r.Accepted(alloc("c1"), nil, 0, false)
	r.Launched(ran)
	r.Completed(held, decision.Exit{Status: -100, Class: contract.ExitAborted})
	r.Completed(ran, decision.Exit{Status: -100, Class: contract.ExitAborted})
	assert.True(t, held.NeverStarted)
	assert.False(t, ran.NeverStarted)
}

// TestRecordsKeepTheLatestFinishedOnly: beyond history the oldest finished containers are dropped
// from the records (not found, not listed, out of the order once compacted) while the counts and
// Reconcile's share of the dropped ones stay exact.
func TestRecordsKeepTheLatestFinishedOnly(t *testing.T) {
	r := NewRecords(2, nil)
	live := r.Accepted(alloc("live"), nil, 0, false)
	r.Launched(live)
	for i, class := range []contract.ExitClass{contract.ExitFailed, contract.ExitSucceeded, contract.ExitSucceeded, contract.ExitFailed} {
		c := r.Accepted(alloc(fmt.Sprint("c", i)), nil, 0, false)
		r.Launched(c)
		r.Completed(c, decision.Exit{Status: int32(i), Class: class})
	}
	assert.Nil(t, r.Get("c0"))
	assert.Nil(t, r.Get("c1"))
	assert.NotNil(t, r.Get("c2"))
	assert.Len(t, r.byID, 3, "the live container and the latest two finished ones")
	ids := func(cs []*Container) (out []string) {
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	assert.Equal(t, []string{"c2", "c3"}, ids(r.Finished()))
	completed, succeeded, failed := r.Counts()
	assert.Equal(t, []int{4, 2, 2}, []int{completed, succeeded, failed})
	assert.Equal(t, decision.Forgotten{Succeeded: 1, Failed: 1, FailedExits: map[int32]int{0: 1}}, r.Forgotten())
	assert.Len(t, r.Observed(), 3, "Reconcile sees the recorded ones")
	assert.Equal(t, []string{"live", "c2", "c3"}, ids(r.All()), "compacted by Observed")
}

// TestRecordsEndedProgressAndHeld: the RM's report of an end ends a recorded container once; the
// progress is the succeeded share of those wanted (none for a service); what the active containers
// hold is counted by node.
func TestRecordsEndedProgressAndHeld(t *testing.T) {
	r := NewRecords(10, nil)
	a := r.Accepted(alloc("a"), nil, 0, false)
	r.Launched(a)
	a.CID = nil
	b := r.Adopted("b", "n1:1", te, &hadooppb.ContainerIdProto{})
	assert.Equal(t, map[string]contract.Capability{"n1:1": te}, r.Held(), "only containers with a container id (Active)")
	c, evs := r.Ended("a", 0, "")
	assert.Same(t, a, c)
	assert.NotEmpty(t, evs)
	assert.Equal(t, contract.ExitSucceeded, a.Exit.Class)
	c, evs = r.Ended("a", 0, "")
	assert.Nil(t, c, "known to have ended")
	assert.Nil(t, evs)
	c, _ = r.Ended("gone", 1, "")
	assert.Nil(t, c, "not recorded")
	assert.Equal(t, float32(0.5), r.Progress(2, false))
	assert.Equal(t, float32(0), r.Progress(2, true), "a service")
	assert.Equal(t, float32(0), r.Progress(0, false))
	_, _ = r.Ended("b", 137, "killed")
	assert.Equal(t, decision.Classify(137), b.Exit.Class)
	assert.Empty(t, r.Held())
}
