package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/internal/cli"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

var followUsage = usage("follow")

func init() {
	register(&command{
		name:    "follow",
		summary: "re-attach to a running application: its state, counts and events until it ends",
		usage:   followUsage,
		run:     runFollow,
	})
}

func runFollow(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("follow", flag.ContinueOnError)
	killOnInterrupt := fs.Bool("kill-on-interrupt", false, "kill the application on Ctrl-C")
	var lf loginFlags
	lf.register(fs)
	pos, code, ok := parseCommand(fs, args, "follow", followUsage, 1, "one application id", stdout, stderr)
	if !ok {
		return code
	}
	appID, err := yarnrpc.ParseApplicationID(pos[0])
	if err != nil {
		return usageError(stderr, "follow", err)
	}
	followCtx, stopFollow := context.WithCancel(context.Background())
	defer stopFollow()
	interrupted, stopWatch := cli.OnInterrupt(stopFollow)
	defer stopWatch()
	sess, rm, code := connect(lf, "follow", stderr)
	if code != 0 {
		return code
	}
	defer rm.Close()
	// One report first, so that an unknown id is a clear error and not thirty silent retries.
	ctx, cancel := context.WithTimeout(followCtx, time.Minute)
	_, err = client.Report(ctx, rm, appID, pos[0])
	cancel()
	if err != nil {
		return fail(stderr, "follow", err, 0)
	}
	fmt.Fprintf(stdout, "following %s (Ctrl-C stops following; the application keeps running)\n", yarnrpc.FormatApplicationID(appID))
	return sess.FollowToEnd(followCtx, "follow", rm, appID, interrupted, *killOnInterrupt, stdout, stderr)
}
