package resources

import "fmt"

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
// returns every actionable problem at once (a *PreflightError), or nil. The external resources of cfg
// (which may be nil) are added to req.Resources; cfg also lets errors name the configuration keys.
func Preflight(req Capability, cfg *Config, cluster ClusterInfo) error {
	return fmt.Errorf("resources.Preflight: not implemented yet")
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
