package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/am/driverclient"
	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/cli"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

var stopUsage = usage("stop")

// defaultStopTimeout is --timeout's default: keeping a large state takes minutes.
const defaultStopTimeout = 5 * time.Minute

func init() {
	register(&command{
		name:    "stop",
		summary: "stop a running application gracefully, keeping its state (a Flink job's savepoint)",
		usage:   stopUsage,
		run:     runStop,
	})
}

func runStop(args []string, stdout, stderr io.Writer) int {
	const name = "stop"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	timeout := cli.RegisterTimeout(fs, defaultStopTimeout)
	// The flag's name is the interface's, after Flink's answer to a stop (help/stop.txt).
	dir := fs.String("savepoint", "", "where the framework keeps the state")
	fc, code := frameworkCommand(fs, args, name, stopUsage, "--savepoint", dir, timeout, stdout, stderr)
	if fc == nil {
		return code
	}
	defer fc.close()
	res, err := fc.c.Stop(fc.ctx, *dir, client.AMBound(time.Duration(*timeout)))
	if err != nil {
		return fail(stderr, name, err, 0)
	}
	printKept(stdout, res.What, res.Result)
	switch err := client.WaitEnded(fc.ctx, fc.rm, fc.appID, fc.id, stdout); {
	case errors.Is(err, client.ErrEndedOtherwise):
		return 1
	case err != nil:
		return fail(stderr, name, fmt.Errorf("the state was kept (%s), but %w", client.Sanitize(res.Result), err), 0)
	}
	return 0
}

// frameworkCall is what stop and savepoint ask an application's framework through: the HTTPS client
// of its AM with the application's secret, and the ResourceManager's client, within --timeout (ctx).
type frameworkCall struct {
	c     *driverclient.Client
	rm    *yarnrpc.ApplicationClient
	id    string // the application id as the user wrote it
	appID *hadooppb.ApplicationIdProto
	ctx   context.Context
	close func()
}

// frameworkCommand parses the command line of stop and savepoint (APP_ID, the directory flag dirFlag,
// --timeout, the login flags) and opens their frameworkCall; nil and the exit code when there is none.
func frameworkCommand(fs *flag.FlagSet, args []string, name, usage, dirFlag string, dir *string, timeout *cli.Timeout, stdout, stderr io.Writer) (*frameworkCall, int) {
	var lf loginFlags
	lf.register(fs)
	pos, code, ok := parseCommand(fs, args, name, usage, 1, "one application id", stdout, stderr)
	if !ok {
		return nil, code
	}
	appID, err := yarnrpc.ParseApplicationID(pos[0])
	if err == nil {
		err = cli.CheckDir(dirFlag, *dir)
	}
	if d := time.Duration(*timeout); err == nil && d > contract.MaxStopTimeout {
		err = fmt.Errorf("--timeout %s: at most %s (a state that takes longer to keep is better kept with the framework's own tools)", d, contract.MaxStopTimeout)
	}
	if err != nil {
		return nil, usageError(stderr, name, err)
	}
	secret, ca, err := client.LoadAppSecret(pos[0])
	if err != nil {
		return nil, fail(stderr, name, err, contract.ExitInvalidInput)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout))
	_, rm, code := connect(lf, name, stderr)
	if code != 0 {
		cancel()
		return nil, code
	}
	c, _, err := client.AMClient(ctx, rm, appID, pos[0], secret, ca)
	if err != nil {
		cancel()
		rm.Close()
		return nil, fail(stderr, name, err, 0)
	}
	return &frameworkCall{c: c, rm: rm, id: pos[0], appID: appID, ctx: ctx, close: func() { cancel(); rm.Close() }}, 0
}

// printKept prints what a framework kept for stop and savepoint: "<what>: <where>", its own name for
// the state (a Flink job's "Savepoint") or "State".
func printKept(stdout io.Writer, what, where string) {
	if what == "" {
		what = "State"
	}
	if len(what) > 40 { // a name, not a message
		what = what[:40]
	}
	fmt.Fprintf(stdout, "%s: %s\n", client.Sanitize(what), client.Sanitize(where))
}
