package am

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// TestLivenessKeptTaskExecutorHasAGraceAfterAnAMRestart: a TaskExecutor kept from an earlier attempt
// is not probed within book.KeptLivenessGrace of this attempt's start, though the timeout is shorter (its
// launcher may still be looking for the new attempt: docs/running.md#kept-taskexecutors-find-the-new-attempt);
// once heard it is an ordinary TaskExecutor, and one never heard is lost a grace after the start.
func TestLivenessKeptTaskExecutorHasAGraceAfterAnAMRestart(t *testing.T) {
	m, clock, nm, c := livenessAM(t)
	nm.down.Store(true)
	clock.Add(time.Hour)
	m.started = clock.Now() // this attempt starts now
	m.mu.Lock()
	var kept []*book.Container
	for n := int64(2); n <= 3; n++ {
		cid := &hadooppb.ContainerIdProto{AppId: c.App, AppAttemptId: c.Att, Id: proto.Int64(n)}
		kept = append(kept, m.rec.Adopted(yarnrpc.FormatContainerID(cid), "node-a:8041", gpuSpec(1, 0).Capability, cid))
	}
	m.mu.Unlock()
	check(m)
	assert.Less(t, contract.DefaultLivenessTimeout, book.KeptLivenessGrace, "the grace matters at the default")

	pass(m, clock, book.KeptLivenessGrace-2*time.Second)
	assert.Zero(t, nm.probes.Load(), "no kept TaskExecutor is probed within the grace")
	assert.True(t, m.Alive(kept[1].ID), "the second one's launcher found this attempt")

	pass(m, clock, 3*time.Second)
	assert.Equal(t, contract.Completed, phase(m, kept[0]), "never heard: lost once the grace is over")
	assert.Equal(t, contract.Running, phase(m, kept[1]), "heard 3 s ago")
	pass(m, clock, contract.DefaultLivenessTimeout)
	assert.Equal(t, contract.Completed, phase(m, kept[1]), "heard, then silent for the timeout: lost like any other")
}
