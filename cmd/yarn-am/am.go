package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/cli"
)

var amUsage = usage("am")

func init() {
	register(&command{name: "am", summary: "the ApplicationMaster (run by YARN in the AM container)", usage: amUsage, run: runAM})
}

func runAM(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("am", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f am.ProcessFlags
	var defines cli.Defines
	fs.StringVar(&f.JobFile, "job", "", "")
	fs.Func("flink-conf", "", cli.Path(&f.ResourceConf))
	fs.Var(&defines, "D", "")
	fs.BoolVar(&f.Service, "service", false, "")
	fs.StringVar(&f.Driver, "driver", "", "")
	fs.DurationVar(&f.HeartbeatFast, "heartbeat-fast", am.DefaultHeartbeatFast, "")
	fs.DurationVar(&f.HeartbeatSlow, "heartbeat-slow", am.DefaultHeartbeatSlow, "")
	fs.IntVar(&f.LaunchWorkers, "launch-workers", am.DefaultLaunchWorkers, "")
	fs.IntVar(&f.FinishedHistory, "finished-history", am.DefaultFinishedHistory, "")
	fs.IntVar(&f.MaxEventStreams, "max-event-streams", web.DefaultMaxEventStreams, "")
	fs.IntVar(&f.MaxEventStreamsPerClient, "max-event-streams-per-client", web.DefaultMaxEventStreamsPerClient, "")
	f.Policy.Register(fs)
	if err := fs.Parse(cli.SplitJoinedDefines(args)); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(stdout, strings.TrimSpace(amUsage))
			return 0
		}
		return usageError(stderr, "am", cli.FlagError(fs, err))
	}
	if err := f.Check(fs.Args()); err != nil {
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
		return contract.ExitUsage
	}
	// submit passes the -D overrides in the environment, not on this command line (contract.EnvDefines).
	var err error
	f.Defines, err = contract.TakeDefines(defines)
	var opts am.ProcessOptions
	if err == nil {
		opts, err = f.Options()
	}
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
		return contract.ExitInvalidInput
	}
	setLogLevel(stderr, logrus.InfoLevel)
	defer am.LogPeakRSS()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	code, err := am.RunProcess(ctx, opts)
	if err != nil {
		logrus.WithError(err).Error("yarn-am am: failed")
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
	}
	return code
}
