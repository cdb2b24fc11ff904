package book

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// member is a container of a gang round, for the Gang tests.
func member(id, node string, round int, phase contract.Phase) *Container {
	return &Container{Container: decision.Container{ID: id, Node: node, Round: round, Phase: phase}}
}

// gangSpec is a rigid gang of n TaskExecutors.
func gangSpec(n int) decision.Spec {
	return decision.Spec{Instances: n, MaxFailures: 3, Capability: te, Gang: true}
}

// TestGangFormsWithItsHeldMembers: Held lists the round's held containers only, Form books the
// round's size and its start (the event says how long it took and on how many nodes), and an
// elastic gang's event names its bounds.
func TestGangFormsWithItsHeldMembers(t *testing.T) {
	var g Gang
	g.Begin(t0)
	g.Begin(t0.Add(time.Hour)) // a re-registration keeps the round's start
	seq := []*Container{member("c1", "n1:1", 0, contract.Held), member("c2", "n2:1", 0, contract.Held),
		member("c3", "n1:1", 0, contract.Running), member("old", "n1:1", -1, contract.Held)}
	held := g.Held(seq)
	require.Len(t, held, 2)
	assert.Equal(t, []string{"c1", "c2"}, []string{held[0].ID, held[1].ID})

	ev := g.Form(held, gangSpec(2), t0.Add(time.Minute))
	assert.Equal(t, contract.EventGangFormed, ev.Type)
	assert.Equal(t, 2, ev.Count)
	assert.NotContains(t, ev.Message, "elastic")
	assert.True(t, g.Formed())
	assert.Equal(t, &contract.GangStatus{Round: 0, Formed: true, Size: 2, Held: 2, MinInstances: 2, MaxInstances: 2}, g.Status(gangSpec(2), seq))

	elastic := gangSpec(4)
	elastic.MinInstances = 2
	var e Gang
	assert.Contains(t, e.Form(held, elastic, t0).Message, "an elastic gang of 2 to 4: WORLD_SIZE 2")
}

// TestGangNewRoundAfterATimeout: a timed-out round waits a quarter of the timeout (at least
// 5 s) before the next round is asked for; the next round starts unformed at the size named, its
// deadline counting from the end of the wait.
func TestGangNewRoundAfterATimeout(t *testing.T) {
	for _, tc := range []struct {
		timeout, retry time.Duration
	}{
		{timeout: 4 * time.Minute, retry: time.Minute},
		{timeout: 8 * time.Second, retry: 5 * time.Second},
	} {
		var g Gang
		g.Begin(t0)
		assert.False(t, g.TimedOut(t0.Add(tc.timeout-time.Millisecond), tc.timeout))
		now := t0.Add(tc.timeout)
		require.True(t, g.TimedOut(now, tc.timeout))
		assert.Equal(t, tc.retry, g.Wait(now, tc.timeout))
		assert.True(t, g.Holding(now))
		assert.False(t, g.Holding(now.Add(tc.retry)))

		ev := g.NewRound(now, 3, "timed out", "")
		assert.Equal(t, contract.EventGangRestarted, ev.Type)
		assert.Equal(t, 1, g.Round())
		assert.False(t, g.Formed())
		assert.False(t, g.TimedOut(now.Add(tc.timeout), tc.timeout), "the deadline counts from the end of the wait")
		assert.True(t, g.TimedOut(now.Add(tc.retry+tc.timeout), tc.timeout))
		assert.Equal(t, decision.ElasticObserved{Expect: 3}, g.Elastic(elasticSpec(3, 2), now, time.Minute, tc.timeout))
		assert.Equal(t, decision.ElasticObserved{}, g.Elastic(gangSpec(3), now, time.Minute, tc.timeout), "a rigid gang")
	}
}

// TestGangCarriesHeldContainersIntoTheNextRound: after NewRound, Carry moves the containers
// held beside the previous round (not its running members) into the new one.
func TestGangCarriesHeldContainersIntoTheNextRound(t *testing.T) {
	var g Gang
	seq := []*Container{member("c1", "n1:1", 0, contract.Running), member("c2", "n1:1", 0, contract.Held)}
	g.NewRound(t0, 2, "grow", "grow")
	g.Carry(seq)
	assert.Equal(t, 0, seq[0].Round)
	assert.Equal(t, 1, seq[1].Round)
}

// TestGangElasticObserved: an unformed round's deadline passes at the timeout; a formed
// round's growth is due once it ran for the interval.
func TestGangElasticObserved(t *testing.T) {
	var g Gang
	assert.Equal(t, decision.ElasticObserved{}, g.Elastic(elasticSpec(4, 2), t0, time.Minute, time.Minute), "no round asked for yet")
	g.Begin(t0)
	assert.Equal(t, decision.ElasticObserved{Deadline: true}, g.Elastic(elasticSpec(4, 2), t0.Add(time.Minute), time.Minute, time.Minute))
	g.Form(nil, gangSpec(2), t0.Add(time.Minute))
	assert.Equal(t, decision.ElasticObserved{}, g.Elastic(elasticSpec(4, 2), t0.Add(time.Minute+59*time.Second), time.Minute, time.Minute))
	assert.Equal(t, decision.ElasticObserved{GrowDue: true}, g.Elastic(elasticSpec(4, 2), t0.Add(2*time.Minute), time.Minute, time.Minute))
}

// TestGangRanksOnceEveryMemberReported: no rendezvous before the round formed, while a member
// has not reported or is stopping; then ranks in acceptance order with local ranks per node, rank
// 0's host and port as the master, once.
func TestGangRanksOnceEveryMemberReported(t *testing.T) {
	seq := []*Container{member("c1", "n1:1", 0, contract.Running), member("c2", "n2:1", 0, contract.Running),
		member("c3", "n1:1", 0, contract.Running), member("spare", "n3:1", 0, contract.Held)}
	seq[0].Port = 29500
	var g Gang
	_, _, ok := g.Rank(seq)
	assert.False(t, ok, "not formed")
	g.Form(seq[:3], gangSpec(3), t0)
	seq[0].Reported, seq[1].Reported = true, true
	_, _, ok = g.Rank(seq)
	assert.False(t, ok, "c3 has not reported")

	seq[2].Reported = true
	ev, master, ok := g.Rank(seq)
	require.True(t, ok)
	assert.Equal(t, contract.EventRendezvous, ev.Type)
	assert.Equal(t, "n1:29500", master)
	assert.Equal(t, contract.Rendezvous{Rank: 2, WorldSize: 3, LocalRank: 1, LocalWorldSize: 2, Node: "n1:1", MasterAddr: "n1", MasterPort: 29500}, *seq[2].Rank)
	assert.Equal(t, 0, seq[1].Rank.LocalRank)
	assert.Nil(t, seq[3].Rank, "a held container is no member")
	_, _, ok = g.Rank(seq)
	assert.False(t, ok, "published once a round")

	var h Gang
	h.Form(seq[:3], gangSpec(3), t0)
	seq[1].Phase = contract.Stopping
	_, _, ok = h.Rank(seq)
	assert.False(t, ok, "a member is stopping")
}

// elasticSpec is an elastic gang of lo to n TaskExecutors.
func elasticSpec(n, lo int) decision.Spec {
	s := gangSpec(n)
	s.MinInstances = lo
	return s
}

// TestGangGiveUpReleasesWhatTheRoundHolds: a round not complete by the timeout releases its held
// containers (their ends told as the gang timeout's), cancels its asks and starts the next round
// after the wait; an elastic round that holds its minimum is not given up, and neither is a round
// within its timeout.
func TestGangGiveUpReleasesWhatTheRoundHolds(t *testing.T) {
	r := NewRecords(10, func() time.Time { return t0 })
	held := r.Accepted(decision.Allocation{ID: "c1", Node: "n1:1", AskID: 1, Resources: te}, nil, 0, true)
	asks := NewAsks()
	var g Gang
	g.Begin(t0)
	_, ok := g.GiveUp(&r, &asks, gangSpec(3), t0.Add(time.Minute-time.Second), time.Minute)
	assert.False(t, ok, "within the timeout")
	_, ok = g.GiveUp(&r, &asks, elasticSpec(3, 1), t0.Add(time.Minute), time.Minute)
	assert.False(t, ok, "an elastic round that holds its minimum forms with it")

	out, ok := g.GiveUp(&r, &asks, gangSpec(3), t0.Add(time.Minute), time.Minute)
	require.True(t, ok)
	assert.Equal(t, []*Container{held}, out.Released)
	assert.Equal(t, 1, out.Held)
	assert.Equal(t, 2, out.Missing)
	assert.Equal(t, 15*time.Second, out.Retry)
	assert.Equal(t, contract.Completed, held.Phase)
	assert.Contains(t, held.Exit.Diagnostics, "the gang was not complete within taskexecutor.gang-timeout = 1m0s")
	require.NotEmpty(t, out.Ended)
	assert.Equal(t, contract.EventGangRestarted, out.Restarted.Type)
	assert.Contains(t, out.Restarted.Message, "1 of 3 TaskExecutors were allocated within taskexecutor.gang-timeout = 1m0s")
	assert.Equal(t, 1, g.Round())
	assert.True(t, g.Holding(t0.Add(time.Minute)))
}

// TestGangStartAndNext: Start launches the round's held members and forms it; Next starts the next
// round at the declared size, and an elastic gang's held containers carry over.
func TestGangStartAndNext(t *testing.T) {
	r := NewRecords(10, func() time.Time { return t0 })
	for _, id := range []string{"c1", "c2"} {
		r.Accepted(decision.Allocation{ID: id, Node: "n1:1", AskID: 1, Resources: te}, nil, 0, true)
	}
	var g Gang
	g.Begin(t0)
	started, evs := g.Start(&r, gangSpec(2), t0.Add(time.Second))
	require.Len(t, started, 2)
	assert.Equal(t, contract.Launching, started[0].Phase)
	require.Len(t, evs, 1, "no rendezvous before the ranks reported")
	assert.Equal(t, contract.EventGangFormed, evs[0].Type)
	assert.Equal(t, 2, g.Size())

	spare := r.Accepted(decision.Allocation{ID: "c3", Node: "n1:1", AskID: 1, Resources: te}, nil, 0, true)
	ev := g.Next(&r, elasticSpec(3, 2), t0.Add(time.Minute), "grow", "grow", 0)
	assert.Equal(t, contract.EventGangRestarted, ev.Type)
	assert.Contains(t, ev.Message, "3 TaskExecutors (grows)", "size 0: the declared instances")
	assert.Equal(t, 1, spare.Round, "carried into the next round")
	assert.Equal(t, 0, g.Size(), "not formed yet")
}
