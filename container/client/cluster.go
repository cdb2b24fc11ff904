package client

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/yarn-am/yarn-am/yarnrpc"
)

// ClusterView is what `yarn-am cluster` shows (and prints as JSON).
type ClusterView struct {
	RM            string        `json:"resourceManager"`
	NodeManagers  int32         `json:"nodeManagers"`
	Active        int32         `json:"active"`
	Lost          int32         `json:"lost"`
	Unhealthy     int32         `json:"unhealthy"`
	ResourceTypes []string      `json:"resourceTypes"`
	Nodes         []ClusterNode `json:"nodes"`
}

// ClusterNode is one NodeManager of a ClusterView.
type ClusterNode struct {
	Node       string           `json:"node"`
	Rack       string           `json:"rack"`
	State      string           `json:"state"`
	Containers int32            `json:"containers"`
	Capability map[string]int64 `json:"capability"`
	Used       map[string]int64 `json:"used"`
	Health     string           `json:"health,omitempty"`
}

// ReadCluster asks the RM for its metrics, resource types and every node.
func ReadCluster(ctx context.Context, rm *yarnrpc.ApplicationClient) (*ClusterView, error) {
	m, err := rm.GetClusterMetrics(ctx)
	if err != nil {
		return nil, err
	}
	v := &ClusterView{RM: rm.Active(), NodeManagers: m.GetNumNodeManagers(), Active: m.GetNumActiveNms(),
		Lost: m.GetNumLostNms(), Unhealthy: m.GetNumUnhealthyNms()}
	types, err := rm.GetResourceTypeInfo(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		v.ResourceTypes = append(v.ResourceTypes, t.GetName())
	}
	nodes, err := rm.GetClusterNodes(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		v.Nodes = append(v.Nodes, ClusterNode{
			Node:       yarnrpc.NodeAddress(n.GetNodeId()),
			Rack:       n.GetRackName(),
			State:      strings.TrimPrefix(n.GetNodeState().String(), "NS_"),
			Containers: n.GetNumContainers(),
			Capability: yarnrpc.ResourceAmounts(n.GetCapability()),
			Used:       yarnrpc.ResourceAmounts(n.GetUsed()),
			Health:     n.GetHealthReport(),
		})
	}
	sort.Slice(v.Nodes, func(i, j int) bool { return v.Nodes[i].Node < v.Nodes[j].Node })
	return v, nil
}

// PrintCluster prints the cluster: counts, resource types, and each node's used/total amounts.
func PrintCluster(w io.Writer, v *ClusterView) {
	fmt.Fprintf(w, "ResourceManager %s: %d NodeManagers (%d active, %d lost, %d unhealthy)\n",
		v.RM, v.NodeManagers, v.Active, v.Lost, v.Unhealthy)
	fmt.Fprintf(w, "Resource types: %s\n\n", strings.Join(v.ResourceTypes, ", "))
	extra := []string{}
	for _, t := range v.ResourceTypes {
		if t != "memory-mb" && t != "vcores" {
			extra = append(extra, t)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "NODE\tRACK\tSTATE\tCONTAINERS\tMEMORY-MB\tVCORES")
	for _, t := range extra {
		fmt.Fprintf(tw, "\t%s", strings.ToUpper(t))
	}
	fmt.Fprintln(tw)
	for _, n := range v.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d", Cell(n.Node), Cell(n.Rack), Cell(n.State), n.Containers)
		for _, t := range append([]string{"memory-mb", "vcores"}, extra...) {
			fmt.Fprintf(tw, "\t%d/%d", n.Used[t], n.Capability[t])
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\n(used/total per node)")
}
