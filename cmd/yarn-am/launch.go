package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/container/launcher"
	"github.com/yarn-am/yarn-am/contract"
	_ "github.com/yarn-am/yarn-am/gpu" // registers the gpu driver (and Flink's GPUDriverFactory alias)
	"github.com/yarn-am/yarn-am/internal/cli"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/resources"
)

var launchUsage = usage("launch")

func init() {
	register(&command{
		name:    "launch",
		summary: "run the resource drivers, then the worker (inside a container)",
		usage:   launchUsage,
		run:     runLaunch,
	})
}

// extResFlags are the flags that select the external-resource configuration (launch, discover).
type extResFlags struct {
	jobFile      string
	resourceConf string
	defines      cli.Defines
}

func (f *extResFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.jobFile, "f", "", "job file (job.toml)")
	fs.Func("flink-conf", "flink-conf.yaml / config.yaml", cli.Path(&f.resourceConf))
	fs.Var(&f.defines, "D", "key=value (repeatable)")
}

// sources reads the job file's external-resource keys (a job file that cannot be read is a problem
// LoadResources reports with the rest).
func (f *extResFlags) sources() resources.Sources {
	src := resources.Sources{ResourceConf: f.resourceConf, Overrides: f.defines}
	if f.jobFile != "" {
		src.Job = jobfile.ReadResourceKeys(f.jobFile)
	}
	return src
}

// logTimeFormat is the time of the AM's and the launcher's log lines: RFC 3339 with milliseconds.
const logTimeFormat = "2006-01-02T15:04:05.000Z07:00"

func setLogLevel(stderr io.Writer, def logrus.Level) {
	logrus.SetOutput(stderr)
	// Milliseconds in the log's times (a terminal keeps logrus's own short form): the AM's and the
	// workers' start is measured in them (the Flink row's waterfall,
	// testdata/bench/README.md#the-waterfall); logrus's default is whole seconds.
	logrus.SetFormatter(&logrus.TextFormatter{TimestampFormat: logTimeFormat})
	lvl := def
	s := os.Getenv(contract.EnvLogLevel)
	if s != "" {
		if err := jobfile.CheckLogLevel(s); err != nil {
			// A worker or the AM is not stopped for its log level; the warning says which level is in
			// effect instead (check and submit refuse the value: TestBadInputs).
			fmt.Fprintf(stderr, "yarn-am: warning: %v; logging at %s\n", err, def)
		} else if l, err := logrus.ParseLevel(s); err == nil {
			lvl = l
		}
	}
	logrus.SetLevel(lvl)
}

func runLaunch(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("launch", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f extResFlags
	f.register(fs)
	var reportURL string
	fs.StringVar(&reportURL, "report-url", "", "")
	if err := fs.Parse(cli.SplitJoinedDefines(args)); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(stdout, strings.TrimSpace(launchUsage))
			return 0
		}
		fmt.Fprintf(stderr, "yarn-am launch: %v\nRun 'yarn-am help launch' for usage.\n", cli.FlagError(fs, err))
		return contract.LauncherConfigError
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "yarn-am launch: no worker command; usage: yarn-am launch [flags] -- CMD [ARGS...]")
		return contract.LauncherConfigError
	}
	setLogLevel(stderr, logrus.InfoLevel)
	// The AM passes the -D overrides in the environment, not on this command line (contract.EnvDefines).
	defines, err := contract.TakeDefines(f.defines)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am launch: %v\n", err)
		return contract.LauncherConfigError
	}
	f.defines = defines
	cfg, drivers, ok := launcher.LoadResources(f.sources(), "yarn-am launch", stderr)
	if !ok {
		return contract.LauncherConfigError
	}
	return launcher.RunInContainer(context.Background(), cfg, drivers, reportURL, argv, os.Stdin, stdout, stderr)
}
