package am

import (
	"maps"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Placement (taskexecutor.placement, docs/job-file.md#placement) goes one of two ways, by the
// ResourceManager's yarn.resourcemanager.placement-constraints.handler (hadoop.PlacementSchedulingRequests):
//
//   - placement-processor or scheduler: every TaskExecutor ask is sent as a SchedulingRequest
//     (Hadoop 3.1+, YARN-6592) carrying the allocation tag taskExecutorTag and a placement
//     constraint: at most max-per-node containers with that tag on a node (a cardinality of
//     0..max-per-node-1 on the tag, scope node) and each node attribute condition; the RM places
//     them and a request it cannot place comes back in rejected_scheduling_requests, whose asks are
//     sent again.
//   - disabled (YARN's default): ResourceRequests as without a placement, and the AM keeps
//     max-per-node itself: Reconcile releases an allocation on a node that already runs
//     max-per-node TaskExecutors (decision.Spec.MaxPerNode) and a node that is full is blacklisted
//     until one of them ends (placementFullLocked), so the scheduler stops offering it. Node
//     attributes cannot be honoured this way: the AM refuses them (check does first).

// taskExecutorTag is the allocation tag of every TaskExecutor container sent by SchedulingRequest;
// the cardinality constraint counts it (within the application: YARN's default tag namespace).
const taskExecutorTag = "yarn-am-taskexecutor"

// placementScope is YARN's node scope of a placement constraint (PlacementConstraints.NODE).
const placementScope = "node"

// checkPlacement is jobfile.Placement.Handled with YARN's handler names (it refuses what the RM
// cannot honour; check and submit refuse it first, client.PlacementPlan).
func checkPlacement(p jobfile.Placement, handler, nodeLabel string) (schedulingRequests bool, err error) {
	return p.Handled(handler, nodeLabel)
}

func attributeList(as []jobfile.NodeAttribute) string { return jobfile.AttributeList(as) }

// placementConstraint is the constraint of every TaskExecutor SchedulingRequest: the conditions of
// p, joined by AND when there are several.
func placementConstraint(p jobfile.Placement) *hadooppb.PlacementConstraintProto {
	var cs []*hadooppb.PlacementConstraintProto
	if p.MaxPerNode > 0 {
		cs = append(cs, &hadooppb.PlacementConstraintProto{SimpleConstraint: &hadooppb.SimplePlacementConstraintProto{
			Scope: proto.String(placementScope),
			TargetExpressions: []*hadooppb.PlacementConstraintTargetProto{{
				TargetType: hadooppb.PlacementConstraintTargetProto_ALLOCATION_TAG.Enum(), TargetValues: []string{taskExecutorTag}}},
			// Evaluated before the container is placed: a node qualifies while it has at most
			// max-per-node-1 of them.
			MinCardinality: proto.Int32(0), MaxCardinality: proto.Int32(int32(p.MaxPerNode - 1)),
		}})
	}
	for _, a := range p.NodeAttributes {
		op := hadooppb.NodeAttributeOpCodeProto_EQ
		if a.Not {
			op = hadooppb.NodeAttributeOpCodeProto_NE
		}
		cs = append(cs, &hadooppb.PlacementConstraintProto{SimpleConstraint: &hadooppb.SimplePlacementConstraintProto{
			Scope: proto.String(placementScope),
			TargetExpressions: []*hadooppb.PlacementConstraintTargetProto{{
				TargetType: hadooppb.PlacementConstraintTargetProto_NODE_ATTRIBUTE.Enum(), TargetKey: proto.String(a.Name), TargetValues: []string{a.Value}}},
			// A node-attribute condition has no cardinality (YARN's own constructor sends -1).
			MinCardinality: proto.Int32(-1), MaxCardinality: proto.Int32(-1), AttributeOpCode: op.Enum(),
		}})
	}
	if len(cs) == 1 {
		return cs[0]
	}
	return &hadooppb.PlacementConstraintProto{CompositeConstraint: &hadooppb.CompositePlacementConstraintProto{
		CompositeType: hadooppb.CompositePlacementConstraintProto_AND.Enum(), ChildConstraints: cs}}
}

// schedulingRequest is ask id's SchedulingRequest for n containers.
func (a *am) schedulingRequest(id int64, n int) *hadooppb.SchedulingRequestProto {
	return &hadooppb.SchedulingRequestProto{
		AllocationRequestId: proto.Int64(id),
		Priority:            &hadooppb.PriorityProto{Priority: proto.Int32(a.cfg.Priority)},
		ExecutionType:       &hadooppb.ExecutionTypeRequestProto{ExecutionType: hadooppb.ExecutionTypeProto_GUARANTEED.Enum(), EnforceExecutionType: proto.Bool(true)},
		AllocationTags:      []string{taskExecutorTag},
		ResourceSizing:      &hadooppb.ResourceSizingProto{NumAllocations: proto.Int32(int32(n)), Resources: resourceProto(a.cfg.Spec.Capability)},
		PlacementConstraint: a.constraint,
	}
}

// rejectedLocked books the SchedulingRequests the RM could not place: their asks are sent again
// with the next allocate (the RM keeps nothing of a rejected request), and the first rejection of
// each ask is an event.
func (a *am) rejectedLocked(rs []*hadooppb.RejectedSchedulingRequestProto) {
	for _, r := range rs {
		id := r.GetRequest().GetAllocationRequestId()
		n := r.GetRequest().GetResourceSizing().GetNumAllocations()
		l := a.log.WithFields(logrus.Fields{"allocation_request_id": id, "containers": n, "reason": r.GetReason().String()})
		if !a.placementRejected[id] {
			a.placementRejected[id] = true
			a.emit(events.PlacementRejected(n, r.GetReason().String(), a.cfg.Placement.MaxPerNode, attributeList(a.cfg.Placement.NodeAttributes)))
			l.Warn("am: the ResourceManager could not place a SchedulingRequest (taskexecutor.placement); asking again")
		} else {
			// A request that cannot be placed comes back at each of the RM's rounds for as long as
			// the job runs: once a warning, then only at debug level.
			l.Debug("am: the ResourceManager could not place a SchedulingRequest again; asking again")
		}
		a.book.Asks.Resend(id)
	}
}

// placementFullLocked keeps the blacklist of nodes that run max-per-node TaskExecutors when the AM
// keeps the limit itself (handler disabled): a node that filled up is blacklisted, one with room
// again lifted unless the failure policy excludes it.
func (a *am) placementFullLocked() {
	max := a.cfg.Spec.MaxPerNode
	if max <= 0 || a.schedulingRequests {
		return
	}
	count := map[string]int{}
	for _, t := range a.rec.Active() {
		count[t.Node]++
	}
	for _, n := range slices.Sorted(maps.Keys(count)) {
		if count[n] >= max && !a.placementFull[n] {
			a.placementFull[n] = true
			a.book.Excl.Exclude(n)
			a.log.WithFields(logrus.Fields{"node": n, "taskexecutors": count[n]}).Info("am: node full by taskexecutor.placement.max-per-node; blacklisted until one of its TaskExecutors ends")
			a.emit(events.PlacementNodeFull(n, count[n], max))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(a.placementFull)) {
		if count[n] < max {
			delete(a.placementFull, n)
			if !a.policy.IsExcluded(n) {
				a.book.Excl.Lift(n)
			}
			a.log.WithField("node", n).Info("am: node has room again under taskexecutor.placement.max-per-node")
		}
	}
}

// placementEvent says at the start how the placement is kept.
func (a *am) placementEvent() (contract.Event, bool) {
	p := a.cfg.Placement
	if !p.Set() {
		return contract.Event{}, false
	}
	return events.PlacementMode(a.schedulingRequests, hadoop.HandlerName(a.cfg.PlacementHandler), p.MaxPerNode, attributeList(p.NodeAttributes)), true
}

// placementRefusedText is what a ResourceManager says, in the exception that fails the whole
// allocate, when its placement handler cannot place SchedulingRequests: the handler is disabled on
// the RM, or it is "scheduler" with a scheduler that has no placement constraints. The site files
// staged with the job named a handler all the same (the RM was reconfigured, or the client's
// configuration is not the cluster's).
const placementRefusedText = "cannot handle placement constraints"

// placementRefused handles an allocate the ResourceManager failed for its SchedulingRequests. From
// the next heartbeat the asks go as ResourceRequests and the AM keeps max-per-node itself, as with
// the handler disabled, and says so in a placement warning; the refused request placed nothing, so
// its asks are still to be sent. Node attributes cannot be kept that way: the job ends, naming the
// key (a rejectedError). It reports false for any other error.
func (a *am) placementRefused(err error) (bool, error) {
	if err == nil || !strings.Contains(err.Error(), placementRefusedText) {
		return false, nil
	}
	a.mu.Lock()
	if !a.schedulingRequests {
		a.mu.Unlock()
		return false, nil
	}
	a.schedulingRequests, a.constraint = false, nil
	p, handler := a.cfg.Placement, hadoop.HandlerName(a.cfg.PlacementHandler)
	a.mu.Unlock()
	ev := a.emit(events.PlacementRefused(handler, p.MaxPerNode, attributeList(p.NodeAttributes), err.Error()))
	a.log.WithError(err).WithField("handler", handler).Warn("am: " + ev.Message)
	if ev.Severity == contract.SeverityError {
		return true, &rejectedError{ev: ev}
	}
	return true, nil
}

// rejectedError ends the loop: the RM refused the TaskExecutor request itself.
type rejectedError struct{ ev contract.Event }

func (e *rejectedError) Error() string { return e.ev.Message }
