package book

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// TestAskTableApplyRecordsWhatToSendAndWhen: a plan's updates are queued for the next allocate, a
// growing ask emits a TaskExecutorsRequested event for the difference only, and an ask's first send
// time stays.
func TestAskTableApplyRecordsWhatToSendAndWhen(t *testing.T) {
	tb := NewAsks()
	evs := tb.Apply(decision.Plan{Send: []decision.AskUpdate{{ID: 1, Count: 3}}, Asks: []decision.Ask{{ID: 1, Want: 3, AtRM: 3}}, NextAskID: 2}, t0, te)
	require.Len(t, evs, 1)
	assert.Equal(t, contract.EventRequested, evs[0].Type)
	assert.Equal(t, []decision.AskUpdate{{ID: 1, Count: 3}}, tb.ToSend())
	assert.Equal(t, 3, tb.Pending())
	assert.Equal(t, int64(2), tb.nextID)

	evs = tb.Apply(decision.Plan{Send: []decision.AskUpdate{{ID: 1, Count: 5}}, Asks: []decision.Ask{{ID: 1, Want: 5, AtRM: 5}}, NextAskID: 2}, t0.Add(time.Minute), te)
	require.Len(t, evs, 1)
	assert.Contains(t, evs[0].Message, "requested 2 ")
	at, ok := tb.SentAt(1)
	assert.True(t, ok)
	assert.Equal(t, t0, at, "the first send time stays")

	evs = tb.Apply(decision.Plan{Send: []decision.AskUpdate{{ID: 1, Count: 1}}, Asks: []decision.Ask{{ID: 1, Want: 1, AtRM: 1}}, NextAskID: 2}, t0, te)
	assert.Empty(t, evs, "an ask that shrinks requests nothing")
}

// TestAskTableMarkSentKeepsWhatChangedMeanwhile: an allocate that carried an update clears it, unless
// the update changed while the call was out.
func TestAskTableMarkSentKeepsWhatChangedMeanwhile(t *testing.T) {
	tb := NewAsks()
	tb.Apply(decision.Plan{Send: []decision.AskUpdate{{ID: 1, Count: 3}, {ID: 2, Count: 1}}, Asks: []decision.Ask{{ID: 1, Want: 3, AtRM: 3}, {ID: 2, Want: 1, AtRM: 1}}, NextAskID: 3}, t0, te)
	sent := tb.ToSend()
	tb.Apply(decision.Plan{Send: []decision.AskUpdate{{ID: 2, Count: 0}}, Asks: []decision.Ask{{ID: 1, Want: 3, AtRM: 3}, {ID: 2, Want: 0, AtRM: 0}}, NextAskID: 3}, t0, te)
	tb.MarkSent(sent)
	assert.Equal(t, []decision.AskUpdate{{ID: 2, Count: 0}}, tb.ToSend(), "ask 2 changed after the request was built")
	assert.True(t, tb.Busy())
	tb.MarkSent(tb.ToSend())
	assert.Empty(t, tb.ToSend())
}

// TestAskTableForgetsSendTimesOfAsksThatLeft: an ask no longer in the table loses its send time at
// the next Apply (not before: the plan's allocations still look it up).
func TestAskTableForgetsSendTimesOfAsksThatLeft(t *testing.T) {
	tb := NewAsks()
	tb.Apply(decision.Plan{Send: []decision.AskUpdate{{ID: 1, Count: 1}}, Asks: []decision.Ask{{ID: 1, Want: 1, AtRM: 1}}, NextAskID: 2}, t0, te)
	tb.Apply(decision.Plan{Asks: nil, NextAskID: 2}, t0, te)
	_, ok := tb.SentAt(1)
	assert.True(t, ok, "still there for this plan's allocations")
	tb.Apply(decision.Plan{NextAskID: 2}, t0, te)
	_, ok = tb.SentAt(1)
	assert.False(t, ok)
}

// TestAskTableResendAllAndRegistered: after a resync every ask that wants containers is sent again
// for what it wants; a new registration makes Reconcile send all (nothing is at the RM).
func TestAskTableResendAllAndRegistered(t *testing.T) {
	tb := NewAsks()
	tb.Apply(decision.Plan{Asks: []decision.Ask{{ID: 1, Want: 2, AtRM: 1}, {ID: 2, Want: 0, AtRM: 3}}, NextAskID: 3}, t0, te)
	v := tb.version
	tb.ResendAll()
	assert.Equal(t, []decision.AskUpdate{{ID: 1, Count: 2}}, tb.ToSend())
	assert.Equal(t, 2, tb.asks[0].AtRM)
	assert.NotEqual(t, v, tb.version, "Reconcile's input changed")
	tb.Registered()
	for _, k := range tb.asks {
		assert.Zero(t, k.AtRM)
	}
}

// TestAskTableCancelAll: every ask is withdrawn and each withdrawal is sent.
func TestAskTableCancelAll(t *testing.T) {
	tb := NewAsks()
	tb.Apply(decision.Plan{Asks: []decision.Ask{{ID: 1, Want: 2, AtRM: 2}, {ID: 2, Want: 1, AtRM: 1, Spread: true}}, NextAskID: 3}, t0, te)
	assert.True(t, tb.Spread(2))
	assert.False(t, tb.Spread(1))
	tb.CancelAll()
	assert.Zero(t, tb.Pending())
	assert.Equal(t, []decision.AskUpdate{{ID: 1, Count: 0}, {ID: 2, Count: 0}}, tb.ToSend())
	assert.False(t, tb.SendingSpread(), "a cancellation is not a spread request")
	asks, requested := tb.Status()
	assert.Empty(t, asks)
	assert.Zero(t, requested)
}

// TestExclusionListCarriesTheLatestDecision: excluding and lifting a node keep only the latest
// decision for it; Drain forgets what an allocate carried.
func TestExclusionListCarriesTheLatestDecision(t *testing.T) {
	l := NewExclusions()
	l.Exclude("n1:1")
	l.Exclude("n2:1")
	l.Lift("n2:1")
	add, remove := l.Next()
	assert.Equal(t, []string{"n1:1"}, add)
	assert.Equal(t, []string{"n2:1"}, remove)
	l.Exclude("n2:1")
	add2, remove2 := l.Next()
	assert.Equal(t, []string{"n1:1", "n2:1"}, add2)
	assert.Empty(t, remove2)
	l.Drain(add, remove)
	add, remove = l.Next()
	assert.Equal(t, []string{"n2:1"}, add, "excluded again after the first request was built")
	assert.Empty(t, remove)
}

var (
	te = contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 1}
	t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)
