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
// that release is the one booked as given back (book.Idle.ScaledDown). Any other job, or a framework that
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
	if t == nil || t.Phase != contract.Running || a.book.End.Ending() {
		a.mu.Unlock()
		return
	}
	if ok, why := idleReleasable(a.cfg.Spec, a.book.Want.Spec(a.cfg.Spec), a.cfg.DemandSized, a.cfg.GiveBack); !ok {
		a.events.Add(events.IdleGPUKept(t.ID, t.Node, t.GPUs(), 0, a.cfg.IdleGPURelease, why))
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
	a.events.Add(events.IdleGPUReleased(t.ID, t.Node, n, from, a.book.Want.Count()))
	a.events.Add(events.RequirementChanged(from, a.book.Want.Count(), contract.NoticeIdleGPURelease))
	a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node, "from": from, "to": a.book.Want.Count()}).Info("am: released a TaskExecutor whose GPUs stayed idle")
	a.mu.Unlock()
	a.wake.poke()
}

// giveBackBound bounds a demand-sized framework's GiveBack.Release (its reads and its rescale).
const giveBackBound = 30 * time.Second

// giveBackInBackgroundLocked asks the framework to give back container t's share of its work, off the
// AM's lock; a refusal keeps the GPUs with an idle-gpu-kept event that says why. The release itself
// comes later as the framework's Scale (book.Idle.ScaledDown).
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
		a.book.Idle.GiveBackRefused(&a.rec, id)
		a.events.Add(events.IdleGPUKept(id, node, n, 0, a.cfg.IdleGPURelease, err.Error()))
		a.mu.Unlock()
	}()
}
