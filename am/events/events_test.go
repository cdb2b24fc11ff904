package events

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
)

func TestEventLogIDsIncreaseAndRingDropsOldest(t *testing.T) {
	l := NewLog(3)
	for i := 0; i < 5; i++ {
		l.Add(Requested(i+1, contract.Capability{"yarn.io/gpu": 1}))
	}
	assert.Equal(t, uint64(5), l.LastID())

	evs := l.Since(0, 0)
	require.Len(t, evs, 4, "a gap marker, then the three kept")
	assert.Equal(t, contract.EventGap, evs[0].Type)
	assert.Equal(t, uint64(2), evs[0].ID, "the gap's id is the last lost one, so resuming after it loses nothing more")
	assert.Equal(t, 2, evs[0].Count)
	assert.Equal(t, []uint64{3, 4, 5}, ids(evs[1:]))

	assert.Equal(t, []uint64{4, 5}, ids(l.Since(3, 0)))
	assert.Equal(t, []uint64{4}, ids(l.Since(3, 1)))
	assert.Empty(t, l.Since(5, 0))
	assert.Equal(t, []uint64{4, 5}, ids(l.Latest(2)))
	assert.Equal(t, []uint64{3, 4, 5}, ids(l.Latest(10)), "Latest never reports a gap")
}

func ids(evs []contract.Event) []uint64 {
	out := []uint64{}
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

func TestSubscriptionNeverBlocksAddAndResumes(t *testing.T) {
	l := NewLog(100)
	sub := l.Subscribe(0)
	defer sub.Close()
	// Nobody reads: Add must still return at once, however many
	done := make(chan struct{})
	go func() {
		for i := 0; i < 1000; i++ {
			l.Add(Launched("c", "n"))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Add blocked on a subscriber that does not read")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	evs, err := sub.Next(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, contract.EventGap, evs[0].Type, "the slow subscriber learns that it lost 900 events")
	assert.Equal(t, 900, evs[0].Count)
	assert.Len(t, evs, 101)
	assert.Equal(t, uint64(1000), evs[len(evs)-1].ID)

	// Waits for the next one: Next cannot return before the Add, whether it is already waiting or
	// not (the order is the channel's, not a sleep's).
	type next struct {
		evs []contract.Event
		err error
	}
	got := make(chan next, 1)
	go func() { evs, err := sub.Next(ctx, 0); got <- next{evs, err} }()
	select {
	case n := <-got:
		t.Fatalf("Next returned before any new event: %v %v", n.evs, n.err)
	default:
	}
	l.Add(Finished(decision.Outcome{Status: contract.Succeeded, Diagnostics: "ok"}))
	n := <-got
	require.NoError(t, n.err)
	require.Len(t, n.evs, 1)
	assert.Equal(t, contract.EventFinished, n.evs[0].Type)

	short, c2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer c2()
	_, err = sub.Next(short, 0)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	sub.Close()
	assert.Equal(t, 0, l.Subscribers())
}

func TestEventLogConcurrentAddIsRaceFree(t *testing.T) {
	l := NewLog(50)
	var seen []contract.EventType
	var mu sync.Mutex
	l.OnAdd(func(e contract.Event) { mu.Lock(); seen = append(seen, e.Type); mu.Unlock() })
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				l.Add(Launched("c", "n"))
				_ = l.Latest(5)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, uint64(400), l.LastID())
	assert.Len(t, seen, 400)
}

func TestEventMessagesNameWhatAUserActsOn(t *testing.T) {
	e := AllocationRejected("external-resource.gpu.amount", 5, 4, "yarn.io/gpu", "InvalidResourceRequestException: ...")
	assert.Contains(t, e.Message, "external-resource.gpu.amount = 5")
	assert.Contains(t, e.Message, "at most 4 yarn.io/gpu")
	require.NotNil(t, e.Maximum)
	assert.Equal(t, int64(4), *e.Maximum)

	e = AllocationRejected("external-resource.fpga.amount", 1, -1, "example.com/fpga", "ResourceNotFoundException")
	assert.Contains(t, e.Message, "does not know")
	assert.Nil(t, e.Maximum)

	e = NotEnoughResources(contract.Evidence{Asked: contract.Capability{"yarn.io/gpu": 4, "memory-mb": 512}, Pending: 1, PendingFor: "5s", Nodes: 2,
		ClusterTotal: contract.Capability{"yarn.io/gpu": 8}, ClusterFree: contract.Capability{"yarn.io/gpu": 0},
		LargestNode: "127.0.0.1:1234", LargestCap: contract.Capability{"yarn.io/gpu": 4}, LargestFree: contract.Capability{"yarn.io/gpu": 0}}, decision.PendingWait)
	assert.Contains(t, e.Message, "1 TaskExecutor container(s) of memory-mb=512 yarn.io/gpu=4 still pending after 5s")
	assert.Contains(t, e.Message, "total yarn.io/gpu=8, free yarn.io/gpu=0")
	assert.Contains(t, e.Message, "largest node 127.0.0.1:1234")
	assert.Contains(t, e.Message, "still waiting")
	assert.Contains(t, NotEnoughResources(contract.Evidence{}, decision.PendingFail).Message, "failing the application")

	e = Completed("c1", "n1", decision.Exit{Status: 137, Class: decision.Classify(137)})
	assert.Equal(t, contract.SeverityError, e.Severity)
	assert.Contains(t, e.Message, "killed by signal 9")
	assert.Equal(t, contract.ExitFailed, e.ExitClass)
	e = Completed("c1", "n1", decision.Exit{Status: -102, Class: decision.Classify(-102)})
	assert.Equal(t, contract.SeverityWarning, e.Severity)
	assert.NotContains(t, e.Message, "counts as a failure")

	e = ResourceInfo("c1", "n1", map[string][]resources.Info{"gpu": {{"index": "0"}, {"index": "3"}}})
	assert.Contains(t, e.Message, "gpu 0,3")

	e = DiscoveryFailed("c1", "n1", "gpu", "found 1 GPU, 2 required")
	assert.Contains(t, e.Message, "discovery of resource gpu failed")
	assert.Contains(t, e.Message, "found 1 GPU, 2 required")
}

// TestEventLogIsBoundedInBytes: launcher reports of up to contract.MaxReportBytes each become events;
// 10,000 of them must not hold a GiB (docs/security.md#flood-bounds). The default log keeps at most
// defaultBytes of JSON, the newest first, and tells a reader what it lost with a gap event.
func TestEventLogIsBoundedInBytes(t *testing.T) {
	l := NewLog(DefaultCapacity)
	big := strings.Repeat("x", 60<<10)
	const n = 1000 // ~60 MiB offered
	for i := 0; i < n; i++ {
		l.Add(DiscoveryFailed("container_1", "node:1", "yarn.io/gpu", big))
	}
	assert.LessOrEqual(t, l.Bytes(), defaultBytes)
	evs := l.Since(0, 0)
	require.NotEmpty(t, evs)
	assert.Equal(t, contract.EventGap, evs[0].Type, "the dropped events are announced")
	total := 0
	for _, e := range evs[1:] {
		data, err := json.Marshal(e)
		require.NoError(t, err)
		total += len(data)
	}
	assert.LessOrEqual(t, total, defaultBytes, "what a reader gets is what the log holds")
	assert.Greater(t, len(evs)-1, 100, "the bound keeps more than a hundred of the largest events")
	assert.Equal(t, uint64(n), evs[len(evs)-1].ID, "the newest is kept")
	assert.Equal(t, uint64(n), evs[0].ID+uint64(len(evs)-1), "no hole between the gap and the kept events")

	// A single event larger than the bound is still kept (the newest always is) and evicts the rest.
	small := newLogBytes(100, 1<<10)
	small.Add(Requested(1, contract.Capability{"yarn.io/gpu": 1}))
	small.Add(DiscoveryFailed("c", "n:1", "gpu", strings.Repeat("y", 4<<10)))
	assert.Equal(t, []uint64{2}, ids(small.Latest(10)))
}
