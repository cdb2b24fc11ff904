package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/container/logs"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

const logsUsage = `Usage: yarn-am logs APP_ID [--container ID] [--am] [--file NAME] [--follow] [--tail N] [--timeout D]

Prints the logs of an application's containers, each file under a header
  ==> <container> on <node>: <file> (<size> bytes) <==
Once the application has ended: the aggregated logs the NodeManagers wrote to HDFS
(yarn.log-aggregation-enable=true; yarn.nodemanager.remote-app-log-dir, default /tmp/logs), in the
TFile or indexed (IFile) format and the directory layout of Hadoop 3.1 to 3.4; with aggregation
off, what the NodeManagers still keep (yarn.nodemanager.log.retain-seconds, default 3 hours). While
it runs: the parts its NodeManagers uploaded so far by rolling log aggregation (headers marked
"rolled, aggregated"; [log-aggregation] rolled-include, on by default for a [flink] job), then the
current logs from the NodeManagers' web services. When there are no logs to print it says why
(aggregation off and the logs gone, not aggregated yet, no permission) and what to do.

Flags:
  --container ID         only this container (container_..._<attempt>_<number> of this application)
  --am                   only the ApplicationMaster's container(s)
  --file NAME            only this log file (stdout, stderr, am.stderr, launch_container.sh, ...)
  --follow               keep printing the running containers' new output, like tail -f, until the
                         application ends (with --container: until that container ends); Ctrl-C
                         stops
  --tail N               only the last N lines of each file (with --follow: then the new output);
                         a line keeps its first 64 KiB and the lines kept of a file 32 MiB, and
                         what is left out is said in the output
  --timeout D            give up on each wait for the ResourceManager after this long (default 2m;
                         a duration with a unit: 30s, 2m); printing and --follow are not bounded
` + loginUsage + `

Names in the logs (containers, nodes, files) are printed without terminal control sequences; a
damaged or crafted aggregated file is reported and skipped, within fixed memory bounds.
Exit 1 when there are no logs to print (the reason is printed).
` + exitCodesUsage

func init() {
	register(&command{
		name:    "logs",
		summary: "print (or follow) the logs of an application's containers",
		usage:   logsUsage,
		run:     runLogs,
	})
}

func runLogs(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("logs", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	container := new(string)
	fs.Func("container", "one container", nonEmptyFlag(container, "a container id"))
	am := fs.Bool("am", false, "the AM's container")
	file := new(string)
	fs.Func("file", "one log file", nonEmptyFlag(file, "a log file name, such as stdout"))
	follow := fs.Bool("follow", false, "follow")
	tail := fs.Int("tail", 0, "last N lines")
	timeout := registerTimeout(fs)
	var lf loginFlags
	lf.register(fs)
	pos, code, ok := parseCommand(fs, args, "logs", logsUsage, 1, "one application id", stdout, stderr)
	if !ok {
		return code
	}
	usage := func(format string, a ...any) int {
		return usageError(stderr, "logs", fmt.Errorf(format, text.BoundArgs(a)...))
	}
	appID, err := yarnrpc.ParseApplicationID(pos[0])
	if err != nil {
		return usage("%v", err)
	}
	if *container != "" {
		cid, err := yarnrpc.ParseContainerID(*container)
		if err != nil {
			return usage("--container %s: %v", *container, err)
		}
		if got := cid.GetAppAttemptId().GetApplicationId(); got.GetClusterTimestamp() != appID.GetClusterTimestamp() || got.GetId() != appID.GetId() {
			return usage("--container %s belongs to %s, not to %s", *container, yarnrpc.FormatApplicationID(got), pos[0])
		}
		if *am && !logs.IsAMContainer(*container) {
			return usage("--container %s with --am: that container is not the ApplicationMaster's (number 000001 of an attempt)", *container)
		}
	}
	if *tail < 0 {
		return usage("--tail %d: want a number of lines >= 1 (or 0 for all)", *tail)
	}
	if *file != "" && (*file == "." || *file == ".." || strings.ContainsRune(*file, '/')) {
		return usage("--file %q: want a log file name such as stdout or stderr, without '/'", *file)
	}
	sess, rm, code := connect(lf, "logs", stderr)
	if code != 0 {
		return code
	}
	defer rm.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = logs.Run(ctx, sess, rm, logs.Options{
		App:     appID,
		Filter:  logs.Filter{Container: *container, AM: *am, File: *file, Tail: *tail},
		Follow:  *follow,
		Out:     stdout,
		Notes:   stderr,
		Timeout: time.Duration(*timeout),
	})
	return logsExit(ctx, stderr, pos[0], err)
}

// logsExit prints the outcome of logs.Run and returns its code from the one table
// (docs/running.md#exit-codes): no logs to print 1, an application the ResourceManager does not
// know 5, a cluster that cannot be reached or did not answer within --timeout 4, interrupted 130.
// The message quotes names from the files and the cluster: it is sanitized.
func logsExit(ctx context.Context, stderr io.Writer, app string, err error) int {
	var na *logs.NotAvailableError
	switch {
	case ctx.Err() != nil:
		if err != nil {
			fmt.Fprintf(stderr, "yarn-am logs: %s\n", client.Sanitize(err.Error()))
		}
		return contract.ExitInterrupted
	case err == nil:
		return contract.ExitOK
	case errors.As(err, &na):
		fmt.Fprintf(stderr, "yarn-am logs: %s\n", client.Sanitize(err.Error()))
		return contract.ExitAppFailed
	case errors.Is(err, yarnrpc.ErrApplicationNotFound):
		return unknownApp(stderr, "logs", app)
	}
	fmt.Fprintf(stderr, "yarn-am logs: %s\n", client.Sanitize(err.Error()))
	return exitCode(err)
}
