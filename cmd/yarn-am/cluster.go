package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
)

var clusterUsage = usage("cluster")

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
