package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
)

const clusterUsage = `Usage: yarn-am cluster [--json] [--timeout D]

Connects to the ResourceManager named by the Hadoop configuration in $HADOOP_CONF_DIR (core-site.xml,
yarn-site.xml; HA RMs are tried in turn) and prints the NodeManager counts, the resource types the RM
knows, and every NodeManager with its state, containers and used/total amount of each resource type.

Flags:
  --json        print one JSON document instead of the table
  --timeout D   give up after this long (default 2m; a duration with a unit: 30s, 2m)
` + loginUsage + `

` + exitCodesUsage

func init() {
	register(&command{
		name:    "cluster",
		summary: "show the cluster's NodeManagers and their resources (memory, vcores, GPUs, FPGAs)",
		usage:   clusterUsage,
		run:     runCluster,
	})
}

func runCluster(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	timeout := registerTimeout(fs)
	var lf loginFlags
	lf.register(fs)
	if _, code, ok := parseCommand(fs, args, "cluster", clusterUsage, 0, "", stdout, stderr); !ok {
		return code
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout))
	defer cancel()
	_, rm, code := connect(lf, "cluster", stderr)
	if code != 0 {
		return code
	}
	defer rm.Close()
	v, err := client.ReadCluster(ctx, rm)
	if err != nil {
		return fail(stderr, "cluster", err, 0)
	}
	client.PrintClusterView(stdout, v, *asJSON)
	return 0
}
