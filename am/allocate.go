package am

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// This file is one heartbeat: Reconcile on the current state and the bookkeeping half of its plan,
// the allocate request built from the ask table, releases and blacklist updates, and its response
// applied (allocations, completions, tokens, the RM's commands).

// reconcile runs Reconcile on the current state and performs the bookkeeping half of the plan: the
// ask table, releases, and launches queued to the workers. With taskexecutor.locality = "spread" a
// dry run first says whether the plan adds an ask; then how many containers fit on the nodes now
// (Observed.SpreadRoom) is asked of the RM, outside the lock.
func (a *am) reconcile(ctx context.Context) decision.Plan {
	room := 0
	var lifted []contract.Event
	if a.cfg.Locality == localitySpread && a.nodes.lists() {
		a.mu.Lock()
		now := a.cfg.Now()
		lifted = a.book.Tick(now, a.policy)
		spec := a.book.Want.Spec(a.cfg.Spec)
		m := a.book.Moment(now, a.driver.exited(), spec, a.cfg.ElasticInterval, a.cfg.GangTimeout)
		asks := a.book.WouldAsk(spec, &a.rec, a.policy, m)
		var ours map[string]contract.Capability
		var excluded map[string]bool
		if asks {
			ours, excluded = a.rec.Held(), book.HostsOf(a.policy.Excluded())
		}
		a.mu.Unlock()
		if asks {
			for _, r := range a.nodes.rooms(ctx, ours, excluded) {
				room += r.Free
			}
		}
	}
	plan, launches := a.applyPlan(room, lifted)
	// Queued outside the lock: the workers take the lock when a launch completes.
	for _, j := range launches {
		select {
		case a.launch.queue <- j:
		case <-ctx.Done():
			return plan
		}
	}
	return plan
}

// applyPlan runs Reconcile and performs the bookkeeping half of its plan under a.mu; it returns the
// plan and the containers to launch (reconcile queues them once a.mu is released). It tells of the
// exclusions lifted since the plan's dry run (lifted) and now.
func (a *am) applyPlan(spreadRoom int, lifted []contract.Event) (decision.Plan, []launchJob) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var launches []launchJob
	now := a.cfg.Now()
	for _, ev := range append(lifted, a.book.Tick(now, a.policy)...) {
		a.log.WithField("node", ev.Node).Info("am: node exclusion lifted")
		a.events.Add(ev)
	}
	spec := a.book.Want.Spec(a.cfg.Spec)
	m := a.book.Moment(now, a.driver.exited(), spec, a.cfg.ElasticInterval, a.cfg.GangTimeout)
	if a.book.Settled(&a.rec, m) {
		a.metrics.SetContainers(a.book.Gauges(&a.rec, len(a.policy.Excluded())))
		return decision.Plan{Asks: a.book.Asks.Table(), NextAskID: a.book.Asks.NextID()}, nil
	}
	in := a.book.Inputs(&a.rec, m)
	obs := a.book.Observed(&a.rec, a.policy, m)
	obs.SpreadRoom = spreadRoom
	plan := decision.Reconcile(spec, obs)
	a.book.Planned(plan, obs, in)
	a.events.AddAll(a.book.Asks.Apply(plan, now, spec.Capability))
	for _, s := range plan.Send {
		if s.Count > 0 {
			a.log.WithFields(logrus.Fields{"allocation_request_id": s.ID, "containers": s.Count, "resources": spec.Capability.String()}).Info("am: requesting TaskExecutor containers")
		}
	}
	for _, r := range plan.Release {
		a.log.WithFields(logrus.Fields{"container": r.ID, "node": r.Node, "reason": r.Reason}).Info("am: releasing container")
		if p := a.allocProtos[r.ID]; p != nil {
			a.release[r.ID] = p.GetId()
		}
		delete(a.allocProtos, r.ID)
	}
	for _, l := range plan.Hold {
		a.rec.Accepted(l, a.allocProtos[l.ID], a.book.Gang.Round(), true)
		delete(a.allocProtos, l.ID)
		a.log.WithFields(logrus.Fields{"container": l.ID, "node": l.Node, "round": a.book.Gang.Round()}).Info("am: container allocated and held until the gang is complete")
		a.events.Add(events.Allocated(l.ID, l.Node, l.Resources, allocLatency(a.metrics, &a.book.Asks, l.AskID, now)))
		a.progressed = true
	}
	if plan.StartHeld {
		started, evs := a.book.Gang.Start(&a.rec, spec, now)
		for _, ev := range evs {
			a.log.WithFields(logrus.Fields{"round": a.book.Gang.Round(), "ranks": len(started)}).Info("am: " + ev.Message)
			a.events.Add(ev)
		}
		for _, t := range started {
			launches = append(launches, launchJob{t: t, token: t.Token})
		}
	}
	for _, l := range plan.Launch {
		t := a.rec.Accepted(l, a.allocProtos[l.ID], a.book.Gang.Round(), false)
		t.RequestedAt, _ = a.book.Asks.SentAt(l.AskID)
		delete(a.allocProtos, l.ID)
		a.log.WithFields(logrus.Fields{"container": l.ID, "node": l.Node, "resources": l.Resources.String()}).Info("am: container allocated, launching TaskExecutor")
		a.events.Add(events.Allocated(l.ID, l.Node, l.Resources, allocLatency(a.metrics, &a.book.Asks, l.AskID, now)))
		a.progressed = true
		launches = append(launches, launchJob{t: t, token: t.Token})
	}
	var stop []*book.Container
	for _, c := range plan.Stop {
		t := a.rec.Get(c.ID)
		if t == nil {
			continue
		}
		if t.Phase == contract.Held {
			if t.CID != nil {
				a.release[t.ID] = t.CID
			}
			a.events.AddAll(a.rec.ReleasedHeld(t, "released before it started: "+plan.RoundReason))
			continue
		}
		why := "the requirement went down"
		if plan.NewRound {
			why = "the gang restarts"
		}
		t.ReleasedAsked = !plan.NewRound // its end is a release, not a stop to tell of (records.finish)
		a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node}).Info("am: stopping TaskExecutor: " + why)
		if a.rec.Stopping(t) {
			stop = append(stop, t)
		}
	}
	if len(stop) > 0 {
		a.launch.stopInBackground(stop)
	}
	if plan.NewRound {
		ev := a.book.Gang.Next(&a.rec, spec, now, plan.RoundReason, plan.RoundChange, plan.RoundSize)
		a.log.WithField("round", a.book.Gang.Round()).Warn("am: " + ev.Message)
		a.events.Add(ev)
	}
	full, room := a.book.Place.Fill(activeNodes(a.rec.Active()), &a.book.Excl, a.policy.IsExcluded)
	for _, ev := range full {
		ev = a.events.Add(ev)
		a.log.WithFields(logrus.Fields{"node": ev.Node, "taskexecutors": ev.Count}).Info("am: " + ev.Message)
	}
	for _, n := range room {
		a.log.WithField("node", n).Info("am: node has room again under taskexecutor.placement.max-per-node")
	}
	if plan.LimitReached && !a.limitHit {
		a.limitHit = true
		a.diagnostics = decision.FailureDiagnostics(spec, plan.Failures, obs.Forgotten)
		a.log.WithField("failures", plan.FailureCount).Error("am: failure limit reached: " + a.diagnostics)
		a.events.Add(events.FailureLimitReached(a.diagnostics))
	}
	a.metrics.SetContainers(a.book.Gauges(&a.rec, len(a.policy.Excluded())))
	return plan, launches
}

// bookStart books the answer of t's start (launchPool.started): a container stopped while its launch was
// in flight is stopped now, or given back if it never started; a refused start releases the
// container; else it runs.
func (a *am) bookStart(t *book.Container, sent time.Time, took time.Duration, err error) {
	log := a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node})
	a.mu.Lock()
	defer a.mu.Unlock()
	defer a.wake.poke()
	t.Token = nil // used: a container is started once
	if t.Phase == contract.Stopping && t.StopAfterLaunch {
		t.StopAfterLaunch = false
		if err != nil { // it never started: give the allocation back
			if t.CID != nil {
				a.release[t.ID] = t.CID
			}
			a.exitedLocked(t, a.rec.StoppedBeforeStart(t))
			return
		}
		a.launch.stopInBackground([]*book.Container{t})
		return
	}
	if t.Phase != contract.Launching {
		if err == nil && t.Phase == contract.Completed && t.LaunchedAt.IsZero() {
			// It started and ended before this start call returned: the timeline still shows it ran.
			t.LaunchedAt = sent
		}
		return // completed (or stopped) while the launch was in flight
	}
	if err != nil {
		log.WithError(err).Warn("am: starting the TaskExecutor failed; releasing the container")
		if t.CID != nil {
			a.release[t.ID] = t.CID
		}
		a.exitedLocked(t, a.rec.LaunchFailed(t, err.Error()))
		return
	}
	log.WithField("took", took.Round(time.Millisecond)).Info("am: TaskExecutor started")
	a.events.AddAll(a.rec.Launched(t))
}

var errShutdown = errors.New("am: the ResourceManager told the ApplicationMaster to shut down (AM_SHUTDOWN)")

// heartbeat sends one allocate and applies the response. a.mu is held while the request is built
// and while the response is applied, never during the call or a re-registration (doc.go).
func (a *am) heartbeat(ctx context.Context) error {
	var rooms []book.NodeRoom // the nodes' room, asked of the RM when Spread asks are about to be sent
	if a.cfg.Locality == localitySpread {
		a.mu.Lock()
		spread := a.book.Asks.SendingSpread()
		var ours map[string]contract.Capability
		var excluded map[string]bool
		if spread {
			ours, excluded = a.rec.Held(), book.HostsOf(a.policy.Excluded())
		}
		a.mu.Unlock()
		if spread {
			rooms = a.nodes.rooms(ctx, ours, excluded)
		}
	}
	req, sent := a.allocateRequest(rooms)

	c, cancel := callCtx(ctx)
	defer cancel()
	start := time.Now()
	resp, err := a.cfg.RM.Allocate(c, req)
	a.metrics.ObserveRPC("allocate", start, err)
	if err != nil && isRejection(err) {
		a.mu.Lock()
		maxCap := a.maxCap
		a.mu.Unlock()
		ev, _ := rejection(a.cfg.Spec.Capability, maxCap, a.cfg.Keys, err)
		ev = a.events.Add(ev)
		a.log.WithError(err).WithField("key", ev.Key).Error("am: " + ev.Message)
		return &rejectedError{ev: ev}
	}
	if placementRefused(err) {
		a.mu.Lock()
		ev, refused := a.book.Place.Refused(err.Error())
		a.mu.Unlock()
		if refused {
			ev = a.events.Add(ev)
			a.log.WithError(err).WithField("handler", hadoop.HandlerName(a.cfg.PlacementHandler)).Warn("am: " + ev.Message)
			if ev.Severity == contract.SeverityError {
				return &rejectedError{ev: ev}
			}
			return nil
		}
	}
	if errors.Is(err, yarnrpc.ErrApplicationMasterNotRegistered) {
		a.log.WithError(err).Warn("am: the ResourceManager does not know this ApplicationMaster (restart or failover); registering again and re-sending every outstanding request")
		return a.resync(ctx)
	}
	if err != nil {
		return err
	}
	a.applyResponse(resp, sent)
	if resp.AMCommand == nil { // proto2: an unset enum reads as its first value, AM_RESYNC
		return nil
	}
	switch resp.GetAMCommand() {
	case hadooppb.AMCommandProto_AM_SHUTDOWN:
		return errShutdown
	case hadooppb.AMCommandProto_AM_RESYNC:
		return a.resync(ctx)
	}
	return nil
}

// sentRequest is what an allocate request carried of the AM's bookkeeping, forgotten once it returned.
type sentRequest struct {
	asks            []decision.AskUpdate
	released        []string
	blAdd, blRemove []string
}

// allocateRequest builds the next allocate request from the ask table, the releases and the
// exclusion list.
func (a *am) allocateRequest(rooms []book.NodeRoom) (*hadooppb.AllocateRequestProto, sentRequest) {
	a.mu.Lock()
	defer a.mu.Unlock()
	req := &hadooppb.AllocateRequestProto{ResponseId: proto.Int32(a.responseID),
		Progress: proto.Float32(a.rec.Progress(a.book.Want.Count(), a.cfg.Spec.Mode == decision.Service))}
	var sent sentRequest
	sent.asks = a.book.Asks.ToSend()
	for _, s := range sent.asks {
		if a.book.Place.SchedulingRequests() {
			// The RM keeps no table of SchedulingRequests to lower: an ask cut to 0 is not sent, and
			// what it still allocates is released as excess (placement.go).
			if s.Count > 0 {
				req.SchedulingRequests = append(req.SchedulingRequests, a.book.Place.Request(s.ID, s.Count, resourceProto(a.cfg.Spec.Capability)))
			}
			continue
		}
		rr := book.AnyRequest(s.ID, s.Count, resourceProto(a.cfg.Spec.Capability), a.cfg.Priority, a.cfg.NodeLabel)
		if shares := book.PlanLocality(rooms, s.Count); s.Count > 0 && len(shares) > 0 && a.book.Asks.Spread(s.ID) {
			a.log.WithFields(logrus.Fields{"ask": s.ID, "containers": s.Count, "hosts": len(shares)}).Debug("am: ask spread over hosts as node-local requests")
			req.Ask = append(req.Ask, book.LocalityRequests(rr, shares, book.RacksOf(rooms))...)
		} else {
			req.Ask = append(req.Ask, rr)
		}
	}
	for id, p := range a.release {
		req.Release = append(req.Release, p)
		sent.released = append(sent.released, id)
	}
	sent.blAdd, sent.blRemove = a.book.Excl.Next()
	if len(sent.blAdd)+len(sent.blRemove) > 0 {
		req.BlacklistRequest = &hadooppb.ResourceBlacklistRequestProto{BlacklistAdditions: blacklistNames(sent.blAdd), BlacklistRemovals: blacklistNames(sent.blRemove)}
	}
	return req, sent
}

// applyResponse books an allocate's response: what the request carried is at the RM now; new
// allocations wait for the next Reconcile, completions end their containers; tokens are taken.
func (a *am) applyResponse(resp *hadooppb.AllocateResponseProto, sent sentRequest) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.responseID = resp.GetResponseId()
	a.book.Asks.MarkSent(sent.asks)
	for _, id := range sent.released {
		delete(a.release, id)
	}
	a.book.Excl.Drain(sent.blAdd, sent.blRemove)
	a.clusterNodes = int(resp.GetNumClusterNodes())
	if l := resp.GetLimit(); l != nil {
		a.headroom = l
	}
	for _, n := range resp.GetUpdatedNodes() {
		switch node, running, ev := book.NodeUpdate(n); {
		case running:
			if ev, ok := a.book.Live.NodeBack(node, &a.book.Excl, a.policy.IsExcluded); ok {
				a.log.WithField("node", node).Info("am: exclusion of a node that lost a TaskExecutor lifted: the ResourceManager reports it RUNNING")
				a.events.Add(ev)
			}
		case ev != nil: // no longer usable
			a.log.WithFields(logrus.Fields{"node": node, "state": ev.Reason}).Warn("am: node " + ev.Reason)
			a.events.Add(*ev)
			if state := ev.Reason; book.NodeDropped(n) {
				// The RM allocates nothing on this node any more, so its exclusion for a loss keeps
				// nothing off it; but the blacklist names its host too, which would keep a
				// NodeManager started again on that host (under a new port) from the job for good.
				if lifted, ok := a.book.Live.NodeBack(node, &a.book.Excl, a.policy.IsExcluded); ok {
					a.log.WithField("node", node).Info("am: exclusion of a node that lost a TaskExecutor lifted: the ResourceManager declared it " + state + " and allocates nothing there; a NodeManager started again on its host can be used")
					a.events.Add(lifted)
				}
			}
		}
	}
	if t := resp.GetAmRmToken(); t != nil {
		if err := a.cfg.RM.SetToken(yarnrpc.TokenFromProto(t)); err != nil {
			a.log.WithError(err).Warn("am: the new AM-RM token is unusable; keeping the old one")
		} else {
			a.log.Info("am: AM-RM token rolled over")
		}
	}
	for _, nt := range resp.GetNmTokens() {
		node := yarnrpc.NodeAddress(nt.GetNodeId())
		if err := a.cfg.NM.SetToken(node, yarnrpc.TokenFromProto(nt.GetToken())); err != nil {
			a.log.WithError(err).WithField("node", node).Warn("am: unusable NMToken")
		}
	}
	if len(resp.GetAllocatedContainers()) > 0 || len(resp.GetCompletedContainerStatuses()) > 0 {
		a.book.Plans.News()
	}
	for _, c := range resp.GetAllocatedContainers() {
		id := yarnrpc.FormatContainerID(c.GetId())
		if a.rec.Get(id) != nil || a.allocProtos[id] != nil {
			// A ResourceManager that restarted (work-preserving) or failed over may report a container
			// again that this AM already took: it is never launched twice
			// (TestLoopIgnoresAContainerTheRMReportsAgain).
			a.log.WithField("container", id).Info("am: the ResourceManager reported a known container again; ignored")
			continue
		}
		a.allocProtos[id] = c
		res := contract.Capability(yarnrpc.ResourceAmounts(c.GetResource()))
		if maps.Equal(res, a.lastAllocated) {
			res = a.lastAllocated // shared, never changed: one map for every container of the same size
		}
		a.lastAllocated = res
		a.book.Plans.Allocated(decision.Allocation{ID: id, Node: yarnrpc.NodeAddress(c.GetNodeId()), AskID: c.GetAllocationRequestId(), Resources: res})
	}
	for _, st := range resp.GetCompletedContainerStatuses() {
		id := yarnrpc.FormatContainerID(st.GetContainerId())
		exit := st.GetExitStatus()
		t, evs := a.rec.Ended(id, exit, st.GetDiagnostics())
		if t == nil {
			continue // released by us, or already known to have ended
		}
		a.exitedLocked(t, evs)
		f := logrus.Fields{"container": id, "node": t.Node, "exit_status": exit, "class": t.Exit.Class}
		if t.Exit.Class == contract.ExitSucceeded {
			a.log.WithFields(f).Info("am: TaskExecutor " + decision.Describe(exit, t.Exit.Class))
		} else {
			a.log.WithFields(f).WithField("diagnostics", st.GetDiagnostics()).Warn("am: TaskExecutor " + decision.Describe(exit, t.Exit.Class))
		}
	}
	if msg := resp.GetPreempt(); msg != nil {
		warned, evs := a.book.Notices.Preempted(&a.rec, preemptedIDs(msg), a.cfg.Spec.Gang, a.book.Gang.Round(), a.cfg.Now(), a.preemptionWait())
		for _, ev := range evs {
			ev = a.events.Add(ev)
			a.log.WithFields(logrus.Fields{"container": ev.Container, "node": ev.Node, "deadline": ev.Deadline.Format(time.RFC3339)}).Warn("am: " + ev.Message)
		}
		if len(warned) > 0 {
			handOut(&a.book.Notices, a.cfg.OnPreemption, warned)
		}
	}
	for _, ev := range a.book.Place.Rejected(resp.GetRejectedSchedulingRequests(), &a.book.Asks) {
		ev = a.events.Add(ev)
		a.log.WithField("containers", ev.Count).Warn("am: " + ev.Message)
	}
}

// allocLatency is how long ask askID waited for an allocation at now (0 if unknown), observed in m.
func allocLatency(m *metrics, asks *book.Asks, askID int64, now time.Time) time.Duration {
	d, ok := asks.Waited(askID, now)
	if ok {
		m.ObserveAllocation(d)
	}
	return d
}
