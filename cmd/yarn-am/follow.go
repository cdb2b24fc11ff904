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

const followUsage = `Usage: yarn-am follow APP_ID [--kill-on-interrupt]

Re-attaches to an application, as an attached 'yarn-am submit' follows it: prints its state and
diagnostics as they change, the AM's container counts and its events (from the AM's event history, so
what happened while nobody followed is shown too), until the application ends. Use it after Ctrl-C
or --detach. An application that has already ended prints its outcome at once.

Flags:
  --kill-on-interrupt   Ctrl-C (SIGINT/SIGTERM) kills the application instead of only detaching
` + loginUsage + `

Exit 0 means the application's final status is SUCCEEDED, 1 that it ended otherwise, 130 that
following was interrupted (the application keeps running unless --kill-on-interrupt), and an
application the ResourceManager does not know exits 5.
` + exitCodesUsage

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
