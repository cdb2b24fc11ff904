package resources

import (
	"fmt"
	"sort"
	"strings"
)

// GangCapacity is how many containers of size te the cluster's nodes can hold at once, node by node
// (a container never spans nodes), with the ApplicationMaster's container of size am placed where it
// costs the fewest; and, when that is fewer than n, a sentence naming the shortfall. It counts the
// nodes' total capability, not what is free now: a gang it refuses can never run, whatever else the
// cluster does.
func GangCapacity(te, am Capability, n int, nodes []NodeCapacity) (int, string) {
	fits := func(c Capability) int {
		k := -1
		min := func(have, want int64) {
			if want <= 0 {
				return
			}
			if q := int(have / want); k < 0 || q < k {
				k = q
			}
		}
		min(c.MemoryMB, te.MemoryMB)
		min(int64(c.VCores), int64(te.VCores))
		for t, w := range te.Resources {
			min(c.Resources[t], w)
		}
		if k < 0 {
			return 0
		}
		return k
	}
	minus := func(c, d Capability) (Capability, bool) {
		out := Capability{MemoryMB: c.MemoryMB - d.MemoryMB, VCores: c.VCores - d.VCores, Resources: map[string]int64{}}
		ok := out.MemoryMB >= 0 && out.VCores >= 0
		for t, v := range c.Resources {
			out.Resources[t] = v - d.Resources[t]
			ok = ok && out.Resources[t] >= 0
		}
		return out, ok
	}
	per := make([]int, len(nodes))
	total := 0
	for i, nd := range nodes {
		per[i] = fits(nd.Capability)
		total += per[i]
	}
	best := -1
	for i, nd := range nodes {
		rest, ok := minus(nd.Capability, am)
		if !ok {
			continue
		}
		if t := total - per[i] + fits(rest); t > best {
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
	sort.Strings(parts)
	types := []string{fmt.Sprintf("memory-mb=%d", te.MemoryMB), fmt.Sprintf("vcores=%d", te.VCores)}
	for _, t := range sortedKeys(te.Resources) {
		types = append(types, fmt.Sprintf("%s=%d", t, te.Resources[t]))
	}
	return best, fmt.Sprintf("taskexecutor.gang = true with taskexecutor.instances = %d: the cluster can hold at most %d TaskExecutors of %s at once besides the ApplicationMaster (%s); the gang is %d short: lower instances or the per-TaskExecutor amounts, or turn gang off",
		n, best, strings.Join(types, ", "), strings.Join(parts, "; "), n-best)
}
