package book

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// ended is a recorded container of node that ended with class.
func ended(t *testing.T, r *Records, id, node string, class contract.ExitClass, diagnostics string) *Container {
	t.Helper()
	c := r.Accepted(decision.Allocation{ID: id, Node: node, AskID: 1, Resources: te}, nil, 0, false)
	r.Launched(c)
	r.Completed(c, decision.Exit{Status: 1, Class: class, Diagnostics: diagnostics})
	return c
}

// TestJudgeExcludesANodeAfterItsFailuresAndFailsWhenNoneIsLeft: the failure policy's node rule
// excludes a node (a blacklist addition to send) with its event; once every node of the cluster is
// excluded the application fails, once: the first reason wins (End).
func TestJudgeExcludesANodeAfterItsFailuresAndFailsWhenNoneIsLeft(t *testing.T) {
	b := New(2, WantJobFile)
	r := NewRecords(10, nil)
	p := decision.NewPolicy(decision.PolicyConfig{NodeMaxFailures: 2, MaxFailureRate: -1})
	v := b.Judge(ended(t, &r, "c1", "n1:1", contract.ExitFailed, ""), p, t0, 1)
	assert.Equal(t, Verdict{}, v, "one failure: nothing yet")
	v = b.Judge(ended(t, &r, "c2", "n1:1", contract.ExitFailed, ""), p, t0, 1)
	assert.Equal(t, "n1:1", v.Excluded)
	assert.Equal(t, 2, v.NodeFailures)
	require.Len(t, v.Events, 2)
	assert.Equal(t, contract.EventNodeExcluded, v.Events[0].Type)
	assert.Equal(t, contract.EventFailureLimitReached, v.Events[1].Type, "the only node is excluded")
	assert.NotEmpty(t, v.Failed)
	add, _ := b.Excl.Next()
	assert.Equal(t, []string{"n1:1"}, add)
	assert.True(t, b.End.Ending())
	require.NotNil(t, b.End.Failed())
	assert.Equal(t, contract.Failed, b.End.Failed().Status)
	assert.Equal(t, v.Failed, b.End.Failed().Diagnostics)

	_, first := b.End.Fail("another reason")
	assert.False(t, first, "the first reason wins")
	assert.Equal(t, v.Failed, b.End.Failed().Diagnostics)
	_, err := b.Declare(3, nil, "scale", t0)
	assert.Error(t, err, "no requirement change once the application is ending")
	assert.Equal(t, 2, b.Want.Count())
}

// TestJudgeExcludesANodeThatCannotRunTheWorkersAtOnce: a discovery failure excludes its node at the
// first one, with the line of the failure that says what the node lacks.
func TestJudgeExcludesANodeThatCannotRunTheWorkersAtOnce(t *testing.T) {
	b := New(1, WantJobFile)
	r := NewRecords(10, nil)
	p := decision.NewPolicy(decision.PolicyConfig{MaxFailureRate: -1})
	why := "discovery failed for resource \"gpu\": discovery program x.sh 1 failed: exit status 1; stderr: nvidia-smi not found on PATH\nmore"
	v := b.Judge(ended(t, &r, "c1", "n1:1", contract.ExitDiscoveryFailed, why), p, t0, 3)
	assert.Equal(t, "n1:1", v.Unfit)
	require.Len(t, v.Events, 1)
	assert.Equal(t, "node n1:1 excluded: it cannot run this job's workers: nvidia-smi not found on PATH", v.Events[0].Message)
	assert.Equal(t, why, v.Events[0].Reason)
	assert.Empty(t, v.Failed, "two nodes are left")
	assert.False(t, b.End.Ending())
}

// TestEndFinishing: the AM finishing ends the requirement's changes, without a verdict.
func TestEndFinishing(t *testing.T) {
	b := New(1, WantJobFile)
	from, err := b.Declare(4, nil, "scale", t0)
	require.NoError(t, err)
	assert.Equal(t, 1, from)
	b.End.Finish()
	assert.True(t, b.End.Ending())
	assert.Nil(t, b.End.Failed())
	_, err = b.Declare(5, nil, "scale", t0.Add(time.Second))
	assert.Error(t, err)
	assert.Equal(t, 4, b.Want.Count())
}
