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

const discoverUsage = `Usage: yarn-am discover [-f job.toml] [--flink-conf FILE] [-D key=value]... [--json] [-v]

Validates the external-resource configuration, runs the configured drivers (GPU discovery scripts) on
this machine and prints what a worker started by 'yarn-am launch' would get: the infos of every
resource and the environment variables; for more than one GPU also the topology the built-in NVIDIA
script read (nvidia-smi topo -m) and the worst link between the chosen GPUs. Use it to debug a
discovery script or a configuration before submitting. GPUs claimed in coordination mode are
released again before it exits; the built-in discovery scripts are written to a temporary directory,
not the current one.

Flags:
  -f FILE             job file (job.toml) with the external-resource keys
  --flink-conf FILE   flink-conf.yaml / config.yaml with the external-resource keys
  -D key=value        set one configuration key; repeatable; wins over both files (-Dkey=value works too)
  --json              print exactly the content of the external-resources.json a worker would get
  -v                  log what the drivers do (to stderr)

Exit codes: 0 discovery succeeded; 1 discovery failed (the reason is printed); 2 usage (flags,
arguments); 3 invalid configuration (the problems are printed: the first 20, then how many more).`

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
