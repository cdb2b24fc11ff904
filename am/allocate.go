package am

import (
	"context"
	"errors"
	"maps"
	"slices"
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
// ask table, releases, and launches queued to the workers.
func (a *am) reconcile(ctx context.Context) decision.Plan {
	plan, launches := a.applyPlan(a.spreadRoom(ctx))
	// Queued outside the lock: the workers take the lock when a launch completes.
	for _, t := range launches {
		select {
		case a.launchQ <- t:
		case <-ctx.Done():
			return plan
		}
	}
	return plan
}

// tickLocked does what time alone changes before a plan: exclusions that timed out are lifted and
// the restart backoff is read.
func (a *am) tickLocked(now time.Time) {
	a.liftExclusionsLocked(now)
	a.holdUntil = a.policy.RestartAt(now)
}

// observedLocked is the Observed of the next Reconcile (after tickLocked).
func (a *am) observedLocked(now time.Time) decision.Observed {
	obs := decision.Observed{Asks: a.book.Asks.Table(), NewAllocations: a.newAllocs, NextAskID: a.book.Asks.NextID(), Stopping: a.stoppingLocked(),
		HoldNewAsks: a.holdingLocked(now), Containers: a.rec.Observed(), Forgotten: a.rec.Forgotten(), Round: a.book.Gang.Round(),
		Elastic: a.book.Gang.Elastic(a.book.Want.Spec(a.cfg.Spec), now, a.cfg.ElasticInterval, a.cfg.GangTimeout), StopFirst: a.book.Want.StopFirst()}
	if len(a.newAllocs) > 0 {
		for _, n := range a.policy.Excluded() {
			if obs.Excluded == nil {
				obs.Excluded = map[string]bool{}
			}
			obs.Excluded[n] = true
		}
	}
	return obs
}

func (a *am) stoppingLocked() bool { return a.stopping || a.driver.exited() || a.policyOut != nil }

func (a *am) holdingLocked(now time.Time) bool {
	return now.Before(a.holdUntil) || a.book.Gang.Holding(now)
}

// planInputsLocked is the plan's inputs now (book.PlanInputs).
func (a *am) planInputsLocked(now time.Time) book.PlanInputs {
	return book.PlanInputs{Records: a.rec.Version(), Asks: a.book.Asks.Version(), Instances: a.book.Want.Count(), Stopping: a.stoppingLocked(),
		Hold: a.holdingLocked(now), Round: a.book.Gang.Round(),
		Elastic: a.book.Gang.Elastic(a.book.Want.Spec(a.cfg.Spec), now, a.cfg.ElasticInterval, a.cfg.GangTimeout)}
}

// idleLocked says whether the next plan would change nothing (the inputs of the last plan that
// changed nothing are unchanged and no allocation is new).
func (a *am) idleLocked(now time.Time) bool {
	return len(a.newAllocs) == 0 && a.idle != nil && *a.idle == a.planInputsLocked(now)
}

// changesNothing: performing p would change no state and queue nothing to send.
func changesNothing(p decision.Plan, obs decision.Observed) bool {
	return len(p.Launch)+len(p.Hold)+len(p.Release)+len(p.Stop)+len(p.Send) == 0 && !p.StartHeld && !p.NewRound &&
		!p.LimitReached && p.Done == nil && p.NextAskID == obs.NextAskID && slices.Equal(p.Asks, obs.Asks)
}

// applyPlan runs Reconcile and performs the bookkeeping half of its plan under a.mu; it returns the
// plan and the containers to launch (reconcile queues them once a.mu is released).
func (a *am) applyPlan(spreadRoom int) (decision.Plan, []*book.Container) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var launches []*book.Container
	now := a.cfg.Now()
	a.tickLocked(now)
	if a.idleLocked(now) {
		a.updateMetricsLocked()
		return decision.Plan{Asks: a.book.Asks.Table(), NextAskID: a.book.Asks.NextID()}, nil
	}
	in := a.planInputsLocked(now)
	obs := a.observedLocked(now)
	obs.SpreadRoom = spreadRoom
	spec := a.book.Want.Spec(a.cfg.Spec)
	plan := decision.Reconcile(spec, obs)
	a.idle = nil
	if len(obs.NewAllocations) == 0 && changesNothing(plan, obs) {
		a.idle = &in
	}
	a.newAllocs = nil
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
		launches = append(launches, started...)
	}
	for _, l := range plan.Launch {
		t := a.rec.Accepted(l, a.allocProtos[l.ID], a.book.Gang.Round(), false)
		t.RequestedAt, _ = a.book.Asks.SentAt(l.AskID)
		delete(a.allocProtos, l.ID)
		a.log.WithFields(logrus.Fields{"container": l.ID, "node": l.Node, "resources": l.Resources.String()}).Info("am: container allocated, launching TaskExecutor")
		a.events.Add(events.Allocated(l.ID, l.Node, l.Resources, allocLatency(a.metrics, &a.book.Asks, l.AskID, now)))
		a.progressed = true
		launches = append(launches, t)
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
		a.stopInBackground(stop)
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
	a.updateMetricsLocked()
	return plan, launches
}

var errShutdown = errors.New("am: the ResourceManager told the ApplicationMaster to shut down (AM_SHUTDOWN)")

// heartbeat sends one allocate and applies the response. a.mu is held while the request is built
// and while the response is applied, never during the call or a re-registration (doc.go).
func (a *am) heartbeat(ctx context.Context) error {
	rooms := a.localityRooms(ctx)
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
	req := &hadooppb.AllocateRequestProto{ResponseId: proto.Int32(a.responseID), Progress: proto.Float32(a.progressLocked())}
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
		rr := a.resourceRequest(s.ID, s.Count)
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
		a.nodeUpdateLocked(n)
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
		a.news = true
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
		a.newAllocs = append(a.newAllocs, decision.Allocation{ID: id, Node: yarnrpc.NodeAddress(c.GetNodeId()), AskID: c.GetAllocationRequestId(), Resources: res})
	}
	for _, st := range resp.GetCompletedContainerStatuses() {
		a.completedLocked(st)
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

func (a *am) completedLocked(st *hadooppb.ContainerStatusProto) {
	id := yarnrpc.FormatContainerID(st.GetContainerId())
	t := a.rec.Get(id)
	if t == nil || t.Phase == contract.Completed {
		return // released by us, or already known to have ended
	}
	exit := st.GetExitStatus()
	a.exitedLocked(t, a.rec.Completed(t, decision.Exit{Status: exit, Class: decision.Classify(exit), Diagnostics: st.GetDiagnostics()}))
	class := t.Exit.Class
	f := logrus.Fields{"container": id, "node": t.Node, "exit_status": exit, "class": class}
	if class == contract.ExitSucceeded {
		a.log.WithFields(f).Info("am: TaskExecutor " + decision.Describe(exit, class))
	} else {
		a.log.WithFields(f).WithField("diagnostics", st.GetDiagnostics()).Warn("am: TaskExecutor " + decision.Describe(exit, class))
	}
}

func (a *am) progressLocked() float32 {
	if a.book.Want.Count() == 0 || a.cfg.Spec.Mode == decision.Service {
		return 0
	}
	_, succeeded, _ := a.rec.Counts()
	return float32(min(succeeded, a.book.Want.Count())) / float32(a.book.Want.Count())
}

// resourceRequest builds one ResourceRequest (any node, relaxed locality) for ask id, in the
// partition of taskexecutor.node-label when one is set.
func (a *am) resourceRequest(id int64, n int) *hadooppb.ResourceRequestProto {
	var label *string
	if a.cfg.NodeLabel != "" {
		label = proto.String(a.cfg.NodeLabel)
	}
	return &hadooppb.ResourceRequestProto{
		NodeLabelExpression: label,
		Priority:            &hadooppb.PriorityProto{Priority: proto.Int32(a.cfg.Priority)},
		ResourceName:        proto.String("*"),
		Capability:          resourceProto(a.cfg.Spec.Capability),
		NumContainers:       proto.Int32(int32(n)),
		RelaxLocality:       proto.Bool(true),
		AllocationRequestId: proto.Int64(id),
	}
}

// spreadRoom is Observed.SpreadRoom: how many containers fit on the nodes now, when the next plan
// adds an ask (a dry run of Reconcile says so) and taskexecutor.locality = "spread"; 0 otherwise.
func (a *am) spreadRoom(ctx context.Context) int {
	if a.cfg.Locality != localitySpread || !a.nodes.lists() {
		return 0
	}
	a.mu.Lock()
	now := a.cfg.Now()
	a.tickLocked(now)
	if a.idleLocked(now) {
		a.mu.Unlock()
		return 0 // the last plan added no ask, and nothing it depends on changed since
	}
	obs := a.observedLocked(now)
	dry := decision.Reconcile(a.book.Want.Spec(a.cfg.Spec), obs)
	a.mu.Unlock()
	if dry.NextAskID == max(obs.NextAskID, 1) {
		return 0
	}
	room := 0
	for _, r := range a.nodeRooms(ctx) {
		room += r.Free
	}
	return room
}

// allocLatency is how long ask askID waited for an allocation at now (0 if unknown), observed in m.
func allocLatency(m *metrics, asks *book.Asks, askID int64, now time.Time) time.Duration {
	d, ok := asks.Waited(askID, now)
	if ok {
		m.ObserveAllocation(d)
	}
	return d
}
