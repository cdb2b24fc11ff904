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

var logsUsage = usage("logs")

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
