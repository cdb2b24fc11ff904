package gpuuse

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

func util(v float64) *float64 { return &v }

func one(uuid string, u float64) contract.AliveReport {
	return contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{{UUID: uuid, Util: util(u), MemUsedMiB: 10, MemTotalMiB: 143771, PowerW: util(111.43)}}}}}
}

// The idle detector with a fake clock: one event per idle spell, after the warning time, re-armed
// when the GPU is busy again; a busy GPU never warns.
func TestIdleGPUWarnsOncePerSpell(t *testing.T) {
	b := &Book{IdleWarning: 3 * time.Second}
	now := time.Unix(1000, 0)
	var got []string
	step := func(uuid string, u float64) {
		evs, err := b.Add("c1", "n1", []string{"GPU-a", "GPU-b"}, one(uuid, u), now)
		require.NoError(t, err)
		for _, e := range evs {
			got = append(got, fmt.Sprintf("%s %s at %ds", e.Type, e.Reason, now.Unix()-1000))
		}
	}
	for range 6 { // idle 0..5 s: warned at 3 s only
		step("GPU-a", 1)
		step("GPU-b", 90)
		now = now.Add(time.Second)
	}
	step("GPU-a", 50) // busy: re-armed
	now = now.Add(time.Second)
	for range 4 {
		step("GPU-a", 0)
		now = now.Add(time.Second)
	}
	assert.Equal(t, []string{"idle-gpu GPU-a at 3s", "idle-gpu GPU-a at 10s"}, got)
	st := b.Status("c1")
	require.Len(t, st, 2)
	assert.Equal(t, "GPU-a", st[0].UUID)
	assert.InDelta(t, (6*1+50)/11.0, st[0].MeanUtil, 1e-9)
	assert.InDelta(t, 10/11.0, st[0].IdleShare, 1e-9)
	assert.Equal(t, 90.0, st[1].MeanUtil)
	u := b.Usage(2)
	assert.Equal(t, 17, u.Samples)
	assert.InDelta(t, (6*1+50+6*90)/17.0/100, u.UsedShare, 1e-9)
	assert.Contains(t, u.String(), "GPU time: 2.000 GPU-hours reserved, 35% used (mean utilisation of 17 samples), 59% idle")
}

func TestIdleWarningOff(t *testing.T) {
	b := &Book{}
	now := time.Unix(1000, 0)
	for range 100 {
		evs, err := b.Add("c1", "n1", []string{"GPU-a"}, one("GPU-a", 0), now)
		require.NoError(t, err)
		require.Empty(t, evs)
		now = now.Add(time.Minute)
	}
}

// The ring keeps the last SeriesLen samples, oldest first, with the AM's times.
func TestSeriesIsABoundedRing(t *testing.T) {
	b := &Book{}
	now := time.Unix(1000, 0)
	for i := range SeriesLen + 5 {
		r := one("GPU-a", float64(i%101))
		r.GPUSamples[0].GPUs[0].PowerW = nil
		_, err := b.Add("c1", "n1", []string{"GPU-a"}, r, now.Add(time.Duration(i)*time.Second))
		require.NoError(t, err)
	}
	s, ok := b.Series("c1")
	require.True(t, ok)
	require.Len(t, s.GPUs, 1)
	p := s.GPUs[0]
	require.Len(t, p.Times, SeriesLen)
	assert.Equal(t, now.Add(5*time.Second).UnixMilli(), p.Times[0])
	assert.Equal(t, now.Add(time.Duration(SeriesLen+4)*time.Second).UnixMilli(), p.Times[SeriesLen-1])
	assert.Equal(t, 5.0, p.Util[0])
	assert.Equal(t, -1.0, p.PowerW[0], "power [N/A]")
	assert.Equal(t, int64(143771), p.MemTotalMiB)
	b.Forget("c1")
	_, ok = b.Series("c1")
	assert.False(t, ok)
	assert.Equal(t, SeriesLen+5, b.Usage(0).Samples, "the job keeps a forgotten container's samples")
}

// A message's samples are dated by the AM's clock (now - agoMs), oldest first whatever their order.
func TestSamplesAreDatedByTheAMsClock(t *testing.T) {
	b := &Book{}
	now := time.Unix(1000, 0)
	r := contract.AliveReport{GPUSamples: []contract.GPUSample{
		{AgoMs: 0, GPUs: []contract.GPUReading{{UUID: "GPU-a", Util: util(2)}}},
		{AgoMs: 2000, GPUs: []contract.GPUReading{{UUID: "GPU-a", Util: util(1)}}},
	}}
	_, err := b.Add("c1", "n1", []string{"GPU-a"}, r, now)
	require.NoError(t, err)
	s, _ := b.Series("c1")
	assert.Equal(t, []int64{now.Add(-2 * time.Second).UnixMilli(), now.UnixMilli()}, s.GPUs[0].Times)
	assert.Equal(t, []float64{1, 2}, s.GPUs[0].Util)
}

func TestAddRefusesWhatTheContainerDoesNotHold(t *testing.T) {
	b := &Book{}
	now := time.Unix(1000, 0)
	for name, c := range map[string]struct {
		r    contract.AliveReport
		want string
	}{
		"another GPU":   {one("GPU-z", 1), `GPU "GPU-z" is not one the container's launcher reported`},
		"util over 100": {one("GPU-a", 250), "util 250: want 0..100"},
		"too many":      {contract.AliveReport{GPUSamples: make([]contract.GPUSample, contract.MaxAliveSamples+1)}, "at most 32 per message"},
		"old":           {contract.AliveReport{GPUSamples: []contract.GPUSample{{AgoMs: 2 * time.Hour.Milliseconds()}}}, "agoMs 7200000"},
		"twice": {contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{{UUID: "GPU-a"}, {UUID: "GPU-a"}}}}},
			"has 2 GPUs; the container's launcher reported 1"},
	} {
		_, err := b.Add("c1", "n1", []string{"GPU-a"}, c.r, now)
		assert.ErrorContains(t, err, c.want, name)
	}
	_, ok := b.Series("c1")
	assert.False(t, ok, "nothing of a refused message is kept")
	evs, err := b.Add("c1", "n1", []string{"GPU-a"}, contract.AliveReport{GPUSampleError: "nvidia-smi: gone"}, now)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, contract.EventGPUSamplingFailed, evs[0].Type)
	evs, _ = b.Add("c1", "n1", []string{"GPU-a"}, contract.AliveReport{GPUSampleError: "nvidia-smi: gone"}, now)
	assert.Empty(t, evs, "once per container")
}

// TestGPUBookMemoryAt10000Containers measures the book of 10,000 containers with full series (one GPU
// each, and eight each): what SeriesLen's comment says.
func TestGPUBookMemoryAt10000Containers(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MB")
	}
	for _, gpus := range []int{1, 8} {
		uuids := make([]string, gpus)
		for i := range uuids {
			uuids[i] = fmt.Sprintf("GPU-%08d-0000-0000-0000-000000000000", i)
		}
		r := contract.AliveReport{GPUSamples: make([]contract.GPUSample, contract.MaxAliveSamples)}
		for i := range r.GPUSamples {
			for _, u := range uuids {
				r.GPUSamples[i].GPUs = append(r.GPUSamples[i].GPUs, contract.GPUReading{UUID: u, Util: util(50), MemUsedMiB: 1011, MemTotalMiB: 143771, PowerW: util(690.74)})
			}
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b := &Book{}
		const containers = 1000 // times ten below: 10,000 take 20 s
		now := time.Unix(1000, 0)
		for c := range containers {
			id := fmt.Sprintf("container_1_0001_01_%06d", c)
			for k := 0; k < SeriesLen; k += contract.MaxAliveSamples {
				if _, err := b.Add(id, "n1", uuids, r, now); err != nil {
					t.Fatal(err)
				}
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		per := float64(after.HeapAlloc-before.HeapAlloc) / containers
		t.Logf("GPU book, %d GPU(s) per container: %.0f bytes per container, %.0f MB at 10,000 containers", gpus, per, per*10000/1e6)
		runtime.KeepAlive(b)
		if limit := float64(8+9*gpus)*SeriesLen*1.1 + 1500; per > limit {
			t.Errorf("%.0f bytes per container of %d GPUs; want at most %.0f", per, gpus, limit)
		}
	}
}

// The status' history (the web UI's chart): a short steady series keeps a point per step of 1.5
// sampling intervals with none empty; a gap in the sampling shows as -1; a full ring of an hour is
// coarsened to at most contract.MaxHistoryPoints; a GPU without a utilisation has none; Status alone
// (the gauges' view) carries none.
func TestStatusHistory(t *testing.T) {
	b := &Book{}
	now := time.Unix(1000, 0)
	add := func(id string, u float64) {
		t.Helper()
		_, err := b.Add(id, "n1", []string{"GPU-a"}, one("GPU-a", u), now)
		require.NoError(t, err)
	}
	for i := range 20 { // 1 s apart, 90 then idle from 10 s, with 100 ms of jitter
		now = now.Add(time.Second + time.Duration(i%3-1)*100*time.Millisecond)
		add("c1", map[bool]float64{true: 90, false: 0}[i < 10])
	}
	hist := func(id string) *contract.GPUHistory {
		st := b.Status(id)
		require.Len(t, st, 1)
		b.Histories(id, st)
		return st[0].History
	}
	assert.Nil(t, b.Status("c1")[0].History, "Status alone (the gauges' view) walks no series")
	h := hist("c1")
	require.NotNil(t, h)
	assert.Equal(t, time.Unix(1000, 0).Add(900*time.Millisecond).UnixMilli(), h.From)
	assert.InDelta(t, 1500, h.StepMs, 10)
	assert.NotContains(t, h.Util, -1, "a steady series has no empty step: %v", h.Util)
	assert.Equal(t, 90, h.Util[0])
	assert.Equal(t, 0, h.Util[len(h.Util)-1])

	now = now.Add(10 * time.Second) // a gap of 10 intervals
	add("c1", 50)
	h = hist("c1")
	assert.Contains(t, h.Util, -1, "the gap: %v", h.Util)
	assert.Equal(t, 50, h.Util[len(h.Util)-1])

	for range SeriesLen { // a full ring at 10 s: an hour in at most 60 steps
		now = now.Add(10 * time.Second)
		add("c2", 40)
	}
	h = hist("c2")
	assert.LessOrEqual(t, len(h.Util), contract.MaxHistoryPoints)
	assert.GreaterOrEqual(t, len(h.Util), contract.MaxHistoryPoints-1)
	assert.NotContains(t, h.Util, -1)

	_, err := b.Add("c3", "n1", []string{"GPU-m"}, contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{{UUID: "GPU-m", MemTotalMiB: 10}}}}}, now)
	require.NoError(t, err)
	assert.Nil(t, hist("c3"), "a MIG instance reports no utilisation: no history")
	assert.Nil(t, b.Status("c4"))
}

// A reading of a GPU the tool listed but could not read (its Problem): the AM takes it, its point in
// the series is unknown, the GPU's memory total and mean are those of its readable samples, and the
// status says the problem until a readable sample comes (issue 40 §7).
func TestASickReadingIsUnknownNotZero(t *testing.T) {
	b := &Book{}
	now := time.Unix(1000, 0)
	_, err := b.Add("c1", "n1", []string{"GPU-a"}, one("GPU-a", 60), now)
	require.NoError(t, err)
	sick := contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{{UUID: "GPU-a", Problem: `utilization.gpu: the tool reports "[GPU is lost]"`}}}}}
	_, err = b.Add("c1", "n1", []string{"GPU-a"}, sick, now.Add(time.Second))
	require.NoError(t, err)
	st := b.Status("c1")
	require.Len(t, st, 1)
	assert.Equal(t, `utilization.gpu: the tool reports "[GPU is lost]"`, st[0].Problem)
	assert.Nil(t, st[0].Util)
	assert.Equal(t, 60.0, st[0].MeanUtil, "the sick sample is not a 0 % one")
	assert.Equal(t, 1, st[0].Samples)
	s, _ := b.Series("c1")
	assert.Equal(t, []float64{60, -1}, s.GPUs[0].Util)
	assert.Equal(t, []float64{111.43, -1}, s.GPUs[0].PowerW)
	assert.Equal(t, int64(143771), s.GPUs[0].MemTotalMiB, "the total of the last readable sample")
	_, err = b.Add("c1", "n1", []string{"GPU-a"}, one("GPU-a", 70), now.Add(2*time.Second))
	require.NoError(t, err)
	assert.Empty(t, b.Status("c1")[0].Problem, "readable again")
	bad := contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{{UUID: "GPU-a", Util: util(5), Problem: "lost"}}}}}
	_, err = b.Add("c1", "n1", []string{"GPU-a"}, bad, now)
	assert.ErrorContains(t, err, "values beside a problem")
	long := contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{{UUID: "GPU-a", Problem: strings.Repeat("x", contract.MaxGPUProblem+1)}}}}}
	_, err = b.Add("c1", "n1", []string{"GPU-a"}, long, now)
	assert.ErrorContains(t, err, "want one line of at most 96 bytes")
}

// A container's idle spell (taskexecutor.idle-gpu-release, docs/gpus.md#idle-gpus-given-back), fed
// samples on a fake clock: every GPU of the container idle in every sample; a busy blip on one GPU,
// a GPU missing from a sample, a GPU that cannot be read or reports no utilisation, and a gap in the
// sampling each end it; a container with no known GPU is never idle.
func TestIdleSpellNeedsEveryGPUIdleInEverySample(t *testing.T) {
	b := &Book{IdleGap: 3 * time.Second}
	known := []string{"GPU-a", "GPU-b"}
	start := time.Unix(1000, 0)
	now := start
	send := func(readings ...contract.GPUReading) {
		t.Helper()
		_, err := b.Add("c1", "n1", known, contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: readings}}}, now)
		require.NoError(t, err)
	}
	r := func(uuid string, u float64) contract.GPUReading {
		return contract.GPUReading{UUID: uuid, Util: util(u), MemTotalMiB: 80000}
	}
	spell := func() (time.Duration, time.Duration) {
		since, last := b.IdleSpell("c1")
		if since.IsZero() {
			return -1, -1
		}
		return since.Sub(start), last.Sub(since)
	}
	assertSpell := func(from, length time.Duration, what string) {
		t.Helper()
		f, l := spell()
		assert.Equal(t, [2]time.Duration{from, length}, [2]time.Duration{f, l}, what)
	}
	tick := func() { now = now.Add(time.Second) }

	assertSpell(-1, -1, "nothing sampled: not idle")
	for range 5 {
		send(r("GPU-a", 0), r("GPU-b", 4.9))
		tick()
	}
	assertSpell(0, 4*time.Second, "both GPUs under 5% for 4 s")
	send(r("GPU-a", 0), r("GPU-b", 5)) // a busy blip of one GPU
	assertSpell(-1, -1, "5% is not idle")
	tick()
	send(r("GPU-a", 0), r("GPU-b", 0))
	tick()
	send(r("GPU-a", 0), r("GPU-b", 0))
	assertSpell(6*time.Second, time.Second, "a new spell after the blip")
	tick()
	send(r("GPU-a", 0)) // GPU-b missing from the sample
	assertSpell(-1, -1, "a GPU missing from a sample is not idle")
	tick()
	send(r("GPU-a", 0), r("GPU-b", 0))
	tick()
	send(r("GPU-a", 0), contract.GPUReading{UUID: "GPU-b", Problem: "[GPU is lost]"})
	assertSpell(-1, -1, "a GPU that cannot be read is not idle")
	tick()
	send(r("GPU-a", 0), contract.GPUReading{UUID: "GPU-b", MemTotalMiB: 80000})
	assertSpell(-1, -1, "a GPU without a utilisation (MIG) is not idle")
	tick()
	send(r("GPU-a", 0), r("GPU-b", 0))
	now = now.Add(3 * time.Second)
	send(r("GPU-a", 0), r("GPU-b", 0))
	assertSpell(12*time.Second, 3*time.Second, "a gap of IdleGap keeps the spell")
	now = now.Add(3*time.Second + time.Millisecond)
	send(r("GPU-a", 0), r("GPU-b", 0))
	assertSpell(18*time.Second+time.Millisecond, 0, "a longer gap starts it again")

	// Samples of one message, out of order, are booked oldest first.
	_, err := b.Add("c2", "n1", []string{"GPU-c"}, contract.AliveReport{GPUSamples: []contract.GPUSample{
		{AgoMs: 0, GPUs: []contract.GPUReading{r("GPU-c", 0)}},
		{AgoMs: 2000, GPUs: []contract.GPUReading{r("GPU-c", 0)}},
		{AgoMs: 1000, GPUs: []contract.GPUReading{r("GPU-c", 1)}},
	}}, now)
	require.NoError(t, err)
	since, last := b.IdleSpell("c2")
	assert.Equal(t, now.Add(-2*time.Second), since)
	assert.Equal(t, now, last)

	_, err = b.Add("c3", "n1", nil, contract.AliveReport{}, now)
	require.NoError(t, err)
	since, _ = b.IdleSpell("c3")
	assert.True(t, since.IsZero(), "no GPU: never idle")
	assert.False(t, allIdle(nil, []contract.GPUReading{r("GPU-x", 0)}))
}

// Only the newest containers' GPUs, contract.MaxHistoryGPUs in all, carry a history in the status:
// the rows the page draws, at the cost of 64 series walks per read whatever the job's size.
func TestStatusHistoriesOnlyForTheNewestGPUs(t *testing.T) {
	var b Book
	var cs []contract.ContainerStatus
	now := time.Unix(1000, 0)
	for i := range contract.MaxHistoryGPUs + 6 {
		id := "container_1_0001_01_" + strings.Repeat("0", 4) + string(rune('a'+i/26)) + string(rune('a'+i%26))
		u := 50.0
		_, err := b.Add(id, "n1", []string{"GPU-x"}, contract.AliveReport{GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{{UUID: "GPU-x", Util: &u}}}}}, now)
		require.NoError(t, err)
		cs = append(cs, contract.ContainerStatus{ID: id, GPUs: b.Status(id)})
	}
	b.NewestHistories(cs)
	for i, c := range cs {
		assert.Equal(t, i >= 6, c.GPUs[0].History != nil, "container %d of %d", i, len(cs))
	}
}

// The job's GPU time is absent for a job that holds no GPU, sampled none and gave none back; any of
// the three makes it, the GPU time given back beside the reserved one.
func TestJobUsageOnlyForAJobWithGPUTime(t *testing.T) {
	var b Book
	assert.Nil(t, b.JobUsage(0, 0), "no GPU held, none sampled, none given back")
	u := b.JobUsage(0, 1.5)
	require.NotNil(t, u, "given back only")
	assert.Equal(t, 1.5, u.GivenBackGPUHours)
	require.NotNil(t, b.JobUsage(2, 0))
	assert.Equal(t, 2.0, b.JobUsage(2, 0).ReservedGPUHours)
	_, err := b.Add("c1", "n1", []string{"GPU-a"}, one("GPU-a", 40), time.Unix(1000, 0))
	require.NoError(t, err)
	u = b.JobUsage(0, 0)
	require.NotNil(t, u, "sampled only")
	assert.Equal(t, 1, u.Samples)
}
