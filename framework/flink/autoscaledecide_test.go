package flink

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
)

var nan = math.NaN()

// defaultAutoscale is the autoscaler's spec at its defaults.
func defaultAutoscale() autoscaleSpec {
	return autoscaleSpec{Mode: autoscaleRecommend, Utilisation: defaultAutoscaleUtilisation, Band: defaultAutoscaleBand, Min: 1,
		Window: defaultAutoscaleWindow, Stabilise: defaultAutoscaleStabilise, Grace: defaultAutoscaleGrace,
		CatchUp: defaultAutoscaleCatchUp, MaxStep: defaultAutoscaleMaxStep}
}

// source and op are a source vertex and an operator reading from inputs, with what was measured.
func source(id string, p int, rate, busy, pending float64) vertexLoad {
	return vertexLoad{ID: id, Name: id, Parallelism: p, MaxParallelism: 128, Busy: busy, BackPressured: 0, In: 0, Out: rate,
		SourceRate: rate, Pending: pending, GPU: nan}
}

func op(id string, p int, in, out, busy float64, inputs ...string) vertexLoad {
	return vertexLoad{ID: id, Name: id, Parallelism: p, MaxParallelism: 128, Inputs: inputs, Busy: busy, In: in, Out: out,
		SourceRate: nan, Pending: nan, GPU: nan}
}

func decided(t *testing.T, d *autoscaleDecision, id string) vertexDecision {
	t.Helper()
	for _, v := range d.Vertices {
		if v.ID == id {
			return v
		}
	}
	require.Fail(t, "no decision for "+id)
	return vertexDecision{}
}

// A vertex busy all the time at the sources' rate runs above the band: its true rate is what it
// takes in, so it needs rate / (true rate × 70 %) subtasks; its source, half busy, is within it.
func TestDecideScalesOutABusyVertex(t *testing.T) {
	now := time.Unix(1000, 0)
	d := decide(now, []vertexLoad{source("src", 1, 100, 0.6, nan), op("map", 1, 100, 100, 1.0, "src")},
		autoscaleBounds{spec: defaultAutoscale()}, lowerSince{})
	m := decided(t, d, "map")
	assert.Equal(t, 2, m.To)
	assert.InDelta(t, 100, m.TrueRate, 1e-9)
	assert.InDelta(t, 100, m.TargetRate, 1e-9)
	assert.Contains(t, m.Why, "utilisation 100% at 1, outside 50%..90%")
	assert.Equal(t, 1, decided(t, d, "src").To, "60 % is within the band")
	assert.True(t, d.changes())
	assert.Equal(t, "map 1 → 2 (utilisation 100% at 1, outside 50%..90%: 100/s over 100/s per subtask at 70%)", d.outcome())
	assert.Contains(t, d.inputs(), "map p=1 in=100/s busy=100% true=100/s/subtask target=100/s")
}

// A source held back by the vertex after it reads only what that vertex takes (250/s): the records
// that arrive and pile up unread (its backlog growing 275/s) are load too. The target is what
// arrives (525/s) plus what clears the backlog (6000 over 120 s), so the map goes 1 → 4 in one
// decision, where the read rate and the backlog alone would ask for 2.
func TestDecideCountsTheBacklogsGrowth(t *testing.T) {
	src := source("src", 1, 250, 0.3, 6000)
	src.PendingGrowth = 275
	d := decide(time.Unix(0, 0), []vertexLoad{src, op("map", 1, 250, 250, 1.0, "src")}, autoscaleBounds{spec: defaultAutoscale()}, lowerSince{})
	m := decided(t, d, "map")
	assert.InDelta(t, 575, m.TargetRate, 1e-9, "250/s read + 275/s piling up + 6000 over 120 s")
	assert.Equal(t, 4, m.To, "ceil(575 / (250 × 0.7)) = 4")
	assert.Contains(t, d.inputs(), "lag=6000 (+275/s)")

	src.PendingGrowth = nan
	d = decide(time.Unix(0, 0), []vertexLoad{src, op("map", 1, 250, 250, 1.0, "src")}, autoscaleBounds{spec: defaultAutoscale()}, lowerSince{})
	assert.Equal(t, 2, decided(t, d, "map").To, "without the growth: ceil(300 / 175)")

	// A backlog being cleared faster than records arrive lowers what arrives, never below 0.
	src.PendingGrowth = -1000
	d = decide(time.Unix(0, 0), []vertexLoad{src, op("map", 1, 250, 250, 1.0, "src")}, autoscaleBounds{spec: defaultAutoscale()}, lowerSince{})
	assert.InDelta(t, 50, decided(t, d, "map").TargetRate, 1e-9, "0/s arriving + 6000 over 120 s")
}

// growth is the backlog's change per second between the first and the last samples that report
// one, whatever the samples between; unknown with fewer than two.
func TestBacklogGrowthOverTheWindow(t *testing.T) {
	at := func(sec int64, pending float64) map[string]vertexLoad {
		return map[string]vertexLoad{"src": {ID: "src", Pending: pending, At: time.Unix(sec, 0)}}
	}
	assert.InDelta(t, 100, growth("src", []map[string]vertexLoad{at(0, 0), at(5, nan), at(10, 400), at(20, 2000)}), 1e-9)
	assert.InDelta(t, -50, growth("src", []map[string]vertexLoad{at(0, 1000), at(10, 500)}), 1e-9)
	assert.True(t, math.IsNaN(growth("src", []map[string]vertexLoad{at(0, 1000)})))
	assert.True(t, math.IsNaN(growth("map", []map[string]vertexLoad{at(0, 1000), at(10, 500)})))
}

// A source's backlog raises the target by what clears it within the catch-up time, carried down to
// the operator by its records out per record in; the parallelism is rounded up to a divisor of the
// max parallelism (6 → 8 of 128).
func TestDecideClearsTheBacklogWithinTheCatchUpTime(t *testing.T) {
	spec := defaultAutoscale()
	d := decide(time.Unix(0, 0), []vertexLoad{source("src", 1, 100, 0.5, 12000), op("map", 2, 100, 50, 1.0, "src"), op("sink", 1, 50, 0, 0.2, "map")},
		autoscaleBounds{spec: spec}, lowerSince{})
	m := decided(t, d, "map")
	assert.InDelta(t, 200, m.TargetRate, 1e-9, "100/s + 12000 records over 120 s")
	assert.InDelta(t, 50, m.TrueRate, 1e-9)
	assert.Equal(t, 8, m.To, "ceil(200 / (50 × 0.7)) = 6, rounded up to 8, a divisor of 128")
	s := decided(t, d, "sink")
	assert.InDelta(t, 100, s.TargetRate, 1e-9, "the map sends on half of what it takes in")
	assert.Equal(t, 1, s.To, "40 % at the target rate: within the band")
	assert.Contains(t, d.inputs(), "lag=12000")
}

// Within the band nothing changes: no flapping around the target.
func TestDecideLeavesAVertexWithinTheBand(t *testing.T) {
	d := decide(time.Unix(0, 0), []vertexLoad{source("src", 2, 100, 0.3, 0), op("map", 2, 100, 100, 0.8, "src")},
		autoscaleBounds{spec: defaultAutoscale()}, lowerSince{})
	assert.False(t, d.changes(), d.outcome())
	assert.Equal(t, "no change", d.outcome())
	assert.Contains(t, decided(t, d, "map").Why, "utilisation 80% within 50%..90%")
}

// A scale-down is applied only once it has been wanted for the grace; a scale-out meanwhile resets it.
func TestDecideScaleDownWaitsTheGrace(t *testing.T) {
	spec := defaultAutoscale()
	since := lowerSince{}
	loads := []vertexLoad{source("src", 1, 100, 0.55, 0), op("map", 4, 100, 100, 0.2, "src")}
	t0 := time.Unix(0, 0)
	d := decide(t0, loads, autoscaleBounds{spec: spec}, since)
	m := decided(t, d, "map")
	assert.Equal(t, 4, m.To, "not before the grace")
	assert.Contains(t, m.Why, "2 wanted, scale-down waits 5m0s more (autoscale-scale-down-grace)")
	d = decide(t0.Add(4*time.Minute), loads, autoscaleBounds{spec: spec}, since)
	assert.Equal(t, 4, decided(t, d, "map").To)
	d = decide(t0.Add(5*time.Minute), loads, autoscaleBounds{spec: spec}, since)
	assert.Equal(t, 2, decided(t, d, "map").To, "ceil(100 / (125 × 0.7)) = 2 after the grace")

	since = lowerSince{}
	decide(t0, loads, autoscaleBounds{spec: spec}, since)
	busy := []vertexLoad{source("src", 1, 100, 0.55, 0), op("map", 4, 100, 100, 0.7, "src")}
	decide(t0.Add(time.Minute), busy, autoscaleBounds{spec: spec}, since)
	d = decide(t0.Add(5*time.Minute), loads, autoscaleBounds{spec: spec}, since)
	assert.Equal(t, 4, decided(t, d, "map").To, "the wait starts again after a minute within the band")
}

// A vertex whose TaskManagers' GPUs are busier than the band scales out though its busy time is low.
func TestDecideScalesOutOnTheGPU(t *testing.T) {
	m := op("infer", 2, 100, 100, 0.55, "src")
	m.GPU = 0.96
	d := decide(time.Unix(0, 0), []vertexLoad{source("src", 1, 100, 0.5, 0), m}, autoscaleBounds{spec: defaultAutoscale()}, lowerSince{})
	v := decided(t, d, "infer")
	assert.Equal(t, 4, v.To, "ceil(2 × 0.96 / 0.7) = 3, rounded up to 4 of 128")
	assert.Contains(t, v.Why, "GPU 96% above 90%")
	assert.Contains(t, d.inputs(), "gpu=96%")

	m.GPU = 0.6
	d = decide(time.Unix(0, 0), []vertexLoad{source("src", 1, 100, 0.5, 0), m}, autoscaleBounds{spec: defaultAutoscale()}, lowerSince{})
	assert.Equal(t, 2, decided(t, d, "infer").To, "a GPU within the band changes nothing")
}

// The bounds hold a decision, and the decision names the bound it hit: the max step, the max
// parallelism, autoscale-max-parallelism, the slots the TaskManagers hold.
func TestDecideNamesTheLimitItHit(t *testing.T) {
	loads := func() []vertexLoad {
		return []vertexLoad{source("src", 1, 100, 0.5, 108000), op("map", 1, 100, 100, 1.0, "src")}
	}
	spec := defaultAutoscale()
	v := decided(t, decide(time.Unix(0, 0), loads(), autoscaleBounds{spec: spec}, lowerSince{}), "map")
	assert.Equal(t, 4, v.To, "100/s + 108000 records over 120 s = 1000/s wants 15; one step is ×4")
	assert.Equal(t, "autoscale-max-step = 4", v.Limit)

	spec.Max = 3
	v = decided(t, decide(time.Unix(0, 0), loads(), autoscaleBounds{spec: spec}, lowerSince{}), "map")
	assert.Equal(t, 3, v.To)
	assert.Equal(t, "autoscale-max-parallelism = 3", v.Limit)

	spec = defaultAutoscale()
	l := loads()
	l[1].MaxParallelism = 2
	v = decided(t, decide(time.Unix(0, 0), l, autoscaleBounds{spec: spec}, lowerSince{}), "map")
	assert.Equal(t, 2, v.To)
	assert.Equal(t, "the vertex's max parallelism 2", v.Limit)

	d := decide(time.Unix(0, 0), loads(), autoscaleBounds{spec: spec, slots: 3, slotsLimit: "the TaskManagers' 3 slots (taskexecutor.instances = 3 × 1 slot)"}, lowerSince{})
	v = decided(t, d, "map")
	assert.Equal(t, 3, v.To, "the source and the map share a slot per subtask: 3 slots run 3")
	assert.Equal(t, "the TaskManagers' 3 slots (taskexecutor.instances = 3 × 1 slot)", v.Limit)
	assert.Contains(t, d.outcome(), "map 1 → 3 (", "")
	assert.Contains(t, d.outcome(), "held by the TaskManagers' 3 slots")

	d = decide(time.Unix(0, 0), []vertexLoad{source("src", 3, 300, 1.0, 0)}, autoscaleBounds{spec: spec, slots: 3, slotsLimit: "3 slots"}, lowerSince{})
	assert.False(t, d.changes())
	assert.Equal(t, "src stays at 3 (utilisation 100% at 3, outside 50%..90%: 300/s over 100/s per subtask at 70%), held by 3 slots", d.outcome(),
		"busy at the slots' limit: the decision says what holds it")
	assert.NotEmpty(t, d.key())

	spec.Min = 2
	d = decide(time.Unix(0, 0), []vertexLoad{source("src", 2, 10, 0.6, 0)}, autoscaleBounds{spec: spec}, lowerSince{})
	assert.Equal(t, 2, decided(t, d, "src").To, "min-parallelism holds")
}

// Without a busy time or records, a vertex keeps its parallelism and says why.
func TestDecideKeepsAVertexWithNothingMeasured(t *testing.T) {
	d := decide(time.Unix(0, 0), []vertexLoad{source("src", 2, 0, nan, nan), op("map", 3, 0, 0, 0, "src")},
		autoscaleBounds{spec: defaultAutoscale()}, lowerSince{})
	assert.False(t, d.changes())
	assert.Equal(t, "nothing measured to go by", decided(t, d, "src").Why)
	assert.Equal(t, "idle", decided(t, d, "map").Why)
}

// Two sources into one operator: its target rate is its input rate scaled by what its inputs are to
// send, summed over both.
func TestDecideSumsTheTargetsOfSeveralInputs(t *testing.T) {
	d := decide(time.Unix(0, 0), []vertexLoad{source("a", 1, 100, 0.5, 6000), source("b", 1, 100, 0.5, 0),
		op("join", 2, 200, 200, 0.6, "b", "a")}, autoscaleBounds{spec: defaultAutoscale()}, lowerSince{})
	j := decided(t, d, "join")
	assert.InDelta(t, 250, j.TargetRate, 1e-9, "(100 + 6000/120) + 100")
	assert.Equal(t, 2, j.To, "75 % at 250/s: within the band")
}

// The queue's headroom limits a scale-out to the TaskManagers' free slots and the TaskManagers the
// headroom holds in every resource one asks (here the GPUs: 7 free of 3 each, room for 2 more of 2
// slots); the decision names it when it is below the configured slots, else the slots.
func TestDecideIsHeldByTheQueuesHeadroom(t *testing.T) {
	worker := contract.Capability{"memory-mb": 2048, "vcores": 1, "yarn.io/gpu": 3}
	h := framework.Headroom{Free: contract.Capability{"memory-mb": 10240, "vcores": 9, "yarn.io/gpu": 7}, Worker: worker}
	room, limit := queueRoom(h, 1, 2)
	assert.Equal(t, 5, room, "1 free slot + 2 TaskManagers × 2 slots")
	assert.Equal(t, "the queue's headroom (10240 MiB, 9 vcores, 7 yarn.io/gpu free: room for 2 more TaskManagers of 2 slots)", limit)

	h.Free["memory-mb"] = 3000
	room, limit = queueRoom(h, 0, 1)
	assert.Equal(t, 1, room, "memory holds one more, though the GPUs hold two")
	assert.Contains(t, limit, "room for 1 more TaskManager of 1 slot)")

	delete(h.Free, "yarn.io/gpu")
	room, _ = queueRoom(h, 0, 1)
	assert.Equal(t, 1, room, "a type the headroom does not report holds nothing back")

	// src (p 2) and map (p 2) share slots: the job runs in 2; 100/s + 108000 records over 120 s =
	// 1000/s wants 8 of the map (max step ×4), the room is 2 + 3.
	loads := []vertexLoad{source("src", 2, 100, 0.5, 108000), op("map", 2, 100, 100, 1.0, "src")}
	d := decide(time.Unix(0, 0), loads, autoscaleBounds{spec: defaultAutoscale(), slots: 16, slotsLimit: "16 slots", room: 3, roomLimit: "the queue's headroom (…)"}, lowerSince{})
	m := decided(t, d, "map")
	assert.Equal(t, 5, m.To)
	assert.Equal(t, "the queue's headroom (…)", m.Limit)
	assert.Contains(t, d.outcome(), "map 2 → 5 (")
	assert.Contains(t, d.outcome(), "held by the queue's headroom (…)")

	d = decide(time.Unix(0, 0), loads, autoscaleBounds{spec: defaultAutoscale(), slots: 4, slotsLimit: "4 slots", room: 3, roomLimit: "the queue's headroom (…)"}, lowerSince{})
	m = decided(t, d, "map")
	assert.Equal(t, 4, m.To)
	assert.Equal(t, "4 slots", m.Limit, "the configured slots are lower than the room: they hold it")

	d = decide(time.Unix(0, 0), loads, autoscaleBounds{spec: defaultAutoscale(), room: 0, roomLimit: "the queue's headroom (…)"}, lowerSince{})
	assert.False(t, d.changes(), "no room at all: no scale-out")
	assert.Contains(t, d.outcome(), "map stays at 2 (")
}
