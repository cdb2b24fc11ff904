package client

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

func TestStatusPrintsExcludedNodesAndLatestEvents(t *testing.T) {
	var evs []contract.Event
	for i := 1; i <= 12; i++ {
		evs = append(evs, contract.Event{ID: uint64(i), Time: time.Now(), Type: "requested", Severity: "info", Message: "requested 1"})
	}
	evs = append(evs, contract.Event{ID: 13, Time: time.Now(), Type: "not-enough-resources", Severity: "warning", Message: "not enough resources: 1 pending"})
	var b bytes.Buffer
	PrintAMStatus(&b, &contract.Status{State: contract.StateRunning, ExcludedNodes: []string{"n1:1"}, Events: evs})
	out := b.String()
	assert.Contains(t, out, "Excluded:     n1:1 (after repeated failures)")
	assert.Contains(t, out, "Latest events:")
	assert.Contains(t, out, "#13 WARNING not-enough-resources: not enough resources: 1 pending")
	assert.NotContains(t, out, "#3 ", "only the last 10")
	assert.Contains(t, out, "#4 requested")

	b.Reset()
	PrintAMStatus(&b, &contract.Status{State: contract.StateRunning, ExcludedNodes: []string{"n1:1", "n2:1"},
		Exclusions: []contract.NodeExclusion{{Node: "n1:1", Reason: contract.ExclusionFailures}, {Node: "n2:1", Reason: contract.ExclusionLost}}})
	assert.Contains(t, b.String(), "Excluded:     n1:1 (after repeated failures), n2:1 (lost a TaskExecutor; until it is healthy again)")
}

// The CLI once re-declared the status document and lost the stopping count, so TaskExecutors being
// stopped on a scale-down vanished from submit and status; it now reads the AM's own document.
func TestStatusShowsStoppingContainers(t *testing.T) {
	st := &contract.Status{State: contract.StateRunning,
		Counts: contract.Counts{Running: 1, Stopping: 2},
		Containers: []contract.ContainerStatus{
			{ID: "container_1_0001_01_000002", Node: "n1:1", State: contract.Running},
			{ID: "container_1_0001_01_000003", Node: "n2:1", State: contract.Stopping},
		}}
	var b bytes.Buffer
	PrintAMStatus(&b, st)
	assert.Contains(t, b.String(), "requested 0, allocated 0, running 1, stopping 2, completed 0, failed 0")
	assert.Regexp(t, `container_1_0001_01_000003\s+n2:1\s+STOPPING`, b.String())
	assert.NotContains(t, CountsLine(contract.Counts{Running: 1}), "stopping", "no stopping column while nothing stops")
}

func TestFollowPrintsTheAMsEventStream(t *testing.T) {
	log := events.NewLog(100)
	log.Add(events.Requested(2, contract.Capability{"yarn.io/gpu": 1}))
	f, out, b := followEvents(t, log)
	log.Add(events.AllocationRejected("external-resource.gpu.amount", 5, 4, "yarn.io/gpu", ""))
	require.Eventually(t, func() bool {
		out.mu.Lock()
		defer out.mu.Unlock()
		return strings.Count(b.String(), "\n") >= 2
	}, 5*time.Second, 10*time.Millisecond)
	assert.True(t, f.streaming())
	f.stop()
	text := b.String()
	assert.Contains(t, text, "requested: requested 2 TaskExecutor container(s) of yarn.io/gpu=1")
	assert.Contains(t, text, "ERROR allocation-rejected: allocation rejected: external-resource.gpu.amount = 5, but the cluster allows at most 4")

	// An AM without the stream (404): the follower gives up on its own after the one refusal, having
	// printed nothing (follow keeps polling the status). Its printer has ended when done closes, so
	// nothing can be printed later.
	var asked atomic.Int32
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.NotFound(w, r)
	}))
	defer old.Close()
	var b2 bytes.Buffer
	out2 := &lockedWriter{w: &b2}
	f2 := &eventFollower{out: out2}
	f2.start(context.Background(), old.URL+"/", nil)
	select {
	case <-f2.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the follower kept the stream after the AM answered 404")
	}
	assert.Equal(t, int32(1), asked.Load(), "a 404 is not retried")
	assert.False(t, f2.streaming())
	out2.mu.Lock()
	assert.Empty(t, b2.String())
	out2.mu.Unlock()
	f2.stop()
}

// The AM emits finished after the RM took the final status, so the RM can report the end before the
// stream brought the event; drain waits for it (the quickstart's submit once ended without its
// finished line), and returns at once when it came.
func TestFollowDrainsTheFinishedEventAfterTheEnd(t *testing.T) {
	log := events.NewLog(100)
	log.Add(events.Requested(1, contract.Capability{"yarn.io/gpu": 1}))
	f, _, b := followEvents(t, log)
	require.Eventually(t, f.streaming, 5*time.Second, 10*time.Millisecond)
	// The RM says FINISHED now (drain starts); the AM's event comes later, after the check that drain
	// is still waiting: the order is the channels', not a sleep's.
	drained := make(chan struct{})
	go func() { f.drain(time.Minute); close(drained) }()
	select {
	case <-drained:
		t.Fatal("drain returned before the finished event came")
	default:
	}
	log.Add(events.Finished(decision.Outcome{Status: contract.Succeeded, Diagnostics: "all 1 TaskExecutors exited with code 0"}))
	select {
	case <-drained:
	case <-time.After(30 * time.Second):
		t.Fatal("drain did not return when the finished event came")
	}
	f.stop()
	assert.Contains(t, b.String(), "finished: application finished: SUCCEEDED: all 1 TaskExecutors exited with code 0")

	// With the event already shown, a second drain does not wait.
	start := time.Now()
	f2 := &eventFollower{out: &lockedWriter{w: &bytes.Buffer{}}}
	f2.drain(time.Minute)
	assert.Less(t, time.Since(start), 5*time.Second, "no stream: no wait")
}

// followEvents starts an event follower on an AM's event stream served from log; what it prints goes
// to b (read under out's lock).
func followEvents(t *testing.T, log *events.Log) (*eventFollower, *lockedWriter, *bytes.Buffer) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/events", am.EventsHandler(log, time.Second))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := &bytes.Buffer{}
	out := &lockedWriter{w: b}
	f := &eventFollower{out: out}
	f.start(context.Background(), srv.URL+"/", nil)
	return f, out, b
}
