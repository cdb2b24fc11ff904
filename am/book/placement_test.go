package book

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func TestPlacementOneConditionIsSentWithoutAnAnd(t *testing.T) {
	pc := PlacementConstraint(jobfile.Placement{MaxPerNode: 1})
	require.NotNil(t, pc.GetSimpleConstraint())
	assert.Nil(t, pc.GetCompositeConstraint())
	assert.EqualValues(t, 0, pc.GetSimpleConstraint().GetMaxCardinality(), "max-per-node 1: anti-affinity")
}

// TestPlacementFillBlacklistsAFullNodeUntilItHasRoom: with the AM keeping max-per-node, a node that
// runs max-per-node is blacklisted once (with its event), and lifted when it has room again unless
// the failure policy excludes it; with SchedulingRequests the RM keeps the limit and nothing is
// blacklisted.
func TestPlacementFillBlacklistsAFullNodeUntilItHasRoom(t *testing.T) {
	b := New(3, WantJobFile)
	b.Place = NewPlacement(jobfile.Placement{MaxPerNode: 2}, "", false, 1)
	full, room := b.Place.Fill([]string{"n1:1", "n2:1", "n1:1"}, &b.Excl, func(string) bool { return false })
	require.Len(t, full, 1)
	assert.Equal(t, "n1:1", full[0].Node)
	assert.Equal(t, 2, full[0].Count)
	assert.Empty(t, room)
	assert.True(t, b.Place.Full("n1:1"))
	add, _ := b.Excl.Next()
	assert.Equal(t, []string{"n1:1"}, add)

	full, _ = b.Place.Fill([]string{"n1:1", "n1:1"}, &b.Excl, func(string) bool { return false })
	assert.Empty(t, full, "said once")

	b.Excl.Drain(add, nil)
	full, room = b.Place.Fill([]string{"n1:1"}, &b.Excl, func(n string) bool { return n == "n1:1" })
	assert.Empty(t, full)
	assert.Equal(t, []string{"n1:1"}, room)
	assert.False(t, b.Place.Full("n1:1"))
	assert.Empty(t, slices.Collect(b.Place.FullNodes()))
	add, remove := b.Excl.Next()
	assert.Empty(t, add)
	assert.Empty(t, remove, "the failure policy still excludes it")

	s := New(3, WantJobFile)
	s.Place = NewPlacement(jobfile.Placement{MaxPerNode: 1}, "placement-processor", true, 1)
	full, room = s.Place.Fill([]string{"n1:1", "n1:1"}, &s.Excl, func(string) bool { return false })
	assert.Empty(t, full)
	assert.Empty(t, room)
}

// TestPlacementRejectedIsSaidOnceAndAskedAgain: each rejected request's ask is sent again; only the
// first rejection of an ask is an event.
func TestPlacementRejectedIsSaidOnceAndAskedAgain(t *testing.T) {
	b := New(2, WantJobFile)
	b.Place = NewPlacement(jobfile.Placement{MaxPerNode: 1}, "placement-processor", true, 1)
	rej := func(id int64) *hadooppb.RejectedSchedulingRequestProto {
		return &hadooppb.RejectedSchedulingRequestProto{Reason: hadooppb.RejectionReasonProto_RRP_COULD_NOT_PLACE_ON_NODE.Enum(),
			Request: &hadooppb.SchedulingRequestProto{AllocationRequestId: proto.Int64(id),
				ResourceSizing: &hadooppb.ResourceSizingProto{NumAllocations: proto.Int32(2)}}}
	}
	evs := b.Place.Rejected([]*hadooppb.RejectedSchedulingRequestProto{rej(1)}, &b.Asks)
	require.Len(t, evs, 1)
	assert.Equal(t, contract.EventPlacement, evs[0].Type)
	assert.Equal(t, 2, evs[0].Count)
	assert.Empty(t, b.Place.Rejected([]*hadooppb.RejectedSchedulingRequestProto{rej(1)}, &b.Asks), "said once")
	assert.Len(t, b.Place.Rejected([]*hadooppb.RejectedSchedulingRequestProto{rej(2)}, &b.Asks), 1, "another ask")
}

// TestPlacementRefusedFallsBackOnce: the RM's refusal turns the asks into ResourceRequests once, with
// a warning, or an error when node attributes cannot be kept by the AM.
func TestPlacementRefusedFallsBackOnce(t *testing.T) {
	pl := NewPlacement(jobfile.Placement{MaxPerNode: 1}, "placement-processor", true, 1)
	require.NotNil(t, pl.Request(1, 2, nil).GetPlacementConstraint())
	ev, ok := pl.Refused("cannot handle placement constraints")
	require.True(t, ok)
	assert.Equal(t, contract.SeverityWarning, ev.Severity)
	assert.False(t, pl.SchedulingRequests())
	assert.Nil(t, pl.Request(1, 2, nil).GetPlacementConstraint())
	_, ok = pl.Refused("again")
	assert.False(t, ok, "said once")

	attrs := NewPlacement(jobfile.Placement{NodeAttributes: []jobfile.NodeAttribute{{Name: "gpu_model", Value: "H200"}}}, "placement-processor", true, 1)
	ev, ok = attrs.Refused("no")
	require.True(t, ok)
	assert.Equal(t, contract.SeverityError, ev.Severity)
	assert.Equal(t, "taskexecutor.placement.node-attributes", ev.Key)
}
