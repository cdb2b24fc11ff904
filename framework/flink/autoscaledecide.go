package flink

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/framework"
)

// This file is the autoscaler's decision (docs/flink.md#autoscaling), a pure function of what was
// measured: the DS2 method. Per vertex, its true processing rate is the records it took in per
// second divided by its busy fraction (what its subtasks would take in busy all the time); its
// target rate comes from the sources downstream: a source's rate, plus how fast its backlog grew,
// plus what clears its backlog within the catch-up time, carried through each vertex by its ratio of records out to records in.
// Its parallelism is the target rate over the true rate of one subtask at the target utilisation,
// within the bounds, at most a step away, rounded up to a divisor of its max parallelism, and never
// more than the TaskManagers' slots hold, nor than those the queue's headroom can still add. A vertex whose TaskManagers' GPUs are busier than the
// band scales out even when its busy time says otherwise (a GPU kernel's time is not Flink's busy
// time).

// vertexLoad is what was measured of one vertex over the metrics window.
type vertexLoad struct {
	ID, Name                    string
	Parallelism, MaxParallelism int
	// Group is its slot sharing group ("" the default one): the vertices of one group share slots.
	Group string
	// Inputs are the vertices it reads from (none: a source).
	Inputs []string
	// Busy and BackPressured are its subtasks' average busy and backpressured fractions (NaN:
	// not reported).
	Busy, BackPressured float64
	// In and Out are the records per second all its subtasks took in and sent on.
	In, Out float64
	// SourceRate is a source's records read per second (NaN: not a source or not reported; Out
	// stands in); Pending, its backlog in records (NaN: the source does not report one), and
	// PendingGrowth how fast it grew over the window, records per second (NaN: not known; below 0
	// when it shrank).
	SourceRate, Pending, PendingGrowth float64
	// GPU is the GPU utilisation of the TaskManagers that run it, 0..1 (NaN: none measured).
	GPU float64
	// At is when it was measured (zero: not known).
	At time.Time
}

// autoscaleBounds is what limits every vertex: the job file's keys and the slots.
type autoscaleBounds struct {
	spec autoscaleSpec
	// slots is how many slots the TaskManagers can have at most (taskexecutor.instances × slots
	// each), slotsLimit says so in words; 0: no limit known.
	slots      int
	slotsLimit string
	// room is how many slots the job can have beyond those it runs in: the TaskManagers' free slots
	// and those the queue's headroom holds besides (queueRoom); roomLimit says so in words, ""
	// when no headroom is known.
	room      int
	roomLimit string
}

// queueRoom is how many more slots a job can have at what YARN's queue can still give it: the
// registered TaskManagers' free slots, and perTM for each more TaskManager the headroom holds in
// every resource one takes (memory, vcores, GPUs and any other type it asks, that the headroom
// reports). limit names the headroom as the not-enough-resources event does: its memory, vcores
// and every other type the TaskManager asks.
func queueRoom(h framework.Headroom, freeSlots, perTM int) (room int, limit string) {
	perTM = max(perTM, 1)
	more := -1
	parts := []string{fmt.Sprintf("%d MiB", h.Free["memory-mb"]), fmt.Sprintf("%d vcores", h.Free["vcores"])}
	for _, k := range slices.Sorted(maps.Keys(h.Worker)) {
		w := h.Worker[k]
		free, known := h.Free[k]
		if w <= 0 || !known { // a type the headroom does not report limits nothing it can tell
			continue
		}
		if more < 0 || int(free/w) < more {
			more = max(int(free/w), 0)
		}
		if k != "memory-mb" && k != "vcores" {
			parts = append(parts, fmt.Sprintf("%d %s", free, k))
		}
	}
	more = max(more, 0)
	return freeSlots + more*perTM, fmt.Sprintf("the queue's headroom (%s free: room for %d more %s of %d %s)",
		strings.Join(parts, ", "), more, plural(more, "TaskManager", "TaskManagers"), perTM, plural(perTM, "slot", "slots"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// vertexDecision is the decision for one vertex, with what it was made of.
type vertexDecision struct {
	ID, Name   string
	From, To   int
	TrueRate   float64 // records per second one subtask takes in busy all the time (NaN: unknown)
	TargetRate float64 // records per second it is to take in (NaN: unknown)
	Busy, GPU  float64
	Lag        float64 // a source's backlog (NaN: none reported)
	LagGrowth  float64 // how fast it grew, records per second (NaN: not known)
	In         float64
	// Why is the reason in words; Limit, the bound that held it below or above what the rates ask
	// ("" none).
	Why, Limit string
}

// autoscaleDecision is one decision over the job's vertices.
type autoscaleDecision struct {
	At       time.Time
	Vertices []vertexDecision
}

// changes reports whether the decision changes any vertex's parallelism.
func (d *autoscaleDecision) changes() bool {
	for _, v := range d.Vertices {
		if v.To != v.From {
			return true
		}
	}
	return false
}

// targets is the decided parallelism by vertex id.
func (d *autoscaleDecision) targets() map[string]int {
	out := map[string]int{}
	for _, v := range d.Vertices {
		out[v.ID] = v.To
	}
	return out
}

// changed is the decided parallelism of the vertices it changes: a decision sets only their
// bounds, every other vertex's stay as they are (a give-back's lowered bound among them).
func (d *autoscaleDecision) changed() map[string]int {
	out := map[string]int{}
	for _, v := range d.Vertices {
		if v.To != v.From {
			out[v.ID] = v.To
		}
	}
	return out
}

// outcome is the decision in words: each change, or that nothing changes.
func (d *autoscaleDecision) outcome() string {
	var parts []string
	for _, v := range d.Vertices {
		var s string
		switch {
		case v.To != v.From:
			s = fmt.Sprintf("%s %d → %d (%s)", v.Name, v.From, v.To, v.Why)
		case v.Limit != "":
			s = fmt.Sprintf("%s stays at %d (%s)", v.Name, v.From, v.Why)
		default:
			continue
		}
		if v.Limit != "" {
			s += ", held by " + v.Limit
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, "; ")
}

// key is what makes two decisions the same to tell: each vertex's parallelism and the bound that
// held it, not the rates, which move at every read.
func (d *autoscaleDecision) key() string {
	var parts []string
	for _, v := range d.Vertices {
		if v.To != v.From || v.Limit != "" {
			parts = append(parts, fmt.Sprintf("%s %d→%d %s", v.ID, v.From, v.To, v.Limit))
		}
	}
	return strings.Join(parts, "; ")
}

// inputs are the measurements of every vertex in words: rates, busy %, lag, GPU %.
func (d *autoscaleDecision) inputs() string {
	var parts []string
	for _, v := range d.Vertices {
		s := fmt.Sprintf("%s p=%d in=%s/s busy=%s", v.Name, v.From, rateText(v.In), percent(v.Busy))
		if !math.IsNaN(v.TrueRate) {
			s += fmt.Sprintf(" true=%s/s/subtask", rateText(v.TrueRate))
		}
		if !math.IsNaN(v.TargetRate) {
			s += fmt.Sprintf(" target=%s/s", rateText(v.TargetRate))
		}
		if !math.IsNaN(v.Lag) {
			s += fmt.Sprintf(" lag=%s", rateText(v.Lag))
			if !math.IsNaN(v.LagGrowth) {
				s += fmt.Sprintf(" (%+.0f/s)", v.LagGrowth)
			}
		}
		if !math.IsNaN(v.GPU) {
			s += " gpu=" + percent(v.GPU)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func percent(f float64) string {
	if math.IsNaN(f) {
		return "?"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

func rateText(f float64) string {
	if math.IsNaN(f) {
		return "?"
	}
	if f >= 100 {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.1f", f)
}

// lowerSince is, per vertex, since when a lower parallelism has been wanted: a scale-down waits the
// grace (autoscale-scale-down-grace). decide updates it.
type lowerSince map[string]time.Time

// decide is the decision for the vertices measured at now. A vertex with nothing to go by (no busy
// time, no records) keeps its parallelism.
func decide(now time.Time, loads []vertexLoad, b autoscaleBounds, since lowerSince) *autoscaleDecision {
	spec := b.spec
	byID := map[string]*vertexLoad{}
	for i := range loads {
		byID[loads[i].ID] = &loads[i]
	}
	// The target rates, from the sources downstream: a vertex is visited after its inputs.
	targetIn, targetOut := map[string]float64{}, map[string]float64{}
	for _, id := range topoOrder(loads) {
		v := byID[id]
		var in float64
		if len(v.Inputs) == 0 {
			rate := v.SourceRate
			if math.IsNaN(rate) {
				rate = v.Out
			}
			// What arrives is what the source read plus what piled up unread: a source held back by
			// the vertices after it reads no faster than they take, so its read rate alone hides
			// the load that makes it fall behind.
			if !math.IsNaN(v.PendingGrowth) {
				rate = max(rate+v.PendingGrowth, 0)
			}
			in = rate
			if !math.IsNaN(v.Pending) && v.Pending > 0 && spec.CatchUp > 0 {
				in += v.Pending / spec.CatchUp.Seconds()
			}
		} else {
			var target, observed float64
			for _, u := range v.Inputs {
				target += targetOut[u]
				if up := byID[u]; up != nil {
					observed += up.Out
				}
			}
			switch {
			case observed > 0:
				in = v.In * target / observed
			default:
				in = math.NaN()
			}
		}
		targetIn[id] = in
		took := v.In
		if len(v.Inputs) == 0 && !math.IsNaN(v.SourceRate) {
			took = v.SourceRate
		}
		switch {
		case math.IsNaN(in):
			targetOut[id] = math.NaN()
		case took > 0:
			targetOut[id] = in * v.Out / took
		default:
			targetOut[id] = in
		}
	}
	d := &autoscaleDecision{At: now}
	for _, v := range loads {
		d.Vertices = append(d.Vertices, decideVertex(now, v, targetIn[v.ID], spec, since))
	}
	fitSlots(d, loads, b)
	return d
}

// decideVertex is one vertex's parallelism for a target input rate.
func decideVertex(now time.Time, v vertexLoad, target float64, spec autoscaleSpec, since lowerSince) vertexDecision {
	took := v.In
	if len(v.Inputs) == 0 && !math.IsNaN(v.SourceRate) {
		took = v.SourceRate
	} else if len(v.Inputs) == 0 {
		took = v.Out
	}
	out := vertexDecision{ID: v.ID, Name: v.Name, From: v.Parallelism, To: v.Parallelism, Busy: v.Busy, GPU: v.GPU,
		Lag: v.Pending, LagGrowth: v.PendingGrowth, In: took, TrueRate: math.NaN(), TargetRate: target}
	p := max(v.Parallelism, 1)
	lo, hi := spec.bandLow(), spec.bandHigh()
	want := p
	switch {
	case math.IsNaN(v.Busy) || math.IsNaN(target) || took <= 0 || v.Busy <= 0.01:
		out.Why = "nothing measured to go by"
		if !math.IsNaN(v.Busy) && v.Busy <= 0.01 && took <= 0 {
			out.Why = "idle"
		}
	default:
		out.TrueRate = took / float64(p) / v.Busy
		projected := target / (out.TrueRate * float64(p))
		if projected >= lo && projected <= hi {
			out.Why = fmt.Sprintf("utilisation %s within %s..%s", percent(projected), percent(lo), percent(hi))
		} else {
			want = int(math.Ceil(target / (out.TrueRate * spec.Utilisation)))
			out.Why = fmt.Sprintf("utilisation %s at %d, outside %s..%s: %s/s over %s/s per subtask at %s", percent(projected), p,
				percent(lo), percent(hi), rateText(target), rateText(out.TrueRate), percent(spec.Utilisation))
		}
	}
	if !math.IsNaN(v.GPU) && v.GPU > hi {
		if g := int(math.Ceil(float64(p) * v.GPU / spec.Utilisation)); g > want {
			want = g
			out.Why = fmt.Sprintf("GPU %s above %s", percent(v.GPU), percent(hi))
		}
	}
	to, limit := boundParallelism(want, p, v.MaxParallelism, spec)
	out.Limit = limit
	if to < p {
		first, ok := since[v.ID]
		if !ok {
			since[v.ID] = now
			first = now
		}
		if wait := spec.Grace - now.Sub(first); wait > 0 {
			out.Why += fmt.Sprintf("; %d wanted, scale-down waits %s more (%s)", to, wait.Round(time.Second), keyAutoscaleGrace)
			out.Limit = ""
			to = p
		}
	} else {
		delete(since, v.ID)
	}
	out.To = to
	return out
}

// bandLow and bandHigh are the utilisations between which a vertex is left as it is.
func (a autoscaleSpec) bandLow() float64  { return max(a.Utilisation-a.Band, 0) }
func (a autoscaleSpec) bandHigh() float64 { return min(a.Utilisation+a.Band, 1) }

// boundParallelism puts want within the bounds, a step from p, rounded up to a divisor of the
// vertex's max parallelism where one is near; limit names the bound that held it ("" none).
func boundParallelism(want, p, maxPar int, spec autoscaleSpec) (int, string) {
	upper, upperName := maxAutoscaleParallelism, ""
	if maxPar > 0 {
		upper, upperName = maxPar, fmt.Sprintf("the vertex's max parallelism %d", maxPar)
	}
	if spec.Max > 0 && spec.Max < upper {
		upper, upperName = spec.Max, fmt.Sprintf("%s = %d", keyAutoscaleMax, spec.Max)
	}
	limit := ""
	to := want
	if up := int(math.Floor(float64(p) * spec.MaxStep)); to > up {
		to, limit = up, fmt.Sprintf("%s = %v", keyAutoscaleMaxStep, spec.MaxStep)
	}
	if down := int(math.Ceil(float64(p) / spec.MaxStep)); to < down {
		to, limit = down, fmt.Sprintf("%s = %v", keyAutoscaleMaxStep, spec.MaxStep)
	}
	if to > upper {
		to, limit = upper, upperName
	}
	if to < spec.Min {
		to, limit = spec.Min, fmt.Sprintf("%s = %d", keyAutoscaleMin, spec.Min)
	}
	// Key groups spread evenly when the parallelism divides the max parallelism: the next divisor
	// up, when it is within the bound and less than twice the parallelism.
	if maxPar > 0 && to != p && maxPar%to != 0 {
		for c := to + 1; c <= min(upper, 2*to-1); c++ {
			if maxPar%c == 0 {
				to = c
				break
			}
		}
	}
	return to, limit
}

// fitSlots lowers the scale-outs until the vertices' slots fit what the TaskManagers can hold (the
// configured slots, or the queue's room when that is less), taking one subtask at a time from the vertex asking most above its present parallelism; each
// vertex held names the limit.
func fitSlots(d *autoscaleDecision, loads []vertexLoad, b autoscaleBounds) {
	group, from := map[string]string{}, map[string]int{}
	for _, v := range loads {
		group[v.ID], from[v.ID] = v.Group, v.Parallelism
	}
	limit, name := b.slots, b.slotsLimit
	if room := slotsNeeded(from, group) + b.room; b.roomLimit != "" && (limit <= 0 || room < limit) {
		limit, name = room, b.roomLimit
	}
	if limit <= 0 && b.roomLimit == "" {
		return
	}
	need := func() int {
		par := map[string]int{}
		for _, v := range d.Vertices {
			par[v.ID] = v.To
		}
		return slotsNeeded(par, group)
	}
	for need() > limit {
		best := -1
		for i, v := range d.Vertices {
			if v.To > v.From && (best < 0 || v.To-v.From > d.Vertices[best].To-d.Vertices[best].From) {
				best = i
			}
		}
		if best < 0 {
			return // the job already runs above the slots: nothing of this decision's to take back
		}
		d.Vertices[best].To--
		d.Vertices[best].Limit = name
	}
}

// topoOrder is the vertices' ids with each after its inputs (a cycle's rest in the order given).
func topoOrder(loads []vertexLoad) []string {
	indeg := map[string]int{}
	down := map[string][]string{}
	known := map[string]bool{}
	for _, v := range loads {
		known[v.ID] = true
	}
	for _, v := range loads {
		for _, u := range v.Inputs {
			if known[u] {
				indeg[v.ID]++
				down[u] = append(down[u], v.ID)
			}
		}
	}
	var order, ready []string
	for _, v := range loads {
		if indeg[v.ID] == 0 {
			ready = append(ready, v.ID)
		}
	}
	seen := map[string]bool{}
	for len(ready) > 0 {
		id := ready[0]
		ready = ready[1:]
		order = append(order, id)
		seen[id] = true
		for _, w := range down[id] {
			if indeg[w]--; indeg[w] == 0 {
				ready = append(ready, w)
			}
		}
	}
	for _, v := range loads {
		if !seen[v.ID] {
			order = append(order, v.ID)
		}
	}
	return order
}
