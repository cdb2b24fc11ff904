package book

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/contract"
)

// TestNodeViewListsAtMostEveryRefresh: a listing is due at first and then NodesRefresh after the
// last try, successful or not; a failure is logged once per distinct error and a listing clears it.
func TestNodeViewListsAtMostEveryRefresh(t *testing.T) {
	var v Nodes
	assert.True(t, v.Due(t0))
	assert.False(t, v.Due(t0.Add(NodesRefresh-time.Second)))
	assert.True(t, v.Due(t0.Add(NodesRefresh)))

	down := errors.New("connection refused")
	assert.True(t, v.Failed(down))
	assert.False(t, v.Failed(errors.New("connection refused")), "logged once")
	assert.True(t, v.Failed(errors.New("timeout")))

	nodes := []contract.NodeStatus{{Node: "n1:1"}}
	v.Listed(nodes, t0.Add(NodesRefresh))
	got, at := v.Listing()
	assert.Equal(t, nodes, got)
	assert.Equal(t, t0.Add(NodesRefresh), at)
	assert.True(t, v.Failed(down), "a listing in between: the error is news again")
}

// TestNodeViewSpreadWaitsAMinuteAfterAFailure: locality's node reports are asked for again a
// minute after they failed.
func TestNodeViewSpreadWaitsAMinuteAfterAFailure(t *testing.T) {
	var v Nodes
	assert.True(t, v.SpreadDue(t0))
	v.SpreadFailed(t0)
	assert.False(t, v.SpreadDue(t0.Add(59*time.Second)))
	assert.True(t, v.SpreadDue(t0.Add(time.Minute)))
}
