package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/yarnrpc"
)

var killUsage = usage("kill")

func init() {
	register(&command{
		name:    "kill",
		summary: "kill an application and remove its staging directory",
		usage:   killUsage,
		run:     runKill,
	})
}

func runKill(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kill", flag.ContinueOnError)
	timeout := registerTimeout(fs)
	var lf loginFlags
	lf.register(fs)
	pos, code, ok := parseCommand(fs, args, "kill", killUsage, 1, "one application id", stdout, stderr)
	if !ok {
		return code
	}
	appID, err := yarnrpc.ParseApplicationID(pos[0])
	if err != nil {
		return usageError(stderr, "kill", err)
	}
	sess, rm, code := connect(lf, "kill", stderr)
	if code != 0 {
		return code
	}
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout))
	defer cancel()
	if err := sess.KillAndWait(ctx, rm, appID, stdout); err != nil {
		return fail(stderr, "kill", err, 0)
	}
	return 0
}
