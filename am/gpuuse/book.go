package gpuuse

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// SeriesLen is how many samples the book keeps per container: an hour at the default interval of
// 10 s, six minutes at 1 s. Per GPU a sample costs 9 bytes (util uint8, memory uint32, power float32)
// and per container 8 more (its time); measured with the rest of the book
// (TestGPUBookMemoryAt10000Containers): 6.9 KB for a container of one GPU, 33 KB for one of eight, so
// 69 MB and 328 MB at 10,000 containers.
const SeriesLen = 360

// maxAge bounds how old a sample may say it is (contract.GPUSample.AgoMs).
const maxAge = time.Hour

// noUtil marks a sample whose tool gave no utilisation.
const noUtil = math.MaxUint8

// Book holds the GPU samples of every container of the AM.
type Book struct {
	// IdleWarning is taskexecutor.idle-gpu-warning (0: never warn).
	IdleWarning time.Duration
	// IdleGap: two samples of a container further apart than this break its idle spell (IdleSpell),
	// since what happened between them is unknown (0: no bound).
	IdleGap time.Duration
	by      map[string]*track
	// Job totals over every sample ever booked (containers forgotten included).
	n, idle int
	sum     float64
}

// track is one container's series: times in a ring shared by its GPUs.
type track struct {
	times       []int64 // Unix ms, a ring of at most SeriesLen
	next        int     // where the next sample goes once the ring is full
	gpus        []*gpuTrack
	errReported bool
	// idleSince..idleLast: the container's current idle spell (IdleSpell), zero while not idle.
	idleSince, idleLast time.Time
}

// latest is a GPU's latest reading without what its gpuTrack keeps already (UUID, index, total
// memory): a book of 10,000 containers of 8 GPUs holds 80,000 of them
// (TestGPUBookMemoryAt10000Containers).
type latest struct {
	util, power   *float64
	memUsed       int64
	problem, sick string
}

type gpuTrack struct {
	uuid     string
	index    int
	memTotal int64
	util     []uint8
	mem      []uint32
	power    []float32
	last     latest
	lastAt   time.Time
	// n samples with a utilisation, sum of them, idle of them under contract.IdleGPUPercent.
	n, idle int
	sum     float64
	// idleSince: the start of the current idle spell (zero while busy); warned: its event went out.
	idleSince time.Time
	warned    bool
}

// Add books the body of container id's liveness message, received at now. known are the UUIDs of
// the GPUs its launcher reported (its infos): readings of others are refused. It returns the events
// to emit (gpu-sampling-failed once, idle-gpu once per idle spell) or an error naming what is wrong, in
// which case nothing of the message is booked.
func (b *Book) Add(id, node string, known []string, r contract.AliveReport, now time.Time) ([]contract.Event, error) {
	if err := check(known, r); err != nil {
		return nil, err
	}
	if b.by == nil {
		b.by = map[string]*track{}
	}
	t := b.by[id]
	if t == nil {
		t = &track{times: make([]int64, 0, SeriesLen)} // the ring's whole size at once: no growth overshoot
		b.by[id] = t
	}
	var evs []contract.Event
	if r.GPUSampleError != "" && !t.errReported {
		t.errReported = true
		evs = append(evs, SamplingFailed(id, node, r.GPUSampleError))
	}
	samples := append([]contract.GPUSample(nil), r.GPUSamples...)
	sort.SliceStable(samples, func(i, j int) bool { return samples[i].AgoMs > samples[j].AgoMs })
	for _, s := range samples {
		at := now.Add(-time.Duration(s.AgoMs) * time.Millisecond)
		evs = append(evs, b.add(t, id, node, at, s.GPUs)...)
		t.spell(at, allIdle(known, s.GPUs), b.IdleGap)
	}
	return evs, nil
}

// allIdle says whether a sample read every GPU of known under contract.IdleGPUPercent. A GPU missing
// from the sample, one that could not be read, or one whose tool gives no utilisation is not idle:
// nothing says it is (docs/gpus.md#idle-gpus-given-back). A container with no known GPU never is.
func allIdle(known []string, readings []contract.GPUReading) bool {
	n := 0
	for _, u := range known {
		if u == "" {
			continue
		}
		n++
		i := slices.IndexFunc(readings, func(r contract.GPUReading) bool { return strings.EqualFold(r.UUID, u) })
		if i < 0 {
			return false
		}
		r := readings[i]
		if r.Problem != "" || r.Util == nil || *r.Util >= contract.IdleGPUPercent {
			return false
		}
	}
	return n > 0
}

// spell books a sample at at into the container's idle spell: a sample that is not all idle ends
// it, and so does a gap of more than gap since the spell's last sample (the new one starts it again).
func (t *track) spell(at time.Time, idle bool, gap time.Duration) {
	switch {
	case !idle:
		t.idleSince, t.idleLast = time.Time{}, time.Time{}
	case t.idleSince.IsZero() || gap > 0 && at.Sub(t.idleLast) > gap:
		t.idleSince, t.idleLast = at, at
	case at.After(t.idleLast):
		t.idleLast = at
	}
}

// IdleSpell is container id's current idle spell: since its first and at its latest sample, every
// sample read every GPU of the container idle, with no gap of more than IdleGap. Both are zero when
// the latest sample was not all idle or none was taken.
func (b *Book) IdleSpell(id string) (since, last time.Time) {
	if t := b.by[id]; t != nil {
		return t.idleSince, t.idleLast
	}
	return time.Time{}, time.Time{}
}

// check refuses a message that is too long, or names a GPU the container does not hold, or carries a
// value out of range.
func check(known []string, r contract.AliveReport) error {
	if len(r.GPUSamples) > contract.MaxAliveSamples {
		return fmt.Errorf("%d GPU samples: at most %d per message", len(r.GPUSamples), contract.MaxAliveSamples)
	}
	if len(r.GPUSampleError) > 4096 {
		return fmt.Errorf("gpuSampleError of %d bytes: at most 4096", len(r.GPUSampleError))
	}
	ours := make(map[string]bool, len(known))
	for _, u := range known {
		if u != "" {
			ours[strings.ToLower(u)] = true
		}
	}
	for i, s := range r.GPUSamples {
		if s.AgoMs < 0 || s.AgoMs > maxAge.Milliseconds() {
			return fmt.Errorf("sample %d: agoMs %d: want 0..%d", i, s.AgoMs, maxAge.Milliseconds())
		}
		if len(s.GPUs) > len(ours) || len(s.GPUs) > contract.MaxSampleGPUs {
			return fmt.Errorf("sample %d has %d GPUs; the container's launcher reported %d", i, len(s.GPUs), len(ours))
		}
		seen := map[string]bool{}
		for _, g := range s.GPUs {
			if err := g.Check(); err != nil {
				return fmt.Errorf("sample %d: %w", i, err)
			}
			u := strings.ToLower(g.UUID)
			if !ours[u] {
				return fmt.Errorf("sample %d: GPU %.60q is not one the container's launcher reported", i, g.UUID)
			}
			if seen[u] {
				return fmt.Errorf("sample %d: GPU %.60q twice", i, g.UUID)
			}
			seen[u] = true
		}
	}
	return nil
}

func (b *Book) add(t *track, id, node string, at time.Time, readings []contract.GPUReading) []contract.Event {
	pos := len(t.times)
	if pos == SeriesLen {
		pos = t.next
		t.next = (t.next + 1) % SeriesLen
		t.times[pos] = at.UnixMilli()
	} else {
		t.times = append(t.times, at.UnixMilli())
	}
	var evs []contract.Event
	for _, g := range t.gpus {
		g.put(pos, nil) // a GPU missing from this sample: nothing known
	}
	for _, r := range readings {
		g := t.gpu(r, pos)
		g.last, g.lastAt = latest{util: r.Util, power: r.PowerW, memUsed: r.MemUsedMiB, problem: r.Problem, sick: r.Sick}, at
		if r.Problem != "" {
			continue // listed, but nothing of it could be read: unknown at pos, as put it above
		}
		g.put(pos, &r)
		g.memTotal = r.MemTotalMiB
		if r.Util == nil {
			continue
		}
		u := *r.Util
		g.n++
		g.sum += u
		b.n++
		b.sum += u
		if u >= contract.IdleGPUPercent {
			g.idleSince, g.warned = time.Time{}, false
			continue
		}
		g.idle++
		b.idle++
		if g.idleSince.IsZero() {
			g.idleSince = at
		}
		if b.IdleWarning > 0 && !g.warned && at.Sub(g.idleSince) >= b.IdleWarning {
			g.warned = true
			evs = append(evs, IdleGPU(id, node, g.uuid, g.index, at.Sub(g.idleSince), b.IdleWarning))
		}
	}
	return evs
}

// gpu is t's track of r's GPU, made (its earlier points unknown) when new.
func (t *track) gpu(r contract.GPUReading, pos int) *gpuTrack {
	for _, g := range t.gpus {
		if strings.EqualFold(g.uuid, r.UUID) {
			return g
		}
	}
	n := len(t.times)
	g := &gpuTrack{uuid: r.UUID, index: r.Index, util: make([]uint8, n, SeriesLen), mem: make([]uint32, n, SeriesLen), power: make([]float32, n, SeriesLen)}
	for i := range n {
		g.util[i], g.power[i] = noUtil, float32(math.NaN())
	}
	t.gpus = append(t.gpus, g)
	return g
}

// put writes r (nil: unknown) at pos, growing the GPU's slices with the ring's.
func (g *gpuTrack) put(pos int, r *contract.GPUReading) {
	u, m, p := uint8(noUtil), uint32(0), float32(math.NaN())
	if r != nil {
		if r.Util != nil {
			u = uint8(math.Round(*r.Util))
		}
		m = uint32(r.MemUsedMiB)
		if r.PowerW != nil {
			p = float32(*r.PowerW)
		}
	}
	if pos == len(g.util) {
		g.util, g.mem, g.power = append(g.util, u), append(g.mem, m), append(g.power, p)
		return
	}
	g.util[pos], g.mem[pos], g.power[pos] = u, m, p
}

// Status is container id's GPUs for the status document, in the order the launcher sampled them (nil
// when none was sampled); Histories adds their utilisation over time.
func (b *Book) Status(id string) []contract.GPUStatus {
	t := b.by[id]
	if t == nil {
		return nil
	}
	out := make([]contract.GPUStatus, 0, len(t.gpus))
	for _, g := range t.gpus {
		s := contract.GPUStatus{UUID: g.uuid, Index: g.index, Util: g.last.util, MemUsedMiB: g.last.memUsed, MemTotalMiB: g.memTotal,
			PowerW: g.last.power, Problem: g.last.problem, Sick: g.last.sick, Samples: g.n, At: g.lastAt}
		if g.n > 0 {
			s.MeanUtil, s.IdleShare = g.sum/float64(g.n), float64(g.idle)/float64(g.n)
		}
		out = append(out, s)
	}
	return out
}

// NewestHistories gives the newest containers' GPUs of cs (the status's containers, oldest first,
// their GPUs Status(id)), at most contract.MaxHistoryGPUs of them, their utilisation history (the web
// UI's chart draws the same GPUs): a history costs a walk of the GPU's kept series, too much for every
// GPU of a large job on every read of the status (am's BenchmarkAMGPUBook).
func (b *Book) NewestHistories(cs []contract.ContainerStatus) {
	n := 0
	for i := len(cs) - 1; i >= 0; i-- {
		k := len(cs[i].GPUs)
		if k == 0 || n+k > contract.MaxHistoryGPUs {
			continue
		}
		b.Histories(cs[i].ID, cs[i].GPUs)
		n += k
	}
}

// Histories sets the History of gpus (Status(id), in its order): a walk of the kept series, SeriesLen
// steps per GPU, so the AM asks it only for the GPUs the web UI draws (contract.MaxHistoryGPUs).
func (b *Book) Histories(id string, gpus []contract.GPUStatus) {
	t := b.by[id]
	if t == nil {
		return
	}
	for i, g := range t.gpus {
		if i < len(gpus) && strings.EqualFold(gpus[i].UUID, g.uuid) {
			gpus[i].History = t.history(g)
		}
	}
}

// history is g's kept utilisation coarsened to at most contract.MaxHistoryPoints steps (nil when no
// kept sample has one). A step spans at least one and a half sampling intervals (the mean spacing of
// the kept samples), so the launchers' jitter leaves no empty step in a steady series and an empty
// step means a gap in the sampling.
func (t *track) history(g *gpuTrack) *contract.GPUHistory {
	var first, last int64
	k := 0
	for j, at := range t.times {
		if g.util[j] == noUtil {
			continue
		}
		if k == 0 || at < first {
			first = at
		}
		if k == 0 || at > last {
			last = at
		}
		k++
	}
	if k == 0 {
		return nil
	}
	span := last - first
	step := max((span+contract.MaxHistoryPoints)/contract.MaxHistoryPoints, 1) // ceil((span+1)/points)
	if k > 1 {
		step = max(step, (3*span+2*int64(k-1)-1)/(2*int64(k-1))) // 1.5 × the mean spacing, rounded up
	}
	nb := int(span/step) + 1
	sum, cnt := make([]int, nb), make([]int, nb)
	for j, at := range t.times {
		if g.util[j] == noUtil {
			continue
		}
		i := int((at - first) / step)
		sum[i] += int(g.util[j])
		cnt[i]++
	}
	h := &contract.GPUHistory{From: first, StepMs: step, Util: make([]int, nb)}
	for i := range nb {
		h.Util[i] = -1
		if cnt[i] > 0 {
			h.Util[i] = (2*sum[i] + cnt[i]) / (2 * cnt[i]) // rounded half up
		}
	}
	return h
}

// Series is container id's kept samples, oldest first (ok false when it has none).
func (b *Book) Series(id string) (contract.GPUSeries, bool) {
	t := b.by[id]
	if t == nil {
		return contract.GPUSeries{}, false
	}
	s := contract.GPUSeries{Container: id, GPUs: []contract.GPUPoints{}}
	n := len(t.times)
	order := func(i int) int { // the i-th oldest point
		if n < SeriesLen {
			return i
		}
		return (t.next + i) % SeriesLen
	}
	for _, g := range t.gpus {
		p := contract.GPUPoints{UUID: g.uuid, Index: g.index, MemTotalMiB: g.memTotal,
			Times: make([]int64, n), Util: make([]float64, n), MemUsedMiB: make([]int64, n), PowerW: make([]float64, n)}
		for i := range n {
			j := order(i)
			p.Times[i], p.MemUsedMiB[i] = t.times[j], int64(g.mem[j])
			p.Util[i], p.PowerW[i] = -1, -1
			if g.util[j] != noUtil {
				p.Util[i] = float64(g.util[j])
			}
			if !math.IsNaN(float64(g.power[j])) {
				p.PowerW[i] = math.Round(float64(g.power[j])*100) / 100
			}
		}
		s.GPUs = append(s.GPUs, p)
	}
	return s, true
}

// Forget drops container id's series and means (its record is gone); the job's totals keep its
// samples.
func (b *Book) Forget(id string) { delete(b.by, id) }

// Usage is the job's GPU time: reservedHours (what the AM counts from its containers' lives) with
// the share the samples say was used and idle.
func (b *Book) Usage(reservedHours float64) contract.GPUUsage {
	u := contract.GPUUsage{ReservedGPUHours: reservedHours, Samples: b.n}
	if b.n > 0 {
		u.UsedShare, u.IdleShare = b.sum/100/float64(b.n), float64(b.idle)/float64(b.n)
	}
	return u
}

// JobUsage is the job's GPU time for the status and the final diagnostics: reservedHours (every
// kept container's GPUs times how long it ran) with the samples' shares, and givenBackHours, the GPU
// time given back for idleness (taskexecutor.idle-gpu-release); nil for a job that holds no GPU, gave
// none back and sampled none.
func (b *Book) JobUsage(reservedHours, givenBackHours float64) *contract.GPUUsage {
	u := b.Usage(reservedHours)
	u.GivenBackGPUHours = givenBackHours
	if u.Samples == 0 && reservedHours == 0 && givenBackHours == 0 {
		return nil
	}
	return &u
}

// IdleGPU: a running container's GPU stayed under contract.IdleGPUPercent for warn.
func IdleGPU(id, node, uuid string, index int, idle, warn time.Duration) contract.Event {
	return contract.Event{Type: contract.EventIdleGPU, Severity: contract.SeverityWarning, Container: id, Node: node, Key: "taskexecutor.idle-gpu-warning",
		Reason: uuid,
		Message: fmt.Sprintf("GPU %d (%s) of TaskExecutor %s on %s has been under %.0f%% utilisation for %s (taskexecutor.idle-gpu-warning = %s); it stays reserved for this job: check that the worker uses it, or stop the container",
			index, uuid, id, node, contract.IdleGPUPercent, idle.Round(time.Second), warn)}
}

// SamplingFailed: a launcher could not sample its container's GPUs (said once per container).
func SamplingFailed(id, node, why string) contract.Event {
	if len(why) > 400 {
		why = why[:400] + "..."
	}
	return contract.Event{Type: contract.EventGPUSamplingFailed, Severity: contract.SeverityWarning, Container: id, Node: node, Key: "taskexecutor.gpu-sample-interval",
		Message: fmt.Sprintf("the launcher of TaskExecutor %s on %s cannot sample its GPUs (the worker runs on; sampling is retried quietly): %s", id, node, why)}
}
