package am

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

// This file is the AM's loop: Run and its timing (the heartbeat interval, acting on an allocate's news
// at once), and the AM's state as the status document shows it.

// Run registers, runs the allocation loop until the application is done and unregisters with the
// outcome, then deletes the staging directory. When ctx ends (SIGTERM from the NodeManager: the
// application is being killed) it deletes the staging directory at once and returns an outcome with
// status KILLED and ctx's error.
func (a *am) Run(ctx context.Context) (decision.Outcome, error) {
	var wg sync.WaitGroup
	wctx, stopWorkers := context.WithCancel(ctx)
	for i := 0; i < a.cfg.LaunchWorkers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); a.launch.work(wctx) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); a.nodes.refresher(wctx) }()
	defer func() { stopWorkers(); wg.Wait(); a.background.Wait(); a.launch.wait() }()

	if err := a.register(ctx); err != nil {
		var u *unsatisfiable
		switch {
		case ctx.Err() != nil:
			return a.killed(), ctx.Err()
		case errors.As(err, &u):
			a.setState(contract.StateRunning)
			ev, ok := rejection(a.cfg.Spec.Capability, u.maximum, a.cfg.Keys, nil)
			if !ok {
				ev = events.AllocationRejected("", 0, -1, "", u.why) // the client's pre-flight wording (checkAsk)
			}
			ev = a.events.Add(ev)
			out := decision.Outcome{Status: contract.Failed, Diagnostics: ev.Message}
			a.log.WithField("key", ev.Key).Error("am: " + out.Diagnostics)
			return out, a.finish(ctx, out)
		}
		return decision.Outcome{}, err
	}
	a.setState(contract.StateRunning)
	if ev, ok := a.book.Place.Mode(); ok {
		a.log.WithField("scheduling_requests", a.book.Place.SchedulingRequests()).Info("am: " + ev.Message)
		a.events.Add(ev)
	}
	a.mu.Lock()
	a.book.Gang.Begin(a.cfg.Now())
	a.mu.Unlock()
	var driverDone <-chan struct{}
	if a.driver != nil {
		d, err := a.driver.start(ctx)
		if err != nil {
			out := decision.Outcome{Status: contract.Failed, Diagnostics: err.Error()}
			return out, a.finish(ctx, out)
		}
		driverDone = d
	}

	errs := 0
	actOnly := false // reconcile on the last heartbeat's news without another allocate
	for {
		plan := a.reconcile(ctx)
		var out *decision.Outcome
		if plan.Done != nil {
			out = plan.Done
		}
		a.mu.Lock()
		failed := a.book.End.Failed() // the failure policy's end (book.Judge)
		a.mu.Unlock()
		if failed != nil {
			out = failed
		}
		a.mu.Lock()
		limitHit, diagnostics := a.limitHit, a.diagnostics
		a.mu.Unlock()
		a.driver.endOnLimit(limitHit)
		if o := a.driver.outcome(limitHit, diagnostics); o != nil {
			out = o
		}
		if out != nil {
			return *out, a.finish(ctx, *out)
		}

		if !actOnly {
			err := a.heartbeat(ctx)
			var rej *rejectedError
			switch {
			case err == nil:
				errs = 0
				a.checkPending(ctx)
				a.checkGang(ctx)
				a.checkLiveness(ctx)
				a.checkIdleRelease()
			case ctx.Err() != nil:
				return a.killed(), ctx.Err()
			case errors.As(err, &rej):
				out := decision.Outcome{Status: contract.Failed, Diagnostics: rej.ev.Message}
				return out, a.finish(ctx, out)
			case errors.Is(err, errShutdown):
				a.setState(contract.StateShutdown)
				return decision.Outcome{Status: contract.Failed, Diagnostics: err.Error()}, err
			default:
				errs++
				a.log.WithError(err).WithField("consecutive", errs).Warn("am: allocate failed")
				if errs >= maxAllocateErrors {
					return decision.Outcome{Status: contract.Failed, Diagnostics: err.Error()}, fmt.Errorf("am: %d heartbeats in a row failed; last: %w", errs, err)
				}
			}
			if err == nil {
				a.mu.Lock()
				news := a.book.Plans.TakeNews()
				a.mu.Unlock()
				if news {
					actOnly = true
					continue
				}
			}
		}
		actOnly = false
		if now := a.cfg.Now(); now.Sub(a.savedTime) >= time.Second {
			a.savedTime = now
			a.saveState(ctx)
		}

		// Fast while something is pending, slow when idle (book.Interval).
		a.mu.Lock()
		wait := a.book.Interval(&a.rec, len(a.release) > 0, a.cfg.Now(), a.cfg.HeartbeatFast, a.cfg.HeartbeatSlow)
		a.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return a.killed(), ctx.Err()
		case <-a.wake:
		case <-driverDone:
			driverDone = nil
		case <-t.C:
		}
		t.Stop()
	}
}
