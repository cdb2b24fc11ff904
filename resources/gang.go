package resources

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
)

// GangCapacity is how many containers of size te the cluster's nodes can hold at once, node by node
// (a container never spans nodes), with the ApplicationMaster's container of size am placed where it
// costs the fewest; and, when that is fewer than n, a sentence naming the shortfall. It counts the
// nodes' total capability, not what is free now: a gang it refuses can never run, whatever else the
// cluster does.
func GangCapacity(te, am contract.Capability, n int, nodes []NodeCapacity) (int, string) {
	return gangCapacity(te, am, n, "instances", nodes)
}

// gangCapacity is GangCapacity for a gang whose smallest round is n, set by taskexecutor.<key>
// ("instances", or "min-instances" for an elastic gang: docs/running.md#elastic-gangs).
func gangCapacity(te, am contract.Capability, n int, key string, nodes []NodeCapacity) (int, string) {
	per := make([]int, len(nodes))
	total := 0
	for i, nd := range nodes {
		per[i] = nd.Capability.Count(te)
		total += per[i]
	}
	best := -1
	for i, nd := range nodes {
		if len(nd.Capability.Fits(am)) > 0 {
			continue
		}
		if t := total - per[i] + nd.Capability.Add(am, -1).Count(te); t > best {
			best = t
		}
	}
	if best < 0 {
		best = 0 // the AM fits nowhere; Preflight reports that itself
	}
	if best >= n {
		return best, ""
	}
	var parts []string
	for i, nd := range nodes {
		parts = append(parts, fmt.Sprintf("%s holds %d", nd.ID, per[i]))
	}
	slices.Sort(parts)
	types := []string{fmt.Sprintf("memory-mb=%d", te["memory-mb"]), fmt.Sprintf("vcores=%d", te["vcores"])}
	for _, t := range slices.Sorted(maps.Keys(te)) {
		if t != "memory-mb" && t != "vcores" {
			types = append(types, fmt.Sprintf("%s=%d", t, te[t]))
		}
	}
	return best, fmt.Sprintf("taskexecutor.gang = true with taskexecutor.%s = %d: the cluster can hold at most %d TaskExecutors of %s at once besides the ApplicationMaster (%s); the gang is %d short: lower %s or the per-TaskExecutor amounts, or turn gang off",
		key, n, best, strings.Join(types, ", "), strings.Join(parts, "; "), n-best, key)
}
