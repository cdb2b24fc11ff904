package book

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func runningTE(id string, launched time.Time) *Container {
	return &Container{Container: decision.Container{ID: id, Node: "n1:1", Phase: contract.Running}, LaunchedAt: launched,
		CID: &hadooppb.ContainerIdProto{Id: proto.Int64(1)}}
}

// TestLivenessScansEveryTenthOfTheTimeout: a scan is due a tenth of the timeout after the last
// one; the first scan and one after a pause of more than half the timeout restart the clocks.
func TestLivenessScansEveryTenthOfTheTimeout(t *testing.T) {
	const timeout = 30 * time.Second
	var l Liveness
	for _, tc := range []struct {
		after   time.Duration
		due     bool
		resumed bool
	}{
		{0, true, true},                 // the first scan
		{2 * time.Second, false, false}, // within a tenth
		{3 * time.Second, true, false},
		{3*time.Second + timeout/2 + time.Second, true, true}, // a pause: every clock restarts
	} {
		before := l.resumed
		assert.Equal(t, tc.due, l.Due(t0.Add(tc.after), timeout), "after %s", tc.after)
		assert.Equal(t, tc.resumed, !l.resumed.Equal(before), "after %s", tc.after)
	}
}

// TestLivenessSilentOnlyWhenNothingVouchedForTheTimeout: a running TaskExecutor is silent
// when its launcher, its NodeManager, its launch, the attempt's start and the check's own clock are
// all a timeout old; it is probed once until the probe's verdict is booked.
func TestLivenessSilentOnlyWhenNothingVouchedForTheTimeout(t *testing.T) {
	const timeout = 30 * time.Second
	var l Liveness
	require.True(t, l.Due(t0, timeout))
	now := t0.Add(timeout)
	heard, vouched, fresh, silent := runningTE("heard", t0), runningTE("vouched", t0), runningTE("fresh", now), runningTE("silent", t0)
	ended := runningTE("ended", t0)
	ended.Phase = contract.Completed
	l.Heard(heard, now.Add(-time.Second))
	vouched.VouchedAt = now.Add(-time.Second)
	seq := []*Container{heard, vouched, fresh, silent, ended}

	assert.Empty(t, l.Silent(seq, now, now, timeout), "the attempt started just now")
	probes := l.Silent(seq, now, t0, timeout)
	require.Len(t, probes, 1)
	assert.Equal(t, "silent", probes[0].C.ID)
	assert.Equal(t, timeout, probes[0].Silent)
	assert.Empty(t, l.Silent(seq, now, t0, timeout), "being probed")

	for _, tc := range []struct {
		name  string
		heard bool // the launcher spoke while the probe was out
		phase contract.Phase
		gone  bool // its NodeManager does not answer, or no longer knows it
		want  ProbeOutcome
	}{
		{"nm-gone", false, contract.Running, true, ProbeLost},
		{"nm-runs-it-or-unsure", false, contract.Running, false, ProbeVouched},
		{"launcher-spoke", true, contract.Running, true, ProbeMoot},
		{"ended-meanwhile", false, contract.Completed, true, ProbeMoot},
	} {
		tr := runningTE(tc.name, t0)
		p := l.Silent([]*Container{tr}, now, t0, timeout)
		require.Len(t, p, 1, tc.name)
		if tc.heard {
			l.Heard(tr, now)
		}
		tr.Phase = tc.phase
		assert.Equal(t, tc.want, l.Probed(p[0], tc.gone, now), tc.name)
		assert.False(t, tr.Probing, tc.name)
		assert.Equal(t, tc.want == ProbeVouched, tr.VouchedAt.Equal(now), tc.name)
	}
}

// TestLivenessLostNodes: a lost TaskExecutor ends (aborted, not counted) with a lost event, and the
// first loss on a node excludes it (a second keeps the first container to probe with); its
// NodeManager is asked once a timeout, one probe at a time, and NodeBack lifts the exclusion unless
// the failure policy excludes the node too.
func TestLivenessLostNodes(t *testing.T) {
	const timeout = 30 * time.Second
	b := New(2, WantJobFile)
	r := NewRecords(10, func() time.Time { return t0 })
	first := r.Adopted("c1", "n1:1", te, &hadooppb.ContainerIdProto{Id: proto.Int64(1)})
	second := r.Adopted("c2", "n1:1", te, &hadooppb.ContainerIdProto{Id: proto.Int64(2)})
	lost, why, ended := b.Live.Lost(&r, Probe{C: first, Silent: timeout}, &b.Excl, timeout, "its NodeManager n1:1 does not answer", t0)
	assert.Equal(t, contract.EventLost, lost.Type)
	assert.Contains(t, lost.Message, "silent for 30s (taskexecutor.liveness-timeout = 30s) and its NodeManager n1:1 does not answer")
	require.NotEmpty(t, ended)
	assert.Equal(t, contract.ExitAborted, first.Exit.Class)
	assert.Equal(t, first.Exit.Diagnostics, why, "why is the end's diagnostics")
	assert.True(t, strings.HasPrefix(why, "lost: its launcher has been silent"), why)
	add, _ := b.Excl.Next()
	assert.Equal(t, []string{"n1:1"}, add)
	b.Excl.Drain(add, nil)
	b.Live.Lost(&r, Probe{C: second, Silent: timeout}, &b.Excl, timeout, "again", t0)
	add, _ = b.Excl.Next()
	assert.Empty(t, add, "already excluded")
	l := &b.Live
	assert.Equal(t, []string{"n1:1"}, slices.Collect(l.LostNodes()))

	assert.Empty(t, l.LostNodesDue(t0.Add(timeout-time.Second), timeout), "asked a timeout after the loss")
	due := l.LostNodesDue(t0.Add(timeout), timeout)
	assert.Equal(t, map[string]*hadooppb.ContainerIdProto{"n1:1": first.CID}, due)
	assert.Empty(t, l.LostNodesDue(t0.Add(3*timeout), timeout), "being asked")
	l.NodeProbeDone("n1:1")
	assert.Empty(t, l.LostNodesDue(t0.Add(timeout+time.Second), timeout), "asked a timeout ago")
	assert.Len(t, l.LostNodesDue(t0.Add(2*timeout), timeout), 1)

	never := func(string) bool { return false }
	ev, ok := b.Live.NodeBack("n1:1", &b.Excl, func(string) bool { return true })
	assert.False(t, ok, "the failure policy excludes it too: its own timeout lifts it")
	assert.Empty(t, ev.Type)
	_, ok = b.Live.NodeBack("n1:1", &b.Excl, never)
	assert.False(t, ok, "its loss was forgotten already")
	assert.Empty(t, slices.Collect(l.LostNodes()))

	b.Live.Lost(&r, Probe{C: r.Adopted("c3", "n2:1", te, &hadooppb.ContainerIdProto{Id: proto.Int64(3)}), Silent: timeout}, &b.Excl, timeout, "gone", t0)
	ev, ok = b.Live.NodeBack("n2:1", &b.Excl, never)
	require.True(t, ok)
	assert.Equal(t, contract.EventNodeExclusionLifted, ev.Type)
	_, remove := b.Excl.Next()
	assert.Equal(t, []string{"n2:1"}, remove)
}
