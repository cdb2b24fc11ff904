package am

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
)

// Idle GPUs given back (taskexecutor.idle-gpu-release; docs/gpus.md#idle-gpus-given-back). A
// running container is idle when every sample of every GPU it holds read under
// contract.IdleGPUPercent, with no sample missing, for the key's duration (the book's IdleSpell).
// Then, where the job can shrink, the AM warns its worker as the ResourceManager's preemption
// warning does (the notice's long poll: preemption.json and taskexecutor.preemption-signal; in a gang
// the whole round, which restarts; the framework's OnPreemption, a Flink checkpoint), and after the
// same grace (preemptionWait) it releases the container itself: the declared count goes down by one
// with the container stopped first, so it is not replaced and its end counts as no failure (the AM
// stopped it). An elastic gang above taskexecutor.min-instances shrinks so; a job whose framework
// sizes it from its work's demand (a [flink] job with taskmanagers = "demand") shrinks through the
// framework's GiveBack instead: after the grace the framework lowers its work's demand by one
// TaskExecutor (a Flink job's rescale) and, once the work left one, names it in AMStart.Scale, and
// that release is the one booked as given back (giveBackLocked). Any other job, or a framework that
// says it cannot shrink, says once per idle spell that it cannot, and keeps its GPUs. One release is
// in flight at a time: each restarts a gang's round, and the next idle container is judged again in
// the new round.

// idleReleasable says whether a job of declared spec (its count now) can give a container back, and
// why not: an elastic gang (job's own spec) above its minimum shrinks; a job whose framework sizes
// the TaskExecutors from its work's demand (demand: config.DemandSized) shrinks when the framework's
// GiveBack (gb) says it can.
func idleReleasable(job, now decision.Spec, demand bool, gb *framework.GiveBack) (bool, string) {
	switch {
	case demand && gb != nil:
		if err := gb.Can(now.Instances); err != nil {
			return false, err.Error()
		}
		return true, ""
	case demand:
		return false, fmt.Sprintf("the job's framework sizes its TaskExecutors from its work's demand (%d now), and gives none back for idleness: only an elastic gang (taskexecutor.gang with taskexecutor.min-instances below instances) or a [flink] job with taskmanagers = \"demand\" on the adaptive scheduler gives one back", now.Instances)
	case !job.Gang:
		return false, fmt.Sprintf("the job keeps a fixed number of TaskExecutors (%d): only an elastic gang (taskexecutor.gang with taskexecutor.min-instances below instances) gives one back", now.Instances)
	case !job.Elastic():
		return false, fmt.Sprintf("the gang has a fixed size of %d (taskexecutor.min-instances is not below instances)", now.Instances)
	case now.Instances <= job.MinInstances:
		return false, fmt.Sprintf("the elastic gang runs at its minimum, taskexecutor.min-instances = %d", job.MinInstances)
	}
	return true, ""
}

// idleGPUsLocked acts on container t's idle spell after its samples were booked at now: nothing
// before taskexecutor.idle-gpu-release, then the warning of a release or, where the job cannot
// shrink, one idle-gpu-kept event per spell.
func (a *am) idleGPUsLocked(t *book.Container, now time.Time) {
	d := a.cfg.IdleGPURelease
	if d <= 0 || t.Phase != contract.Running || a.stopping || a.policyOut != nil {
		return
	}
	since, last := a.gpus.IdleSpell(t.ID)
	if since.IsZero() || last.Sub(since) < d || t.Notice != nil || a.book.Idle.Busy() {
		return
	}
	if a.cfg.Spec.Gang && (t.Round != a.book.Gang.Round() || !a.book.Gang.Formed()) {
		return // held beside the round, or a round on its way out: not a member to release
	}
	if ok, why := idleReleasable(a.cfg.Spec, a.specLocked(), a.cfg.DemandSized, a.cfg.GiveBack); !ok {
		if a.book.Idle.Kept(t.ID, since) {
			a.emit(events.IdleGPUKept(t.ID, t.Node, t.GPUs(), last.Sub(since), d, why))
		}
		return
	}
	warn := []*book.Container{t}
	var round *int
	if a.cfg.Spec.Gang {
		r := a.book.Gang.Round()
		round = &r
		for _, o := range a.rec.All() {
			if o != t && o.Round == r && book.Warnable(o) {
				warn = append(warn, o)
			}
		}
	}
	deadline := now.Add(a.preemptionWait())
	for _, w := range warn {
		w.Notice = &contract.PreemptionNotice{Container: w.ID, Containers: []string{t.ID}, WarnedAt: now, Deadline: deadline, Round: round,
			Reason: contract.NoticeIdleGPURelease}
	}
	a.book.Idle.Warned(t.ID, deadline)
	ev := a.emit(events.IdleGPURelease(t.ID, t.Node, t.GPUs(), last.Sub(since), d, deadline, a.preemptionWait(), a.book.Want.Count(), a.book.Want.Count()-1, len(warn)))
	a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node, "deadline": deadline.Format(time.RFC3339)}).Warn("am: " + ev.Message)
	handOut(&a.book.Notices, a.cfg.OnPreemption, warn)
}

// checkIdleRelease releases the container warned for its idle GPUs once its deadline passed: the
// declared count goes down by one and Reconcile stops that container first (a gang restarts its
// round at the smaller size). A container that ended meanwhile, or a job that can no longer shrink
// (the requirement changed), releases nothing.
func (a *am) checkIdleRelease() {
	a.mu.Lock()
	now := a.cfg.Now()
	a.book.Idle.ForgetKept(func(id string) bool {
		t := a.rec.Get(id)
		return t != nil && t.Phase == contract.Running
	})
	id, due := a.book.Idle.Due(now)
	if !due {
		a.mu.Unlock()
		return
	}
	t := a.rec.Get(id)
	if t == nil || t.Phase != contract.Running || a.stopping || a.policyOut != nil {
		a.mu.Unlock()
		return
	}
	if ok, why := idleReleasable(a.cfg.Spec, a.specLocked(), a.cfg.DemandSized, a.cfg.GiveBack); !ok {
		a.emit(events.IdleGPUKept(t.ID, t.Node, t.GPUs(), 0, a.cfg.IdleGPURelease, why))
		a.mu.Unlock()
		return
	}
	if a.cfg.DemandSized {
		a.giveBackInBackgroundLocked(t)
		a.mu.Unlock()
		return
	}
	from := a.book.Want.Set(a.book.Want.Count()-1, []string{t.ID}, contract.NoticeIdleGPURelease)
	n := t.GPUs()
	a.book.Idle.Given(n, now)
	a.emit(events.IdleGPUReleased(t.ID, t.Node, n, from, a.book.Want.Count()))
	a.emit(events.RequirementChanged(from, a.book.Want.Count(), contract.NoticeIdleGPURelease))
	a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node, "from": from, "to": a.book.Want.Count()}).Info("am: released a TaskExecutor whose GPUs stayed idle")
	a.mu.Unlock()
	a.poke()
}

// giveBackBound bounds a demand-sized framework's GiveBack.Release (its reads and its rescale).
const giveBackBound = 30 * time.Second

// giveBackInBackgroundLocked asks the framework to give back container t's share of its work, off the
// AM's lock; a refusal keeps the GPUs with an idle-gpu-kept event that says why. The release itself
// comes later as the framework's Scale (giveBackLocked).
func (a *am) giveBackInBackgroundLocked(t *book.Container) {
	a.book.Idle.GivingBack(t.ID)
	id, node, n := t.ID, t.Node, t.GPUs()
	a.background.Add(1)
	go func() {
		defer a.background.Done()
		ctx, cancel := context.WithTimeout(context.Background(), giveBackBound)
		err := a.cfg.GiveBack.Release(ctx, id)
		cancel()
		if err == nil {
			a.log.WithFields(logrus.Fields{"container": id, "node": node}).Info("am: the framework shrinks its work for a TaskExecutor whose GPUs stayed idle")
			return
		}
		a.mu.Lock()
		a.book.Idle.GiveBackEnded(id)
		a.withdrawIdleNoticeLocked(id)
		a.emit(events.IdleGPUKept(id, node, n, 0, a.cfg.IdleGPURelease, err.Error()))
		a.mu.Unlock()
	}()
}

// giveBackLocked books the framework's Scale from → to naming stopFirst as the release of the give-back
// in flight, if one is: the first container named is released for idleness (the idle one, or the
// one the framework's work left instead) and its GPUs count as given back.
func (a *am) giveBackLocked(from, to int, stopFirst []string, now time.Time) {
	if to >= from || len(stopFirst) == 0 {
		return
	}
	idle := a.book.Idle.TakeGivingBack()
	if idle == "" {
		return
	}
	a.withdrawIdleNoticeLocked(idle)
	t := a.rec.Get(stopFirst[0])
	if t == nil {
		return
	}
	n := t.GPUs()
	a.book.Idle.Given(n, now)
	ev := events.IdleGPUReleased(t.ID, t.Node, n, from, to)
	if t.ID != idle {
		// The framework's work left another TaskExecutor than the idle one (Flink chose which slots
		// its rescale keeps): that one's GPUs are the ones no longer used.
		ev.Message += fmt.Sprintf("; the job's rescale left it rather than %s, whose GPUs stayed idle and which runs the job's work now", idle)
	}
	a.emit(ev)
	a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node, "idle": idle, "from": from, "to": to}).Info("am: released a TaskExecutor for idle GPUs through the framework")
}

// withdrawIdleNoticeLocked drops container id's idle-release notice once its give-back ended without
// stopping it (refused, or another TaskExecutor released): it is judged again by its next idle spell.
func (a *am) withdrawIdleNoticeLocked(id string) {
	if t := a.rec.Get(id); t != nil && t.Notice != nil && t.Notice.Reason == contract.NoticeIdleGPURelease {
		t.Notice = nil
	}
}
