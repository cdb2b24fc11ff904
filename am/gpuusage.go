package am

import (
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
)

// This file is the AM's side of GPU utilisation (docs/running.md#gpu-utilisation): the samples that
// come with the launchers' liveness messages go into the book (am/gpuuse, under mu), out to the status,
// GET /api/v1/containers/<id>/gpus, the Prometheus gauges, and the final diagnostics; a sample that
// reads a GPU unhealthy ends its container (gpuhealth.go), and an idle spell long enough is judged
// for taskexecutor.idle-gpu-release (idlerelease.go, book.Idle.Judge).

// web finds the GPU sample book by a type assertion on its State; this makes a drift of these
// methods' signatures a compile error instead of a GPU endpoint that silently answers 404.
var _ web.GPUSampleBook = (*am)(nil)

// GPUSamples books the GPU samples of container id's liveness message (web.GPUSampleBook); the
// message was already booked as alive. A container that is no longer launching or running has its
// samples dropped; an error refuses the message's samples (400).
func (a *am) GPUSamples(id string, r contract.AliveReport) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.rec.Get(id)
	if t == nil {
		return web.ErrUnknownContainer
	}
	if t.Phase != contract.Running && t.Phase != contract.Launching {
		return nil // its gauges are gone (exitedLocked); a late message adds nothing
	}
	a.gpus.IdleWarning = a.cfg.IdleGPUWarning
	a.gpus.IdleGap = idleGap(a.cfg.GPUSampleInterval)
	now := a.cfg.Now()
	evs, err := a.gpus.Add(id, t.Node, t.GPUUUIDs(), r, now)
	if err != nil {
		return err
	}
	a.events.AddAll(evs)
	a.metrics.SetGPUs(id, a.gpus.Status(id))
	if g, why, sick := book.Unhealthy(r); sick {
		a.sickGPULocked(t, g, why) // gpuhealth.go: t ends
	}
	if a.book.End.Ending() {
		return nil
	}
	// taskexecutor.idle-gpu-release (idlerelease.go): t's idle spell kept, or warned of its release.
	since, last := a.gpus.IdleSpell(id)
	kept, warned := a.book.Idle.Judge(&a.rec, t, since, last, now, book.IdleJob{Release: a.cfg.IdleGPURelease, Wait: a.preemptionWait(),
		Gang: a.cfg.Spec.Gang, Round: a.book.Gang.Round(), Formed: a.book.Gang.Formed(), Want: a.book.Want.Count(),
		Releasable: func() (bool, string) {
			return idleReleasable(a.cfg.Spec, a.book.Want.Spec(a.cfg.Spec), a.cfg.DemandSized, a.cfg.GiveBack)
		}})
	if kept != nil {
		a.events.Add(*kept)
	}
	if warned != nil {
		ev := a.events.Add(warned.Event)
		a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node, "deadline": warned.Deadline.Format(time.RFC3339)}).Warn("am: " + ev.Message)
		handOut(&a.book.Notices, a.cfg.OnPreemption, warned.Warned) // preemption.go
	}
	return nil
}

// GPUUtilisation is container id's latest GPU utilisation, 0..1, the mean over its GPUs that
// reported one (framework.AMStart.GPUUtilisation); false when none did.
func (a *am) GPUUtilisation(id string) (float64, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.Get(id) == nil {
		return 0, false
	}
	sum, n := 0.0, 0
	for _, g := range a.gpus.Status(id) {
		if g.Util != nil {
			sum += *g.Util
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n) / 100, true
}

// GPUSeries is container id's kept samples (GET /api/v1/containers/<id>/gpus); ok false when the
// container is not one of the AM's.
func (a *am) GPUSeries(id string) (contract.GPUSeries, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.Get(id) == nil {
		return contract.GPUSeries{}, false
	}
	s, ok := a.gpus.Series(id)
	if !ok {
		s = contract.GPUSeries{Container: id, GPUs: []contract.GPUPoints{}}
	}
	s.Interval = contract.GPUSampleOff
	if a.cfg.GPUSampleInterval > 0 {
		s.Interval = a.cfg.GPUSampleInterval.String()
	}
	return s, true
}

// idleGap is the longest gap between two samples of a container that keeps its idle spell: three
// sampling intervals, so that a late sample (a slow tool, a loaded node) does not end it but a
// launcher that stopped sampling does (docs/gpus.md#idle-gpus-given-back). 0: no bound (sampling off).
func idleGap(interval time.Duration) time.Duration { return 3 * interval }

// gpuDiagnostics is diagnostics with the job's GPU time after it (the final diagnostics and the
// finished event: every kept container's GPUs times how long it ran, the samples' shares, the GPU
// time given back), unchanged for a job that holds no GPU.
func (a *am) gpuDiagnostics(diagnostics string) string {
	a.mu.Lock()
	now := a.cfg.Now()
	u := a.gpus.JobUsage(a.rec.GPUHours(now), a.book.Idle.Hours(now))
	a.mu.Unlock()
	if u == nil {
		return diagnostics
	}
	if diagnostics == "" {
		return u.String()
	}
	return diagnostics + "; " + u.String()
}
