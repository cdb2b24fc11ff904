package resources

import (
	"fmt"
	"strings"
)

// Capability is the size of one YARN container: memory, vcores and other resource types.
type Capability struct {
	MemoryMB  int64
	VCores    int32
	Resources map[string]int64 // YARN resource type -> amount (external resources only)
}

// NodeCapacity is the total capability of one NodeManager.
type NodeCapacity struct {
	ID string // host:port
	Capability
}

// ClusterInfo is what Preflight needs to know about a cluster.
type ClusterInfo struct {
	ResourceTypes []string // every resource type the RM knows (getResourceTypeInfo), memory-mb and vcores included or not
	Maximum       Capability
	Nodes         []NodeCapacity // running nodes; empty = not checked
}

// YarnResources returns the external resources of one TaskExecutor as YARN resource type -> amount.
func (c *Config) YarnResources() map[string]int64 {
	out := make(map[string]int64, len(c.Resources))
	for _, r := range c.Resources {
		out[r.YarnKey] += r.Amount
	}
	return out
}

// Preflight checks a TaskExecutor request against the cluster before anything is asked of the RM and
// returns every actionable problem at once (a *PreflightError), or nil: resource types the RM does not
// know, amounts over the cluster's maximum allocation (memory and vcores too), and a request that no
// single node can hold. The external resources of cfg (which may be nil) are added to req.Resources
// (cfg wins for a type both name); cfg also lets errors name the configuration keys.
func Preflight(req Capability, cfg *Config, cluster ClusterInfo) error {
	want := map[string]int64{}
	for k, v := range req.Resources {
		want[k] = v
	}
	keyOf := map[string]string{} // YARN type -> the config key of its amount
	if cfg != nil {
		for _, r := range cfg.Resources {
			want[r.YarnKey] = r.Amount
			keyOf[r.YarnKey] = KeyPrefix + r.Name + "." + SubAmount
		}
	}
	amountText := func(t string) string {
		if k, ok := keyOf[t]; ok {
			return fmt.Sprintf("%s = %d (%s)", k, want[t], t)
		}
		return fmt.Sprintf("%s = %d", t, want[t])
	}
	types := sortedKeys(want)

	known := map[string]bool{}
	var externalTypes []string
	for _, t := range cluster.ResourceTypes {
		known[t] = true
		if t != "memory-mb" && t != "vcores" {
			externalTypes = append(externalTypes, t)
		}
	}
	sortStrings(externalTypes)

	var probs []string
	for _, t := range types {
		if known[t] {
			continue
		}
		knows := "no resource types besides memory-mb and vcores"
		if len(externalTypes) > 0 {
			knows = strings.Join(externalTypes, ", ")
		}
		where := ""
		if k, ok := keyOf[t]; ok {
			where = fmt.Sprintf(" (from %s%s)", strings.TrimSuffix(k, SubAmount), SubYarnKey)
		}
		probs = append(probs, fmt.Sprintf("the ResourceManager does not know the resource type %s%s; it knows %s. "+
			"Add %s to yarn.resource-types in resource-types.xml (and give the NodeManagers an amount: yarn.nodemanager.resource-type.%s in node-resources.xml), "+
			"or name a type the cluster has in the config key", t, where, knows, t, t))
	}

	max := cluster.Maximum
	if max.MemoryMB > 0 && req.MemoryMB > max.MemoryMB {
		probs = append(probs, fmt.Sprintf("memory %d MB is more than the cluster's maximum allocation of %d MB (yarn.scheduler.maximum-allocation-mb); ask for less or raise the maximum", req.MemoryMB, max.MemoryMB))
	}
	if max.VCores > 0 && req.VCores > max.VCores {
		probs = append(probs, fmt.Sprintf("vcores %d is more than the cluster's maximum allocation of %d (yarn.scheduler.maximum-allocation-vcores); ask for fewer or raise the maximum", req.VCores, max.VCores))
	}
	for _, t := range types {
		if !known[t] {
			continue
		}
		if m, ok := max.Resources[t]; ok && want[t] > m {
			probs = append(probs, fmt.Sprintf("%s is more than the cluster's maximum allocation of %d %s; ask for at most %d or raise yarn.resource-types.%s.maximum-allocation",
				amountText(t), m, t, m, t))
		}
	}

	if len(cluster.Nodes) > 0 {
		if p := nodeFit(req, want, types, cluster.Nodes); p != "" {
			probs = append(probs, p)
		}
	}
	if len(probs) > 0 {
		return &PreflightError{Problems: probs}
	}
	return nil
}

// nodeFit returns "" when some node can hold one TaskExecutor, else a problem naming the node that
// comes closest and what it lacks.
func nodeFit(req Capability, want map[string]int64, types []string, nodes []NodeCapacity) string {
	var best *NodeCapacity
	bestFits := -1
	var bestLacks []string
	for i := range nodes {
		n := &nodes[i]
		var lacks []string
		fits := 0
		if req.MemoryMB > n.MemoryMB {
			lacks = append(lacks, fmt.Sprintf("memory %d MB > %d MB", req.MemoryMB, n.MemoryMB))
		} else {
			fits++
		}
		if req.VCores > n.VCores {
			lacks = append(lacks, fmt.Sprintf("vcores %d > %d", req.VCores, n.VCores))
		} else {
			fits++
		}
		for _, t := range types {
			if want[t] > n.Resources[t] {
				lacks = append(lacks, fmt.Sprintf("%s %d > %d", t, want[t], n.Resources[t]))
			} else {
				fits++
			}
		}
		if len(lacks) == 0 {
			return ""
		}
		if fits > bestFits || (fits == bestFits && n.MemoryMB > best.MemoryMB) {
			best, bestFits, bestLacks = n, fits, lacks
		}
	}
	return fmt.Sprintf("no single node can hold one TaskExecutor (%s); the largest node, %s, has %s (short: %s)",
		describeCapability(req.MemoryMB, req.VCores, want, types), best.ID,
		describeCapability(best.MemoryMB, best.VCores, best.Resources, sortedKeys(best.Resources)), strings.Join(bestLacks, ", "))
}

func describeCapability(mem int64, vcores int32, res map[string]int64, types []string) string {
	parts := []string{fmt.Sprintf("memory %d MB", mem), fmt.Sprintf("vcores %d", vcores)}
	for _, t := range types {
		parts = append(parts, fmt.Sprintf("%s %d", t, res[t]))
	}
	return strings.Join(parts, ", ")
}

// PreflightError lists everything about a request that the cluster cannot satisfy.
type PreflightError struct {
	Problems []string
}

// Error lists the problems, one per line.
func (e *PreflightError) Error() string {
	if len(e.Problems) == 1 {
		return "the cluster cannot run this job: " + e.Problems[0]
	}
	s := fmt.Sprintf("the cluster cannot run this job (%d problems):", len(e.Problems))
	for _, p := range e.Problems {
		s += "\n  - " + p
	}
	return s
}
