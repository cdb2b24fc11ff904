package main

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/yarn-am/yarn-am/container/logs"
	"github.com/yarn-am/yarn-am/internal/cli"
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
	var filter logs.Filter
	fs.Func("container", "one container", cli.NonEmpty(&filter.Container, "a container id"))
	fs.BoolVar(&filter.AM, "am", false, "the AM's container")
	fs.Func("file", "one log file", cli.NonEmpty(&filter.File, "a log file name, such as stdout"))
	follow := fs.Bool("follow", false, "follow")
	fs.IntVar(&filter.Tail, "tail", 0, "last N lines")
	timeout := registerTimeout(fs)
	var lf loginFlags
	lf.register(fs)
	pos, code, ok := parseCommand(fs, args, "logs", logsUsage, 1, "one application id", stdout, stderr)
	if !ok {
		return code
	}
	appID, err := yarnrpc.ParseApplicationID(pos[0])
	if err == nil {
		err = filter.Check(appID, pos[0])
	}
	if err != nil {
		return usageError(stderr, "logs", err)
	}
	sess, rm, code := connect(lf, "logs", stderr)
	if code != 0 {
		return code
	}
	defer rm.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = logs.Run(ctx, sess, rm, logs.Options{App: appID, Filter: filter, Follow: *follow, Out: stdout, Notes: stderr, Timeout: time.Duration(*timeout)})
	return logs.ExitCode(ctx, stderr, pos[0], err)
}
