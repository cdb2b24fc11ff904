package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/container/launcher"
	"github.com/yarn-am/yarn-am/contract"
)

var discoverUsage = usage("discover")

func init() {
	register(&command{
		name:    "discover",
		summary: "run the resource drivers here and print what a worker would get",
		usage:   discoverUsage,
		run:     runDiscover,
	})
}

func runDiscover(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("discover", flag.ContinueOnError)
	var f extResFlags
	f.register(fs)
	asJSON := fs.Bool("json", false, "print external-resources.json")
	verbose := fs.Bool("v", false, "verbose")
	if _, code, ok := parseCommand(fs, args, "discover", discoverUsage, 0, "", stdout, stderr); !ok {
		return code
	}
	lvl := logrus.WarnLevel
	if *verbose {
		lvl = logrus.DebugLevel
	}
	setLogLevel(stderr, lvl)
	cfg, drivers, ok := launcher.LoadResources(f.sources(), "yarn-am discover", stderr)
	if !ok {
		return contract.ExitInvalidInput
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := launcher.DiscoverHere(ctx, cfg, drivers, *asJSON, stdout); err != nil {
		fmt.Fprintf(stderr, "yarn-am discover: %v\n", err)
		return 1
	}
	return 0
}
