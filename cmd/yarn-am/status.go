package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

const statusUsage = `Usage: yarn-am status APP_ID [--json] [--timeout D]

Shows an application from the ResourceManager's report (state, final status, queue, tracking URL,
diagnostics) and, while its ApplicationMaster runs, the AM's own view from its /api/v1/status: the
container counts (requested, allocated, running, completed, failed) and every container with its
node, state, resources and resource infos (the GPU indexes its launcher reported); for a [flink] job
also the JobManager's web UI (Flink UI). Where the launchers sample GPUs
(taskexecutor.gpu-sample-interval), a "GPU time:" line gives the job's GPU-hours reserved, the mean
utilisation of every sample and the share idle (under 5 %), and a GPU UTIL column each container's
mean utilisation per GPU, e.g. 93% or 93%,0%.

Flags:
  --json        print one JSON document {"report": {...}, "am": {...}} instead of text
  --timeout D   give up after this long (default 2m; a duration with a unit: 30s, 2m)
` + loginUsage + `

An application the ResourceManager does not know exits 5.
` + exitCodesUsage

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
