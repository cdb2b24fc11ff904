package am

import (
	"context"

	"github.com/yarn-am/yarn-am/am/book"
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

// nodeRooms asks the RM for the RUNNING nodes and returns their room for a container of the spec
// (nil when the call fails: asks go out plain, as with taskexecutor.locality = "any"; after a
// failure the RM is not asked again for a minute).
func (a *am) nodeRooms(ctx context.Context) []book.NodeRoom {
	a.mu.Lock()
	if a.cfg.Locality != localitySpread || !a.nodes.lists() || !a.book.Nodes.SpreadDue(a.cfg.Now()) {
		a.mu.Unlock()
		return nil
	}
	ours := map[string]contract.Capability{}
	for _, t := range a.rec.Active() {
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

	nodes, err := a.nodes.list(ctx)
	if err != nil {
		a.mu.Lock()
		a.book.Nodes.SpreadFailed(a.cfg.Now())
		a.mu.Unlock()
		a.log.WithError(err).Warn("am: no node reports for taskexecutor.locality = \"spread\"; asking for any node for a minute")
		return nil
	}
	return book.RoomsOf(inPartition(nodes, a.cfg.NodeLabel), a.cfg.Spec.Capability, ours, excluded)
}
