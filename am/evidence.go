package am

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// This file turns what the RM tells the AM into the facts of two allocation failures: the evidence
// of a not-enough-resources event (cluster totals, free amounts, the largest node), and the
// configuration key behind a request the RM rejected.

// clusterNodes lists the cluster's nodes (yarnrpc.ApplicationClient on the RM's client port). The
// AM uses it only for evidence; when it is nil or fails, the allocate response's headroom is used.
type clusterNodes interface {
	GetClusterNodes(ctx context.Context, states ...hadooppb.NodeStateProto) ([]*hadooppb.NodeReportProto, error)
}

// inPartition keeps the nodes of partition label (a node report's node_labels); label "" keeps every
// node. The evidence of a job with taskexecutor.node-label counts only the nodes its requests can be
// placed on (TestEvidenceCountsOnlyThePartition; docs/job-file.md#node-labels).
func inPartition(nodes []*hadooppb.NodeReportProto, label string) []*hadooppb.NodeReportProto {
	if label == "" {
		return nodes
	}
	var out []*hadooppb.NodeReportProto
	for _, n := range nodes {
		if slices.Contains(n.GetNodeLabels(), label) {
			out = append(out, n)
		}
	}
	return out
}

// buildEvidence sums the RUNNING nodes' capability and use, and picks the largest node by the
// scarcest type asked for (the first non-memory, non-vcores type, e.g. yarn.io/gpu; else memory).
// headroom is the allocate response's available_resources (may be nil).
func buildEvidence(asked contract.Capability, pending int, pendingFor time.Duration, nodes []*hadooppb.NodeReportProto, headroom *hadooppb.ResourceProto) contract.Evidence {
	ev := contract.Evidence{Asked: asked, Pending: pending, PendingFor: pendingFor.Round(time.Second).String()}
	if headroom != nil {
		ev.Headroom = contract.Capability(yarnrpc.ResourceAmounts(headroom))
	}
	key := scarceType(asked)
	var best int64 = -1
	for _, n := range nodes {
		if n.NodeState != nil && n.GetNodeState() != hadooppb.NodeStateProto_NS_RUNNING {
			continue
		}
		ev.Nodes++
		capa := contract.Capability(yarnrpc.ResourceAmounts(n.GetCapability()))
		used := contract.Capability(yarnrpc.ResourceAmounts(n.GetUsed()))
		free := contract.Capability{}
		if ev.ClusterTotal == nil {
			ev.ClusterTotal, ev.ClusterFree = contract.Capability{}, contract.Capability{}
		}
		for k, v := range capa {
			if _, wanted := asked[k]; !wanted && len(asked) > 0 {
				continue
			}
			ev.ClusterTotal[k] += v
			free[k] = v - used[k]
			ev.ClusterFree[k] += free[k]
		}
		if capa[key] > best {
			best = capa[key]
			ev.LargestNode = yarnrpc.NodeAddress(n.GetNodeId())
			ev.LargestCap, ev.LargestFree = contract.Capability{}, free
			for k, v := range capa {
				if _, wanted := asked[k]; wanted || len(asked) == 0 {
					ev.LargestCap[k] = v
				}
			}
		}
	}
	if len(nodes) > 0 {
		ev.Source = "node reports"
	} else if headroom != nil {
		ev.Source = "allocate headroom"
	}
	return ev
}

func scarceType(asked contract.Capability) string {
	keys := make([]string, 0, len(asked))
	for k := range asked {
		if k != "memory-mb" && k != "vcores" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		return keys[0]
	}
	return "memory-mb"
}

// configKeys maps YARN resource types to the job's configuration keys that set them, for messages:
// memory-mb → taskexecutor.memory, vcores → taskexecutor.vcores, yarn.io/gpu →
// external-resource.gpu.amount (filled in from the external-resource configuration).
type configKeys map[string]string

// Key returns the configuration key for a YARN type (the type itself if unknown).
func (k configKeys) Key(yarnType string) string {
	if v, ok := k[yarnType]; ok {
		return v
	}
	switch yarnType {
	case "memory-mb":
		return "taskexecutor.memory"
	case "vcores":
		return "taskexecutor.vcores"
	}
	return yarnType
}

// rejection explains why the RM would or did refuse asks of capability c: the first type (sorted)
// that the cluster does not know or whose amount is over maximum (the register response's
// maximum_capability; nil or empty = unknown), as an allocation-rejected event. rmErr is the
// RM's refusal if there was one (its message goes into the event's reason, and its class decides
// when the maximum does not say). ok is false when nothing can be blamed.
func rejection(c contract.Capability, maximum contract.Capability, keys configKeys, rmErr error) (contract.Event, bool) {
	msg := ""
	if rmErr != nil {
		msg = rmErr.Error()
	}
	types := make([]string, 0, len(c))
	for k := range c {
		types = append(types, k)
	}
	sort.Strings(types)
	if len(maximum) > 0 {
		for _, t := range types {
			max, known := maximum[t]
			switch {
			case !known && c[t] > 0 && t != "memory-mb" && t != "vcores":
				return events.AllocationRejected(keys.Key(t), c[t], -1, t, msg), true
			case known && c[t] > max:
				return events.AllocationRejected(keys.Key(t), c[t], max, t, msg), true
			}
		}
	}
	if rmErr == nil {
		return contract.Event{}, false
	}
	if rr, ok := yarnrpc.RejectedResource(rmErr); ok {
		t := rr.Type
		// The maximum in the RM's message is the scheduler's at the time of the refusal (it may be
		// below the registration's, which did not explain the refusal or we would not be here).
		if v, ok := rr.MaximumOfType(); ok {
			return events.AllocationRejected(keys.Key(t), c[t], v, t, msg), true
		}
		if v, ok := maximum[t]; ok {
			return events.AllocationRejected(keys.Key(t), c[t], v, t, msg), true
		}
		if errors.Is(rmErr, yarnrpc.ErrResourceNotFound) {
			return events.AllocationRejected(keys.Key(t), c[t], -1, t, msg), true
		}
		ev := events.AllocationRejected(keys.Key(t), c[t], -1, t, msg)
		ev.Message = fmt.Sprintf("the ResourceManager rejected the TaskExecutor request (%s): %s = %d is more than the cluster allows for %s: %s", c, keys.Key(t), c[t], t, msg)
		return ev, true
	}
	if errors.Is(rmErr, yarnrpc.ErrInvalidResourceRequest) || errors.Is(rmErr, yarnrpc.ErrResourceNotFound) {
		ev := events.AllocationRejected("", 0, -1, "", msg)
		ev.Message = fmt.Sprintf("the ResourceManager rejected the TaskExecutor request (%s): %s", c, msg)
		return ev, true
	}
	return contract.Event{}, false
}

// isRejection says whether an allocate error is the RM refusing the request itself (as opposed to
// a transport or server problem worth retrying).
func isRejection(err error) bool {
	return errors.Is(err, yarnrpc.ErrInvalidResourceRequest) || errors.Is(err, yarnrpc.ErrResourceNotFound)
}
