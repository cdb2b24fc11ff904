package am

import (
	"context"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
)

// The AM's side of taskexecutor.locality = "spread": the nodes' room, asked of the RM when a plan
// adds an ask or a Spread ask is about to be sent; book.PlanLocality and book.LocalityRequests turn it
// into the node-local requests.

// localityRooms returns the nodes' room when Spread asks are about to be sent, nil otherwise.
func (a *am) localityRooms(ctx context.Context) []book.NodeRoom {
	a.mu.Lock()
	asking := a.book.Asks.SendingSpread()
	a.mu.Unlock()
	if !asking {
		return nil
	}
	return a.nodeRooms(ctx)
}

// spreadRoom is Observed.SpreadRoom: how many containers fit on the nodes now, when the next plan
// adds an ask (a dry run of Reconcile says so) and taskexecutor.locality = "spread"; 0 otherwise.
func (a *am) spreadRoom(ctx context.Context) int {
	if a.cfg.Locality != localitySpread || a.cfg.Cluster == nil {
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
	dry := decision.Reconcile(a.specLocked(), obs)
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

// nodeRooms asks the RM for the RUNNING nodes and returns their room for a container of the spec
// (nil when the call fails: asks go out plain, as with taskexecutor.locality = "any"; after a
// failure the RM is not asked again for a minute).
func (a *am) nodeRooms(ctx context.Context) []book.NodeRoom {
	a.mu.Lock()
	if a.cfg.Locality != localitySpread || a.cfg.Cluster == nil || !a.book.Nodes.SpreadDue(a.cfg.Now()) {
		a.mu.Unlock()
		return nil
	}
	ours := map[string]contract.Capability{}
	for _, t := range a.rec.active() {
		m := ours[t.Node]
		if m == nil {
			m = contract.Capability{}
			ours[t.Node] = m
		}
		for k, v := range t.Resources {
			m[k] += v
		}
	}
	excluded := map[string]bool{}
	for _, n := range a.policy.Excluded() {
		excluded[hadoop.NodeHost(n)] = true
	}
	a.mu.Unlock()

	nodes, err := a.listNodes(ctx)
	if err != nil {
		a.mu.Lock()
		a.book.Nodes.SpreadFailed(a.cfg.Now())
		a.mu.Unlock()
		a.log.WithError(err).Warn("am: no node reports for taskexecutor.locality = \"spread\"; asking for any node for a minute")
		return nil
	}
	return book.RoomsOf(inPartition(nodes, a.cfg.NodeLabel), a.cfg.Spec.Capability, ours, excluded)
}
