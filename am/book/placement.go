package book

import (
	"iter"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// TaskExecutorTag is the allocation tag of every TaskExecutor container sent by SchedulingRequest;
// the cardinality constraint counts it (within the application: YARN's default tag namespace).
const TaskExecutorTag = "yarn-am-taskexecutor"

// placementScope is YARN's node scope of a placement constraint (PlacementConstraints.NODE).
const placementScope = "node"

// Placement is the memory of taskexecutor.placement (am/placement.go): whether the asks go as
// SchedulingRequests (until the ResourceManager refuses them), the nodes the AM blacklisted because
// they run max-per-node TaskExecutors when it keeps the limit itself, and the asks whose rejection
// was said. Its verbs are the only writers of its fields: Refused, Rejected (which marks the asks
// for sending again) and Fill (which queues the blacklist changes). The AM's mutex guards it
// (package doc).
type Placement struct {
	p        jobfile.Placement
	handler  string // the ResourceManager's placement handler, for the events
	priority int32  // of the SchedulingRequests
	// requests: the asks go as SchedulingRequests with constraint.
	requests   bool
	constraint *hadooppb.PlacementConstraintProto
	// full: the nodes blacklisted for running max-per-node TaskExecutors; rejected: the asks whose
	// rejection was an event.
	full     map[string]bool
	rejected map[int64]bool
}

// NewPlacement is the placement p, sent as SchedulingRequests of priority when schedulingRequests
// (jobfile.Placement.Handled said so for the ResourceManager's handler).
func NewPlacement(p jobfile.Placement, handler string, schedulingRequests bool, priority int32) Placement {
	pl := Placement{p: p, handler: handler, priority: priority, requests: schedulingRequests, full: map[string]bool{}, rejected: map[int64]bool{}}
	if schedulingRequests {
		pl.constraint = PlacementConstraint(p)
	}
	return pl
}

// SchedulingRequests says the asks go as SchedulingRequests (Request), not ResourceRequests.
func (pl *Placement) SchedulingRequests() bool { return pl.requests }

// Mode is the event that says at the start how the placement is kept (false: no placement).
func (pl *Placement) Mode() (contract.Event, bool) {
	if !pl.p.Set() {
		return contract.Event{}, false
	}
	return events.PlacementMode(pl.requests, hadoop.HandlerName(pl.handler), pl.p.MaxPerNode, jobfile.AttributeList(pl.p.NodeAttributes)), true
}

// Request is ask id's SchedulingRequest for n containers of res.
func (pl *Placement) Request(id int64, n int, res *hadooppb.ResourceProto) *hadooppb.SchedulingRequestProto {
	return &hadooppb.SchedulingRequestProto{
		AllocationRequestId: proto.Int64(id),
		Priority:            &hadooppb.PriorityProto{Priority: proto.Int32(pl.priority)},
		ExecutionType:       &hadooppb.ExecutionTypeRequestProto{ExecutionType: hadooppb.ExecutionTypeProto_GUARANTEED.Enum(), EnforceExecutionType: proto.Bool(true)},
		AllocationTags:      []string{TaskExecutorTag},
		ResourceSizing:      &hadooppb.ResourceSizingProto{NumAllocations: proto.Int32(int32(n)), Resources: res},
		PlacementConstraint: pl.constraint,
	}
}

// Refused books that the ResourceManager refuses SchedulingRequests (rmSaid: its error): from now
// the asks go as ResourceRequests and the AM keeps max-per-node itself. It returns the placement
// event that says so (of error severity when node attributes cannot be kept that way), or false
// when the asks already went as ResourceRequests.
func (pl *Placement) Refused(rmSaid string) (contract.Event, bool) {
	if !pl.requests {
		return contract.Event{}, false
	}
	pl.requests, pl.constraint = false, nil
	return events.PlacementRefused(hadoop.HandlerName(pl.handler), pl.p.MaxPerNode, jobfile.AttributeList(pl.p.NodeAttributes), rmSaid), true
}

// Full says node is blacklisted for running max-per-node TaskExecutors.
func (pl *Placement) Full(node string) bool { return pl.full[node] }

// FullNodes are the nodes blacklisted for running max-per-node TaskExecutors, in no order.
func (pl *Placement) FullNodes() iter.Seq[string] { return maps.Keys(pl.full) }

// Rejected books the SchedulingRequests the ResourceManager could not place: their asks are sent
// again with the next allocate (asks; the RM keeps nothing of a rejected request). It returns the
// event of each ask's first rejection; a request that cannot be placed comes back at each of the
// RM's rounds for as long as the job runs, said once.
func (pl *Placement) Rejected(rs []*hadooppb.RejectedSchedulingRequestProto, asks *Asks) []contract.Event {
	var evs []contract.Event
	for _, r := range rs {
		id := r.GetRequest().GetAllocationRequestId()
		if !pl.rejected[id] {
			pl.rejected[id] = true
			evs = append(evs, events.PlacementRejected(r.GetRequest().GetResourceSizing().GetNumAllocations(), r.GetReason().String(),
				pl.p.MaxPerNode, jobfile.AttributeList(pl.p.NodeAttributes)))
		}
		asks.Resend(id)
	}
	return evs
}

// Fill keeps the blacklist (excl) of nodes that run max-per-node TaskExecutors when the AM keeps
// the limit itself (no SchedulingRequests); active holds the node of each active container. A node
// that filled up is blacklisted, with the event returned, and one with room again (in room) lifted
// unless excluded says the failure policy excludes it.
func (pl *Placement) Fill(active []string, excl *Exclusions, excluded func(node string) bool) (full []contract.Event, room []string) {
	max := pl.p.MaxPerNode
	if max <= 0 || pl.requests {
		return nil, nil
	}
	count := map[string]int{}
	for _, n := range active {
		count[n]++
	}
	for _, n := range slices.Sorted(maps.Keys(count)) {
		if count[n] >= max && !pl.full[n] {
			pl.full[n] = true
			excl.Exclude(n)
			full = append(full, events.PlacementNodeFull(n, count[n], max))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(pl.full)) {
		if count[n] < max {
			delete(pl.full, n)
			if !excluded(n) {
				excl.Lift(n)
			}
			room = append(room, n)
		}
	}
	return full, room
}

// PlacementConstraint is the constraint of every TaskExecutor SchedulingRequest: the conditions of
// p, joined by AND when there are several.
func PlacementConstraint(p jobfile.Placement) *hadooppb.PlacementConstraintProto {
	var cs []*hadooppb.PlacementConstraintProto
	if p.MaxPerNode > 0 {
		cs = append(cs, &hadooppb.PlacementConstraintProto{SimpleConstraint: &hadooppb.SimplePlacementConstraintProto{
			Scope: proto.String(placementScope),
			TargetExpressions: []*hadooppb.PlacementConstraintTargetProto{{
				TargetType: hadooppb.PlacementConstraintTargetProto_ALLOCATION_TAG.Enum(), TargetValues: []string{TaskExecutorTag}}},
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
