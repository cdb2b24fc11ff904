package gpu

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/text"
)

// TopologyLinePrefix starts the stdout line in which the built-in NVIDIA script says what GPU topology it
// read (`nvidia-smi topo -m`) when it chose a set of more than one GPU:
// topology=<link>[/<best>];<index>:<numa>:<cell>,<cell>,...;... (docs/gpus.md#topology-connected-sets).
const TopologyLinePrefix = "topology="

// maxTopologyGPUs bounds the GPUs of a topology line.
const maxTopologyGPUs = contract.MaxTopologyGPUs

var (
	topoCellRe  = regexp.MustCompile(`^(X|NV[0-9]{1,3}|PIX|PXB|PHB|NODE|SYS|SOC)$`)
	topoIndexRe = regexp.MustCompile(`^[0-9]{1,3}$`)
	topoNUMARe  = regexp.MustCompile(`^(-|[0-9]{1,4})$`)
)

// Topology is the GPU topology matrix a built-in script read, the link of the set it chose and, when
// that set is worse, the link of the node's best set: what the launcher reports to the AM.
type Topology = contract.GPUTopology

// TopologyGPU is one row of the matrix.
type TopologyGPU = contract.GPUTopologyRow

// ParseTopologyLine parses the value of a topology= line (without the prefix). Anything that is not a
// square matrix of known link names is an error quoting a bounded prefix of the value.
func ParseTopologyLine(v string) (Topology, error) {
	bad := func(why string, a ...any) (Topology, error) {
		return Topology{}, fmt.Errorf("topology line %s: %s", text.Quote(v), fmt.Sprintf(why, a...))
	}
	parts := strings.Split(v, ";")
	var t Topology
	var hasBest bool
	t.Link, t.Best, hasBest = strings.Cut(parts[0], "/")
	links := []string{t.Link}
	if hasBest {
		links = append(links, t.Best)
	}
	for _, l := range links {
		if !topoCellRe.MatchString(l) || l == "X" {
			return bad("the link %s is none of NV#, PIX, PXB, PHB, NODE, SYS", text.Quote(l))
		}
	}
	rows := parts[1:]
	if len(rows) < 2 || len(rows) > maxTopologyGPUs {
		return bad("%d GPUs; want 2 to %d", len(rows), maxTopologyGPUs)
	}
	seen := map[string]bool{}
	for i, r := range rows {
		f := strings.SplitN(r, ":", 3)
		if len(f) != 3 || !topoIndexRe.MatchString(f[0]) || !topoNUMARe.MatchString(f[1]) || seen[f[0]] {
			return bad("GPU %d is not <distinct index>:<NUMA node or ->:<links>", i+1)
		}
		seen[f[0]] = true
		links := strings.Split(f[2], ",")
		if len(links) != len(rows) {
			return bad("GPU %s has %d links, not %d", f[0], len(links), len(rows))
		}
		for j, l := range links {
			if !topoCellRe.MatchString(l) || (l == "X") != (i == j) {
				return bad("GPU %s has the link %s at %d", f[0], text.Quote(l), j+1)
			}
		}
		t.GPUs = append(t.GPUs, TopologyGPU{Index: f[0], NUMA: f[1], Links: links})
	}
	return t, nil
}

// TopologyLines is the matrix as yarn-am discover prints it: a header of GPU columns and the NUMA node,
// then one row per GPU.
func TopologyLines(t Topology) []string {
	cells := make([][]string, 0, len(t.GPUs)+1)
	head := []string{""}
	for _, g := range t.GPUs {
		head = append(head, "GPU"+g.Index)
	}
	cells = append(cells, append(head, "NUMA"))
	for _, g := range t.GPUs {
		cells = append(cells, append(append([]string{"GPU" + g.Index}, g.Links...), g.NUMA))
	}
	width := 0
	for _, r := range cells {
		for _, c := range r {
			width = max(width, len(c))
		}
	}
	lines := make([]string, len(cells))
	for i, r := range cells {
		var b strings.Builder
		for j, c := range r {
			if j > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c + strings.Repeat(" ", width-len(c)))
		}
		lines[i] = strings.TrimRight(b.String(), " ")
	}
	return lines
}
