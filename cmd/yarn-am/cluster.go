package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

func init() {
	register(&command{
		name:    "cluster",
		summary: "show the cluster's NodeManagers and their resources (memory, vcores, GPUs, FPGAs)",
		usage: `Usage: yarn-am cluster [--json] [--timeout D]

Connects to the ResourceManager named by the Hadoop configuration in $HADOOP_CONF_DIR (core-site.xml,
yarn-site.xml; HA RMs are tried in turn) and prints the NodeManager counts, the resource types the RM
knows, and every NodeManager with its state, containers and used/total amount of each resource type.

Flags:
  --json        print one JSON document instead of the table
  --timeout D   give up after this long (default 30s)
` + loginUsage,
		run: runCluster,
	})
}

type clusterView struct {
	RM            string          `json:"resourceManager"`
	NodeManagers  int32           `json:"nodeManagers"`
	Active        int32           `json:"active"`
	Lost          int32           `json:"lost"`
	Unhealthy     int32           `json:"unhealthy"`
	ResourceTypes []string        `json:"resourceTypes"`
	Nodes         []clusterNodeVw `json:"nodes"`
}

type clusterNodeVw struct {
	Node       string           `json:"node"`
	Rack       string           `json:"rack"`
	State      string           `json:"state"`
	Containers int32            `json:"containers"`
	Capability map[string]int64 `json:"capability"`
	Used       map[string]int64 `json:"used"`
	Health     string           `json:"health,omitempty"`
}

func runCluster(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	timeout := fs.Duration("timeout", 30*time.Second, "overall timeout")
	var lf loginFlags
	lf.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	v, err := readCluster(ctx, &lf, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am cluster: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
		return 0
	}
	printCluster(stdout, v)
	return 0
}

func readCluster(ctx context.Context, lf *loginFlags, stderr io.Writer) (*clusterView, error) {
	_, rm, err := client.Connect(lf.options(), stderr)
	if err != nil {
		return nil, err
	}
	defer rm.Close()
	m, err := rm.GetClusterMetrics(ctx)
	if err != nil {
		return nil, err
	}
	v := &clusterView{RM: rm.Active(), NodeManagers: m.GetNumNodeManagers(), Active: m.GetNumActiveNms(),
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
		v.Nodes = append(v.Nodes, clusterNodeVw{
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

func printCluster(w io.Writer, v *clusterView) {
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d", n.Node, n.Rack, n.State, n.Containers)
		for _, t := range append([]string{"memory-mb", "vcores"}, extra...) {
			fmt.Fprintf(tw, "\t%d/%d", n.Used[t], n.Capability[t])
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\n(used/total per node)")
}
