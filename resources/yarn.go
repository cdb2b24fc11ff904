package resources

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/text"
)

// NodeCapacity is the total capability of one NodeManager.
type NodeCapacity struct {
	ID         string // host:port
	Capability contract.Capability
}

// ClusterInfo is what Preflight needs to know about a cluster; what is left empty is not checked.
type ClusterInfo struct {
	// ResourceTypes is every resource type the RM knows (getResourceTypeInfo, or the AM's
	// registration), memory-mb and vcores included or not; nil = not known.
	ResourceTypes []string
	Maximum       contract.Capability // the maximum allocation; nil = not known
	Nodes         []NodeCapacity      // running nodes; empty = not checked
}

// YarnResources returns the external resources of one TaskExecutor as YARN resource type -> amount.
func (c *Config) YarnResources() contract.Capability {
	out := make(contract.Capability, len(c.Resources))
	for _, r := range c.Resources {
		out[r.YarnKey] += r.Amount
	}
	return out
}

// AmountKeys maps each YARN resource type of the configuration to the key that sets its amount
// (yarn.io/gpu -> external-resource.gpu.amount), for Preflight's messages.
func (c *Config) AmountKeys() map[string]string {
	out := make(map[string]string, len(c.Resources))
	for _, r := range c.Resources {
		out[r.YarnKey] = KeyPrefix + r.Name + "." + SubAmount
	}
	return out
}

// Ask is what a job asks of the cluster, as the pre-flight judges it.
type Ask struct {
	// TaskExecutor is one TaskExecutor: memory-mb, vcores and its external resources.
	TaskExecutor contract.Capability
	// AmountKeys maps YARN types to the configuration keys that set their amounts (Config.AmountKeys),
	// so the problems name what the user wrote; may be nil.
	AmountKeys map[string]string
	// ApplicationMaster is the AM's container; nil: not judged (at the AM's own registration, where it
	// already runs).
	ApplicationMaster contract.Capability
	// Instances and Gang: a gang (taskexecutor.gang) must fit on the nodes all at once; an elastic
	// one (1 <= MinInstances < Instances, taskexecutor.min-instances) its smallest round only.
	Instances    int
	Gang         bool
	MinInstances int
}

// Preflight checks what a job asks against the cluster and returns every actionable problem at once
// (a *PreflightError), or nil: resource types the RM does not know, amounts over the cluster's maximum
// allocation, a container that no single node can hold, and a gang the nodes can never hold at once.
// Each problem says whose container it is about. The client's check and submit run it against what
// they ask the RM (TestPreflightOverMaximumAndNoNode), the ApplicationMaster against its
// registration's answer (TestRegistrationPreflightReadsAsTheClients in am), so a job the cluster can
// never run reads the same from both.
func Preflight(ask Ask, cluster ClusterInfo) error {
	var probs []string
	for _, p := range fit(ask.TaskExecutor, "one TaskExecutor", ask.AmountKeys, cluster) {
		probs = append(probs, "TaskExecutor (taskexecutor.memory, taskexecutor.vcores, external resources): "+p)
	}
	if ask.ApplicationMaster != nil {
		for _, p := range fit(ask.ApplicationMaster, "the ApplicationMaster", nil, cluster) {
			probs = append(probs, "ApplicationMaster (am.memory, am.vcores): "+p)
		}
		if ask.Gang && len(cluster.Nodes) > 0 {
			n, key := ask.Instances, "instances"
			if ask.MinInstances >= 1 && ask.MinInstances < n {
				n, key = ask.MinInstances, "min-instances"
			}
			if _, why := gangCapacity(ask.TaskExecutor, ask.ApplicationMaster, n, key, cluster.Nodes); why != "" {
				probs = append(probs, why)
			}
		}
	}
	if len(probs) > 0 {
		return &PreflightError{Problems: probs}
	}
	return nil
}

// fit lists what keeps one container of size req (what: "one TaskExecutor") from the cluster.
func fit(req contract.Capability, what string, amountKeys map[string]string, cluster ClusterInfo) []string {
	amountText := func(t string) string {
		if k, ok := amountKeys[t]; ok {
			return fmt.Sprintf("%s = %d (%s)", k, req[t], t)
		}
		return fmt.Sprintf("%s = %d", t, req[t])
	}
	var external []string // the external resource types asked for, sorted
	for _, t := range slices.Sorted(maps.Keys(req)) {
		if t != "memory-mb" && t != "vcores" && req[t] > 0 {
			external = append(external, t)
		}
	}

	var probs []string
	if cluster.ResourceTypes != nil {
		known := map[string]bool{}
		var externalTypes []string
		for _, t := range cluster.ResourceTypes {
			known[t] = true
			if t != "memory-mb" && t != "vcores" {
				externalTypes = append(externalTypes, t)
			}
		}
		slices.Sort(externalTypes)
		knows := "no resource types besides memory-mb and vcores"
		if len(externalTypes) > 0 {
			knows = strings.Join(externalTypes, ", ")
		}
		var knownExternal []string
		for _, t := range external {
			if known[t] {
				knownExternal = append(knownExternal, t)
				continue
			}
			where := ""
			if k, ok := amountKeys[t]; ok {
				where = fmt.Sprintf(" (from %s%s)", strings.TrimSuffix(k, SubAmount), SubYarnKey)
			}
			probs = append(probs, fmt.Sprintf("the ResourceManager does not know the resource type %s%s%s; it knows %s. "+
				"Add %s to yarn.resource-types in resource-types.xml (and give the NodeManagers an amount: yarn.nodemanager.resource-type.%s in node-resources.xml), "+
				"or name a type the cluster has in the config key", text.BoundArgs([]any{t, where, typeSuggestion(t, externalTypes), knows, t, t})...))
		}
		external = knownExternal
	}

	max := cluster.Maximum
	if m := max["memory-mb"]; m > 0 && req["memory-mb"] > m {
		probs = append(probs, fmt.Sprintf("memory %d MB is more than the cluster's maximum allocation of %d MB (yarn.scheduler.maximum-allocation-mb); ask for less or raise the maximum", req["memory-mb"], m))
	}
	if m := max["vcores"]; m > 0 && req["vcores"] > m {
		probs = append(probs, fmt.Sprintf("vcores %d is more than the cluster's maximum allocation of %d (yarn.scheduler.maximum-allocation-vcores); ask for fewer or raise the maximum", req["vcores"], m))
	}
	for _, t := range external {
		if m, ok := max[t]; ok && req[t] > m {
			probs = append(probs, fmt.Sprintf("%s is more than the cluster's maximum allocation of %d %s; ask for at most %d or raise yarn.resource-types.%s.maximum-allocation",
				amountText(t), m, t, m, t))
		}
	}

	if len(cluster.Nodes) > 0 {
		if p := nodeFit(req, what, cluster.Nodes); p != "" {
			probs = append(probs, p)
		}
	}
	return probs
}

// nodeFit returns "" when some node can hold one container of size req, else a problem naming the node that
// comes closest (the most resources that fit, then the most memory) and what it lacks.
func nodeFit(req contract.Capability, what string, nodes []NodeCapacity) string {
	var best *NodeCapacity
	bestFits := -1
	var bestShort []string
	for i := range nodes {
		n := &nodes[i]
		short := n.Capability.Fits(req)
		if len(short) == 0 {
			return ""
		}
		if fits := len(req) - len(short); fits > bestFits || (fits == bestFits && n.Capability["memory-mb"] > best.Capability["memory-mb"]) {
			best, bestFits, bestShort = n, fits, short
		}
	}
	lacks := make([]string, 0, len(bestShort))
	for _, t := range messageOrder(bestShort) {
		if t == "memory-mb" {
			lacks = append(lacks, fmt.Sprintf("memory %d MB > %d MB", req[t], best.Capability[t]))
		} else {
			lacks = append(lacks, fmt.Sprintf("%s %d > %d", t, req[t], best.Capability[t]))
		}
	}
	return fmt.Sprintf("no single node can hold %s (%s); the largest node, %s, has %s (short: %s)",
		what, describeCapability(req), best.ID, describeCapability(best.Capability), strings.Join(lacks, ", "))
}

// messageOrder orders resource names as the messages list them: memory-mb, vcores, then the other
// types sorted.
func messageOrder(names []string) []string {
	out := make([]string, 0, len(names))
	for _, t := range []string{"memory-mb", "vcores"} {
		if slices.Contains(names, t) {
			out = append(out, t)
		}
	}
	for _, t := range slices.Sorted(slices.Values(names)) {
		if t != "memory-mb" && t != "vcores" {
			out = append(out, t)
		}
	}
	return out
}

// describeCapability renders a capability as the messages do: "memory 2048 MB, vcores 2, yarn.io/gpu
// 4" (memory and vcores always, other types when present).
func describeCapability(c contract.Capability) string {
	parts := []string{fmt.Sprintf("memory %d MB", c["memory-mb"]), fmt.Sprintf("vcores %d", c["vcores"])}
	for _, t := range messageOrder(slices.Collect(maps.Keys(c))) {
		if t != "memory-mb" && t != "vcores" {
			parts = append(parts, fmt.Sprintf("%s %d", t, c[t]))
		}
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
	return fmt.Sprintf("the cluster cannot run this job (%d problems):", len(e.Problems)) + text.Bullets(e.Problems, "")
}

// typeSuggestion is the did-you-mean for a resource type the cluster does not know: a Kubernetes
// device-plugin name (nvidia.com/gpu, amd.com/gpu, xilinx.com/fpga) for the YARN type of the same
// kind (yarn.io/gpu), else a known type one edit away (yarn.io/gpus → yarn.io/gpu).
func typeSuggestion(t string, known []string) string {
	if vendor, kind, ok := strings.Cut(t, "/"); ok && vendor != "yarn.io" {
		kind = strings.ToLower(kind)
		for _, k := range known {
			if k == "yarn.io/"+kind {
				return fmt.Sprintf(` (did you mean %q? %s is the Kubernetes device-plugin name; the YARN type is %s)`, k, t, k)
			}
		}
	}
	// Types differ by little (yarn.io/fpga is not a typo of yarn.io/gpu): one edit, or case only.
	for _, k := range known {
		if text.Within(strings.ToLower(t), strings.ToLower(k), 1) { // t is the user's: any length
			return ` (did you mean "` + k + `"?)`
		}
	}
	return ""
}
