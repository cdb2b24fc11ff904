package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
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
	_, rm, err := client.Connect(lf.options(), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am cluster: %v\n", err)
		return 1
	}
	defer rm.Close()
	v, err := client.ReadCluster(ctx, rm)
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
	client.PrintCluster(stdout, v)
	return 0
}
