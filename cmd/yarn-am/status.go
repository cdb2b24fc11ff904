package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

var statusUsage = usage("status")

func init() {
	register(&command{
		name:    "status",
		summary: "show an application: the RM's report and the AM's containers with their GPUs",
		usage:   statusUsage,
		run:     runStatus,
	})
}

func runStatus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	timeout := registerTimeout(fs)
	var lf loginFlags
	lf.register(fs)
	pos, code, ok := parseCommand(fs, args, "status", statusUsage, 1, "one application id", stdout, stderr)
	if !ok {
		return code
	}
	appID, err := yarnrpc.ParseApplicationID(pos[0])
	if err != nil {
		return usageError(stderr, "status", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout))
	defer cancel()
	_, rm, code := connect(lf, "status", stderr)
	if code != 0 {
		return code
	}
	defer rm.Close()
	r, err := client.Report(ctx, rm, appID, pos[0])
	if err != nil {
		return fail(stderr, "status", err, 0)
	}
	client.PrintStatus(ctx, stdout, r, *asJSON)
	return 0
}
