package contract

import (
	"fmt"
	"regexp"
)

// GPUTopology is the GPU topology matrix a container's built-in NVIDIA discovery script read
// (`nvidia-smi topo -m`) when it chose a set of more than one GPU, and the link of that set
// (docs/gpus.md#topology-connected-sets). The launcher reports it (ContainerReport.Topology); the AM
// shows it on the GPU map (ContainerStatus.Topology) and says in an event when the set is worse than
// the node's best (docs/running.md#events).
type GPUTopology struct {
	// Link is the worst link among the pairs of the chosen GPUs, as nvidia-smi names it (NV18, PIX, SYS).
	Link string `json:"link"`
	// Best is the link of the node's best set of as many GPUs when the chosen one is worse (--topology
	// prefer took what was free); "" when the set is as good as the node's best.
	Best string `json:"best,omitempty"`
	// GPUs are the matrix's GPUs in its order.
	GPUs []GPUTopologyRow `json:"gpus"`
}

// GPUTopologyRow is one row of the matrix.
type GPUTopologyRow struct {
	Index string   `json:"index"` // the GPU's index (nvidia-smi's GPU<n>)
	NUMA  string   `json:"numa"`  // its NUMA node ("NUMA Affinity"); "-" when the matrix gives none
	Links []string `json:"links"` // its link to each GPU of GPUTopology.GPUs, in order; "X" to itself
}

// MaxTopologyGPUs bounds the GPUs of a reported topology (the script weighs sets of at most 16).
const MaxTopologyGPUs = 64

// MaxTopologyResources bounds the resources of a report's Topology.
const MaxTopologyResources = 8

var (
	topologyLinkRe  = regexp.MustCompile(`^(NV[0-9]{1,3}|PIX|PXB|PHB|NODE|SYS|SOC)$`)
	topologyIndexRe = regexp.MustCompile(`^[0-9]{1,3}$`)
	topologyNUMARe  = regexp.MustCompile(`^(-|[0-9]{1,4})$`)
)

// IsTopologyLink says whether s is a link of the matrix between two GPUs as nvidia-smi topo -m names
// it: NV# (NVLink, NVSwitch), PIX, PXB, PHB, NODE, SYS (SOC: older drivers' SYS).
func IsTopologyLink(s string) bool { return topologyLinkRe.MatchString(s) }

// Check says what is wrong with t (a report's, so from a process the AM does not trust to be well
// formed): a square matrix of 2 to MaxTopologyGPUs distinct GPUs, known links, X on the diagonal only.
func (t GPUTopology) Check() error {
	if !IsTopologyLink(t.Link) || (t.Best != "" && !IsTopologyLink(t.Best)) {
		return fmt.Errorf("link %.20q / best %.20q: want NV#, PIX, PXB, PHB, NODE or SYS", t.Link, t.Best)
	}
	n := len(t.GPUs)
	if n < 2 || n > MaxTopologyGPUs {
		return fmt.Errorf("%d GPUs; want 2 to %d", n, MaxTopologyGPUs)
	}
	seen := make(map[string]bool, n)
	for i, g := range t.GPUs {
		if !topologyIndexRe.MatchString(g.Index) || !topologyNUMARe.MatchString(g.NUMA) || seen[g.Index] || len(g.Links) != n {
			return fmt.Errorf("GPU %d: want a distinct index (0-999), a NUMA node or -, and %d links", i+1, n)
		}
		seen[g.Index] = true
		for j, l := range g.Links {
			if (i == j) != (l == "X") || (i != j && !IsTopologyLink(l)) {
				return fmt.Errorf("GPU %s: link %.20q at %d", g.Index, l, j+1)
			}
		}
	}
	return nil
}
