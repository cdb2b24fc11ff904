package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
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
	fs.SetOutput(io.Discard)
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
	interrupted, stopWatch := onInterrupt(stopFollow)
	defer stopWatch()
	sess, rm, code := connect(lf, "follow", stderr)
	if code != 0 {
		return code
	}
	defer rm.Close()
	// One report first, so that an unknown id is a clear error and not thirty silent retries.
	ctx, cancel := context.WithTimeout(followCtx, time.Minute)
	_, code, ok = appReport(ctx, rm, appID, "follow", pos[0], stderr)
	cancel()
	if !ok {
		return code
	}
	fmt.Fprintf(stdout, "following %s (Ctrl-C stops following; the application keeps running)\n", yarnrpc.FormatApplicationID(appID))
	return followToEnd("follow", sess, rm, appID, followCtx, interrupted, *killOnInterrupt, stdout, stderr)
}

// followToEnd follows an application until it ends or the user interrupts (interrupted closed), as
// submit and follow do, and returns the command's exit code: 0 SUCCEEDED, 1 ended otherwise or lost,
// 130 interrupted. With killOnInterrupt an interrupt kills the application and waits for it.
func followToEnd(name string, sess *client.Session, rm *yarnrpc.ApplicationClient, appID *hadooppb.ApplicationIdProto,
	followCtx context.Context, interrupted <-chan struct{}, killOnInterrupt bool, stdout, stderr io.Writer) int {
	id := yarnrpc.FormatApplicationID(appID)
	// As the owner where this machine holds the application's secret: the failed workers' stderr tails.
	res := client.Follow(followCtx, rm, appID, sess.OwnerReader(id), stdout)
	select {
	case <-interrupted:
		if killOnInterrupt {
			fmt.Fprintf(stdout, "interrupted: killing %s\n", id)
			ctx, c := context.WithTimeout(context.Background(), 2*time.Minute)
			defer c()
			if err := sess.KillAndWait(ctx, rm, appID, stdout); err != nil {
				fmt.Fprintf(stderr, "yarn-am %s: %v\n", name, err)
				return 1
			}
			return contract.ExitInterrupted
		}
		fmt.Fprintf(stdout, "\nstopped following %s; it keeps running.\n  follow it again:  yarn-am follow %s\n  kill it:          yarn-am kill %s\n", id, id, id)
		return contract.ExitInterrupted
	default:
	}
	if res.Err != nil {
		fmt.Fprintf(stderr, "yarn-am %s: following %s: %v\n  follow it again with: yarn-am follow %s\n", name, id, res.Err, id)
		return 1
	}
	// An application that ended without its AM ever running (rejected, AM container failed) leaves
	// its staging directory behind: remove it.
	cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
	defer ccancel()
	if err := sess.EnsureStagingGone(cctx, sess.User, id, stdout, 3*time.Second, true); err != nil {
		fmt.Fprintf(stderr, "yarn-am %s: %v\n", name, err)
	}
	if res.Succeeded() {
		fmt.Fprintf(stdout, "%s %s\n", client.Stamp(), res.Outcome())
		return 0
	}
	fmt.Fprintf(stderr, "yarn-am %s: %s\n", name, res.Outcome())
	return 1
}

// onInterrupt watches for SIGINT and SIGTERM until stop is called: the first one closes interrupted
// and calls each of stops (cancelling what is under way). One watch for a command's whole run
// (resetting and registering again would leave SIGINT ignored in a process started in the background).
func onInterrupt(stops ...func()) (interrupted <-chan struct{}, stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	in, done := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-sigs:
			close(in)
			for _, s := range stops {
				s()
			}
		case <-done:
		}
	}()
	var once sync.Once
	return in, func() { once.Do(func() { signal.Stop(sigs); close(done) }) }
}
