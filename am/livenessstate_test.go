package am

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func runningTE(id string, launched time.Time) *book.Container {
	return &book.Container{Container: decision.Container{ID: id, Node: "n1:1", Phase: contract.Running}, LaunchedAt: launched,
		CID: &hadooppb.ContainerIdProto{Id: proto.Int64(1)}}
}

// TestLivenessStateScansEveryTenthOfTheTimeout: a scan is due a tenth of the timeout after the last
// one; the first scan and one after a pause of more than half the timeout restart the clocks.
func TestLivenessStateScansEveryTenthOfTheTimeout(t *testing.T) {
	const timeout = 30 * time.Second
	var l livenessState
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

// TestLivenessStateSilentOnlyWhenNothingVouchedForTheTimeout: a running TaskExecutor is silent
// when its launcher, its NodeManager, its launch, the attempt's start and the check's own clock are
// all a timeout old; it is probed once until the probe's verdict is booked.
func TestLivenessStateSilentOnlyWhenNothingVouchedForTheTimeout(t *testing.T) {
	const timeout = 30 * time.Second
	var l livenessState
	require.True(t, l.Due(t0, timeout))
	now := t0.Add(timeout)
	heard, vouched, fresh, silent := runningTE("heard", t0), runningTE("vouched", t0), runningTE("fresh", now), runningTE("silent", t0)
	ended := runningTE("ended", t0)
	ended.Phase = contract.Completed
	l.Heard(heard, now.Add(-time.Second))
	vouched.VouchedAt = now.Add(-time.Second)
	seq := []*book.Container{heard, vouched, fresh, silent, ended}

	assert.Empty(t, l.Silent(seq, now, now, timeout), "the attempt started just now")
	probes := l.Silent(seq, now, t0, timeout)
	require.Len(t, probes, 1)
	assert.Equal(t, "silent", probes[0].t.ID)
	assert.Equal(t, timeout, probes[0].silent)
	assert.Empty(t, l.Silent(seq, now, t0, timeout), "being probed")

	for _, tc := range []struct {
		name    string
		heard   bool // the launcher spoke while the probe was out
		phase   contract.Phase
		verdict nmVerdict
		want    probeOutcome
	}{
		{"nm-down", false, contract.Running, nmDown, probeLost},
		{"nm-forgot", false, contract.Running, nmForgot, probeLost},
		{"nm-runs-it", false, contract.Running, nmRunning, probeVouched},
		{"nm-unsure", false, contract.Running, nmUnsure, probeVouched},
		{"launcher-spoke", true, contract.Running, nmDown, probeMoot},
		{"ended-meanwhile", false, contract.Completed, nmDown, probeMoot},
	} {
		tr := runningTE(tc.name, t0)
		p := l.Silent([]*book.Container{tr}, now, t0, timeout)
		require.Len(t, p, 1, tc.name)
		if tc.heard {
			l.Heard(tr, now)
		}
		tr.Phase = tc.phase
		assert.Equal(t, tc.want, l.Probed(p[0], tc.verdict, now), tc.name)
		assert.False(t, tr.Probing, tc.name)
		assert.Equal(t, tc.want == probeVouched, tr.VouchedAt.Equal(now), tc.name)
	}
}

// TestLivenessStateLostNodes: the first loss on a node excludes it (a second keeps the first
// container to probe with); its NodeManager is asked once a timeout, one probe at a time, and
// NodeBack forgets it.
func TestLivenessStateLostNodes(t *testing.T) {
	const timeout = 30 * time.Second
	var l livenessState
	first, second := &hadooppb.ContainerIdProto{Id: proto.Int64(1)}, &hadooppb.ContainerIdProto{Id: proto.Int64(2)}
	assert.True(t, l.Lost("n1:1", first, t0))
	assert.False(t, l.Lost("n1:1", second, t0), "already excluded")
	assert.Equal(t, []string{"n1:1"}, slices.Collect(l.LostNodes()))

	assert.Empty(t, l.LostNodesDue(t0.Add(timeout-time.Second), timeout), "asked a timeout after the loss")
	due := l.LostNodesDue(t0.Add(timeout), timeout)
	assert.Equal(t, map[string]*hadooppb.ContainerIdProto{"n1:1": first}, due)
	assert.Empty(t, l.LostNodesDue(t0.Add(3*timeout), timeout), "being asked")
	l.NodeProbeDone("n1:1")
	assert.Empty(t, l.LostNodesDue(t0.Add(timeout+time.Second), timeout), "asked a timeout ago")
	assert.Len(t, l.LostNodesDue(t0.Add(2*timeout), timeout), 1)

	assert.True(t, l.NodeBack("n1:1"))
	assert.False(t, l.NodeBack("n1:1"))
	assert.Empty(t, slices.Collect(l.LostNodes()))
}
