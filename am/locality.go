package am

import (
	"context"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/contract"
)

// The AM's side of taskexecutor.locality = "spread": the nodes' room, asked of the RM when a plan
// adds an ask or a Spread ask is about to be sent (the AM then gives rooms what its containers hold,
// book.Records.Held, and the hosts the failure policy excluded, book.HostsOf); book.PlanLocality and
// book.LocalityRequests turn it into the node-local requests.

// rooms asks the RM for the RUNNING nodes and returns their room for a container of the job's size,
// with ours (what the application's active containers use, by node) counted as room to come and no
// room on the excluded hosts. It returns nil when the call fails (asks go out plain, as with
// taskexecutor.locality = "any"; after a failure the RM is not asked again for a minute, book.Nodes'
// SpreadDue) and when the AM lists no nodes. The caller does not hold the AM's mutex.
func (l *nodeLister) rooms(ctx context.Context, ours map[string]contract.Capability, excluded map[string]bool) []book.NodeRoom {
	if l.cluster == nil {
		return nil
	}
	l.mu.Lock()
	due := l.view.SpreadDue(l.now())
	l.mu.Unlock()
	if !due {
		return nil
	}
	nodes, err := l.list(ctx)
	if err != nil {
		l.mu.Lock()
		l.view.SpreadFailed(l.now())
		l.mu.Unlock()
		l.log.WithError(err).Warn("am: no node reports for taskexecutor.locality = \"spread\"; asking for any node for a minute")
		return nil
	}
	return book.RoomsOf(inPartition(nodes, l.label), l.asked, ours, excluded)
}
