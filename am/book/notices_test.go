package book

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// TestNoticesPreemptedWarnsTheNamedOnceAndTheirGangRound: a named running container is warned once
// with its deadline; in gang mode the other running ranks of the round are warned with it (not a
// container of another round, not one that ended, not the AM's own); Post wakes the long polls and
// names the warned.
func TestNoticesPreemptedWarnsTheNamedOnceAndTheirGangRound(t *testing.T) {
	r := NewRecords(10, func() time.Time { return t0 })
	cid := func(n int64) *hadooppb.ContainerIdProto { return &hadooppb.ContainerIdProto{Id: proto.Int64(n)} }
	a, b := r.Adopted("c1", "n1:1", te, cid(1)), r.Adopted("c2", "n2:1", te, cid(2))
	old := r.Adopted("c3", "n2:1", te, cid(3))
	old.Round = -1
	ended := r.Adopted("c4", "n2:1", te, cid(4))
	r.Completed(ended, decision.Exit{Class: contract.ExitSucceeded})
	n := NewNotices()
	changed := n.Changed()

	warned, evs := n.Preempted(&r, []string{"c1", "c4", "am-container"}, true, 0, t0, 10*time.Second)
	require.Equal(t, []*Container{a, b}, warned)
	require.Len(t, evs, 2)
	assert.Equal(t, contract.EventPreemptionWarning, evs[0].Type)
	assert.Equal(t, "the ResourceManager named it", evs[0].Reason)
	assert.Equal(t, "a rank of its gang round 0 was named", evs[1].Reason)
	assert.Equal(t, t0.Add(10*time.Second), b.Notice.Deadline)
	assert.Equal(t, []string{"c1"}, b.Notice.Containers, "the named containers the AM still runs")
	require.NotNil(t, b.Notice.Round)
	assert.Nil(t, old.Notice, "another round's")
	assert.False(t, Warnable(a), "warned once")

	ids, reason := n.Post(warned)
	assert.Equal(t, []string{"c1", "c2"}, ids)
	assert.Empty(t, reason)
	select {
	case <-changed:
	default:
		t.Fatal("the long polls were not woken")
	}
	assert.NotEqual(t, changed, n.Changed(), "a new channel for the next warning")

	warned, _ = n.Preempted(&r, []string{"c1"}, true, 0, t0.Add(time.Second), 10*time.Second)
	assert.Empty(t, warned, "named again: warned already")
	warned, evs = n.Preempted(&r, []string{"c3"}, false, 0, t0, time.Second)
	require.Len(t, warned, 1, "no gang: the named one only")
	assert.Nil(t, warned[0].Notice.Round)
	assert.Len(t, evs, 1)
}
